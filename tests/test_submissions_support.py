"""Shared helpers of the store tests (real specs, real sample data, real DuckDB files), and their own checks."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.submissions import IntakeLimits, SubmissionOutcome, SubmissionRequest, submit

OPENPI_SAMPLES = SAMPLE_SUBMISSIONS_DIR / "openpi"
STRONG = OPENPI_SAMPLES / "strong-model.jsonl"
TEMPLATE = OPENPI_SAMPLES / "template-guesser.jsonl"
NO_CHANGE = OPENPI_SAMPLES / "no-change-baseline.jsonl"
TABLES = (
    "submissions",
    "item_scores",
    "aggregates",
    "status_history",
    "tasks",
    "item_labels",
    "raw_files",
    "teams",
    "team_tokens",
    "quotas",
)


def counts(db: Path) -> dict[str, int]:
    """Rows per table (the failures log excluded: a refusal is supposed to add exactly one row there)."""
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()


def failures(db: Path) -> list[dict[str, object]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cursor = con.execute("SELECT * FROM failures ORDER BY created_at")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()


def query(db: Path, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def submit_openpi(
    db: Path,
    path: Path,
    *,
    team: str | None = "t",
    spec_file: str | Path = "openpi",
    data_root: Path = SAMPLE_DATA_ROOT,
    split: str = "test",
    model: str = "m",
    limits: IntakeLimits | None = None,
    now: datetime | None = None,
    **request: Any,
) -> SubmissionOutcome:
    """Submit ``path`` through intake; ``request`` holds the rest of the SubmissionRequest (token, filename, card, metadata, run_by)."""
    spec, runner = load_task(spec_file)
    asked = SubmissionRequest(split=split, predictions=path, model=model, team=team, **request)
    return submit(asked, spec, runner, data_root=data_root, db_path=db, limits=limits, now=now)


def variant(folder: Path, k: int, base: Path = STRONG) -> Path:
    """A distinct valid OpenPI file: the base plus one extra answer on item k."""
    records = [json.loads(line) for line in base.read_text().splitlines()]
    target = records[k % len(records)]
    target["answers"] = [
        *target["answers"],
        f"state of thing {k} was old before and new afterwards",
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"variant-{k}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def dev_predictions(folder: Path) -> Path:
    """A valid file for the sample dev split: its gold answers, as predictions."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dev-gold.jsonl"
    gold = SAMPLE_DATA_ROOT / "openpi" / "data" / "gold" / "dev" / "id_answers.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": r["id"], "answers": r["answers"]}) + "\n"
            for r in map(json.loads, gold.read_text().splitlines())
        )
    )
    return path


def openpi_spec_variant(folder: Path, *, old: str, new: str, name: str) -> Path:
    """A copy of specs/openpi.spec with one exact text replaced (the task keeps its name)."""
    text = (SPECS_DIR / "openpi.spec").read_text(encoding="utf-8")
    assert old in text, f"specs/openpi.spec no longer contains {old!r}; update this test helper"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.spec"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def hidden_test_spec(folder: Path, split: str = "test") -> Path:
    """specs/openpi.spec with one split hidden (the sample dev split has 4 items, test 22)."""
    # a folder of its own: the task keeps its name, and a task is named after its file
    return openpi_spec_variant(
        folder / f"openpi-hidden-{split}",
        old="splits = [dev, test]",
        new=f"splits = [dev, test]\n    hidden = [{split}]",
        name="openpi",
    )


def test_helpers_build_distinct_valid_files(tmp_path: Path) -> None:
    a, b = variant(tmp_path, 1), variant(tmp_path, 2)
    assert a.read_bytes() != b.read_bytes()
    spec, runner = load_task("openpi")
    gold, _ = runner.gold(SAMPLE_DATA_ROOT, "test")
    records, _ = runner.validate(a, gold)
    assert len(records) == len(gold.items)


def test_hidden_spec_marks_the_test_split_hidden(tmp_path: Path) -> None:
    spec, _ = load_task(hidden_test_spec(tmp_path))
    assert spec.name == "openpi" and spec.data.hidden == ("test",)
