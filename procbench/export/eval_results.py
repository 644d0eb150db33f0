"""``procbench export eval-results``: the board's results as the Hugging Face Hub's ``.eval_results/*.yaml`` files.

A model repository that holds ``.eval_results/<name>.yaml`` (a list of entries: ``dataset: {id, task_id, revision}``,
``value``, ``source: {url, name}``, ``notes``) shows those scores on its page and on the benchmark dataset's
leaderboard (https://huggingface.co/docs/hub/eval-results). The entries are built with the Hub library's own
``EvalResultEntry`` and ``eval_result_entries_to_yaml`` (huggingface_hub >= 1.x), so they read back with its
``parse_eval_result_entries``. Layout::

    <out>/<model>/.eval_results/<task>.yaml   one entry per board (task and split) the model is ranked on

* ``dataset.id``: the Hub dataset the spec's ``fetch`` block names for that split (``hub_repo``, with its ``revision``),
  else ``<dataset-prefix>/<task>`` (``--dataset-prefix``, default ``procbench``: a placeholder to replace by the
  benchmark's dataset on the Hub once it has one). ``dataset.task_id``: the task, ``<task>-<split>`` on a split other
  than ``test`` / ``main``.
* ``value``: the board's primary metric on the whole split, as stored (a fraction where the metric is one).
* ``source``: a paper's row says ``name: "Paper: <citation>"`` with its link (the paper's url, else the spec's url);
  a submitted row names the board (``--source-url``, when given) or carries no source.
* ``notes``: split, metric, the procbench fingerprint and submission id.

Only what the board shows: the ``board`` view (current fingerprint, visible rows), rows with a primary value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.submissions.store import reader

DEFAULT_PREFIX = "procbench"
MAIN_SPLITS = ("test", "main")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """A file or folder name from a model or task name (letters, digits, ``._-``; never empty, never a dot name)."""
    name = _SAFE.sub("-", text).strip("-.")[:100]
    return name or "model"


def dataset_of(
    spec: Mapping[str, Any], task: str, split: str, prefix: str = DEFAULT_PREFIX
) -> tuple[str, str | None]:
    """(Hub dataset id, revision) of a board: the spec's fetch block on the Hub for this split, else ``prefix/task``."""
    for entry in spec.get("fetch") or []:
        if not isinstance(entry, Mapping):
            continue
        splits = entry.get("splits") or []
        if (
            entry.get("hub_repo")
            and entry.get("repo_type", "dataset") == "dataset"
            and (not splits or split in splits)
        ):
            return str(entry["hub_repo"]), (str(entry.get("revision")) or None)
    return f"{prefix.strip('/') or DEFAULT_PREFIX}/{task}", None


def task_id_of(task: str, split: str) -> str:
    return task if split in MAIN_SPLITS else f"{task}-{split}"


@dataclass(frozen=True)
class Written:
    root: Path
    files: dict[str, list[Path]]  # model -> its yaml files
    entries: int


def rows(db: Path, model: str | None = None) -> list[dict[str, Any]]:
    """The board's ranked rows: primary metric, whole split, current fingerprint, visible (the ``board`` view)."""
    sql = """
        SELECT b.submission_id, b.task, b.split, b.model, b.team, b.is_reference, b.metadata_json, b.value, b.paper_url,
               t.fingerprint, t.primary_metric, t.spec_json, b.created_at
        FROM board b JOIN current_tasks t ON t.task = b.task AND t.split = b.split
        WHERE b.slice = '' AND b.metric = t.primary_metric AND b.value IS NOT NULL AND isfinite(b.value)
    """
    params: list[Any] = []
    if model is not None:
        sql += " AND b.model = ?"
        params.append(model)
    with reader(db) as con:
        cursor = con.execute(sql + " ORDER BY b.model, b.task, b.split, b.submission_id", params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r)) for r in cursor.fetchall()]


def entry_of(
    row: Mapping[str, Any], prefix: str = DEFAULT_PREFIX, source_url: str | None = None
) -> Any:
    """The ``EvalResultEntry`` of one board row."""
    from huggingface_hub import EvalResultEntry

    spec = json.loads(row["spec_json"])
    dataset_id, revision = dataset_of(spec, row["task"], row["split"], prefix)
    meta = (
        json.loads(row["metadata_json"] or "{}")
        if isinstance(row.get("metadata_json"), str)
        else {}
    )
    notes = f"procbench {row['task']} / {row['split']}, metric {row['primary_metric']}; fingerprint {str(row['fingerprint'])[:12]}; "
    notes += f"submission {row['submission_id']}"
    if row["is_reference"]:
        citation = str(meta.get("source") or spec.get("benchmark") or row["task"])[:200]
        url = str(row.get("paper_url") or spec.get("url") or "") or None
        return EvalResultEntry(
            dataset_id=dataset_id,
            task_id=task_id_of(row["task"], row["split"]),
            value=float(row["value"]),
            dataset_revision=revision,
            source_url=url,
            source_name=f"Paper: {citation}" if url else None,
            notes=f"reported in the literature ({citation}); {notes}",
        )
    return EvalResultEntry(
        dataset_id=dataset_id,
        task_id=task_id_of(row["task"], row["split"]),
        value=float(row["value"]),
        dataset_revision=revision,
        date=row["created_at"].strftime("%Y-%m-%dT%H:%M:%SZ")
        if row.get("created_at") is not None
        else None,
        source_url=source_url or None,
        source_name="procbench leaderboard" if source_url else None,
        notes=notes,
    )


def write_eval_results(
    db: Path,
    out: Path,
    *,
    model: str | None = None,
    prefix: str = DEFAULT_PREFIX,
    source_url: str | None = None,
) -> Written:
    """Write ``out/<model>/.eval_results/<task>.yaml`` for every model on the board (or only ``model``)."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml

    grouped: dict[str, dict[str, list[Any]]] = {}
    for row in rows(db, model):
        grouped.setdefault(str(row["model"]), {}).setdefault(str(row["task"]), []).append(
            entry_of(row, prefix, source_url)
        )
    files: dict[str, list[Path]] = {}
    count = 0
    folders: dict[str, str] = {}
    for name, tasks in grouped.items():
        folder = safe_name(name)
        while folder in folders.values():  # two models whose names differ only in unsafe characters
            folder += "_"
        folders[name] = folder
        target = out / folder / ".eval_results"
        target.mkdir(parents=True, exist_ok=True)
        for task, entries in tasks.items():
            path = target / f"{safe_name(task)}.yaml"
            path.write_text(
                yaml.safe_dump(
                    eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True
                ),
                encoding="utf-8",
            )
            files.setdefault(name, []).append(path)
            count += len(entries)
    return Written(out, files, count)
