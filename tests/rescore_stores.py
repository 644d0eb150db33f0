"""Stores and data for the re-scoring engine tests (local, processes, Ray, a Ray cluster): the same sample
submissions, the same changed gold, the same comparison of what each engine stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions.intake import SubmissionRequest, submit

TASKS = ("openpi", "paradise-tip")


def sample_store(folder: Path) -> Path:
    """Every OpenPI and PARADISE-tip sample submission of the test split, through intake."""
    db = folder / "store.duckdb"
    for task in TASKS:
        spec, runner = load_task(task)
        for path in sorted((SAMPLE_SUBMISSIONS_DIR / task).iterdir()):
            if not path.name.endswith(".meta.json"):
                submit(
                    SubmissionRequest(
                        split="test", predictions=path, model=path.stem, team=f"team-{path.stem}"
                    ),
                    spec,
                    runner,
                    data_root=SAMPLE_DATA_ROOT,
                    db_path=db,
                )
    return db


def changed_root(folder: Path) -> Path:
    """The sample data with one OpenPI gold answer fewer and one PARADISE label changed: new fingerprints for both."""
    root = folder / "changed"
    shutil.copytree(SAMPLE_DATA_ROOT, root)
    gold = root / "openpi" / "data" / "gold" / "test" / "id_answers.jsonl"
    records = [json.loads(line) for line in gold.read_text().splitlines() if line.strip()]
    target = next(r for r in records if len(r["answers"]) > 1)
    target["answers"] = target["answers"][:-1]
    gold.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = root / "paradise" / "src" / "data" / "tip_test.csv"
    lines = table.read_text().splitlines()
    *head, label = lines[1].rsplit(",", 1)
    lines[1] = ",".join([*head, str((int(label) + 1) % 4)])
    table.write_text("\n".join(lines) + "\n")
    return root


def copy_store(db: Path, name: str | Path) -> Path:
    """A copy of the store and its raw files: at ``name`` when a path, else beside the store under that name."""
    target = name if isinstance(name, Path) else db.with_name(name)
    shutil.copyfile(db, target)
    raw = db.with_name(db.name + ".raw")
    if raw.exists():
        shutil.copytree(raw, target.with_name(target.name + ".raw"))
    return target


def rescored_rows(db: Path) -> tuple[list, list]:
    """Aggregates and item scores of every re-scored copy, keyed by the original's id: what engines must agree on."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        aggregates = con.execute(
            "SELECT s.origin_id, s.fingerprint, a.slice, a.slice_value, a.metric, a.value, a.n_items FROM aggregates a "
            "JOIN submissions s USING (submission_id) WHERE s.origin_id <> s.submission_id ORDER BY ALL"
        ).fetchall()
        items = con.execute(
            "SELECT s.origin_id, i.item_id, i.metric, i.value FROM item_scores i JOIN submissions s USING (submission_id) "
            "WHERE s.origin_id <> s.submission_id ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    return aggregates, items
