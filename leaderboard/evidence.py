"""Gold items and stored predictions behind a comparison (public splits only).

Gold comes from the runner's own gold reader, at a data root whose fingerprint equals the one the
submissions were scored under (the configured data root, else the bundled samples), so the site
never shows gold that differs from what was scored.  Predictions come from the raw prediction file
the store keeps for each submission (``raw_files`` + ``<db>.raw/``, migration 002), read with the
task's own prediction reader; older stores have none.  Callers must not use this on hidden splits.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from procbench.leaderboard import queries
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, resolve_data_root
from procbench.runners.runtime._types import GoldSet
from procbench.runners.runtime.records import record_fields
from procbench.submissions.store import reader


def candidate_roots() -> list[Path]:
    return list(dict.fromkeys([resolve_data_root(None), SAMPLE_DATA_ROOT]))


@functools.lru_cache(maxsize=32)
def matching_root(task: str, split: str, fingerprint: str) -> Path | None:
    """The data root whose gold gives exactly ``fingerprint`` for this task and split, if any."""
    try:
        _, runner = load_task(task)
    except Exception:  # noqa: BLE001 - a spec this site cannot load: no gold to show
        return None
    for root in candidate_roots():
        try:
            _, found = runner.gold(root, split)
        except Exception:  # noqa: BLE001 - missing or unreadable data at that root
            continue
        if found == fingerprint:
            return root
    return None


def gold(task: str, split: str, fingerprint: str) -> GoldSet | None:
    root = matching_root(task, split, fingerprint)
    if root is None:
        return None
    _, runner = load_task(task)
    return runner.gold(root, split)[0]


def _plain(value: Any) -> Any:
    names = record_fields(value)  # a runtime record (ProPara's tracks): shown as its dataclass was
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (frozenset, set)):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "value") and type(value).__module__ != "builtins":  # enums
        return _plain(value.value)
    return value


def as_text(record: Any) -> str:
    """A gold item or a prediction record as readable text.

    A flat record (every field a string, number or nothing: PM-LLM's question and answer) reads field by field,
    its long texts with their own line breaks (as JSON they would be one line of ``\\n`` escapes) and an empty
    field as "–", never ``null``; anything nested is indented JSON.
    """
    if isinstance(record, str):
        return record
    plain = _plain(record)
    if (
        isinstance(plain, Mapping)
        and plain
        and all(v is None or isinstance(v, (str, int, float, bool)) for v in plain.values())
    ):
        return "\n".join(_field(str(k), v) for k, v in plain.items())
    try:
        return json.dumps(plain, indent=1, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(record)


def _field(name: str, value: str | int | float | bool | None) -> str:
    if value is None or value == "":
        return f"{name}: –"
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"{name}:\n{text}\n" if "\n" in text or len(text) > 100 else f"{name}: {text}"


def raw_storage(db: Path) -> bool:
    """Whether this store keeps raw prediction files."""
    return "raw_files" in queries.table_names(db)


@functools.lru_cache(maxsize=64)
def _predictions(
    db: str, submission_id: str, task: str, split: str, fingerprint: str
) -> Mapping[str, Any] | None:
    from procbench.submissions import blobs  # the raw-file store (migration 002)

    with reader(db) as con:
        columns = {
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'submissions'"
            ).fetchall()
        }
        name = "s.filename" if "filename" in columns else "''"
        row = con.execute(
            f"SELECT r.location, r.content_sha256, {name} FROM submissions s JOIN raw_files r ON r.content_sha256 = s.content_sha256 WHERE s.submission_id = ?",
            [submission_id],
        ).fetchone()
    if row is None:
        return None
    location, sha, filename = row
    gold_set = gold(task, split, fingerprint)
    if gold_set is None:
        return None
    _, runner = load_task(task)
    with blobs.materialise(
        blobs.blob_path(Path(db), location), filename or "predictions.jsonl", expected_sha256=sha
    ) as path:
        records, _ = runner.validate(path, gold_set)
    return records


def predictions(
    db: Path, submission_id: str, task: str, split: str, fingerprint: str
) -> Mapping[str, Any] | None:
    """The submission's prediction records by item id, or None when the store has no raw file for it."""
    if not raw_storage(db):
        return None
    try:
        return _predictions(str(db), submission_id, task, split, fingerprint)
    except Exception:  # noqa: BLE001 - a missing or corrupt blob: show scores only
        return None
