"""Eight real processes submit 50 files each to one database at once: all 400 stored exactly once,
while a reader (a thread of the test process, using the site's read path) checks that it never
sees half a submission.

Run as a script, this module is the worker: ``python test_store_concurrency.py DB FOLDER TEAM``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb

from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

WORKERS = 8
FILES_PER_WORKER = 50
SAMPLE = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"


def make_files(folder: Path, n: int, tag: str) -> list[Path]:
    """n distinct valid OpenPI prediction files (one extra answer each) for the sample test split."""
    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(n):
        varied = [dict(r) for r in records]
        target = varied[k % len(varied)]
        target["answers"] = [
            *target["answers"],
            f"state of item {tag}-{k} was before {k} before and after {k} afterwards",
        ]
        path = folder / f"{tag}-{k:03d}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in varied))
        paths.append(path)
    return paths


def _worker(db: Path, folder: Path, team: str) -> None:
    from procbench.api import load_task
    from procbench.submissions import SubmissionRequest, submit

    spec, runner = load_task("openpi")
    files = sorted(folder.glob("*.jsonl"))
    print("ready", flush=True)
    created = 0
    for path in files:
        created += submit(
            SubmissionRequest(split="test", predictions=path, model=path.stem, team=team),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        ).created
    again = submit(
        SubmissionRequest(split="test", predictions=files[0], model=files[0].stem, team=team),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )
    print(json.dumps({"created": created, "resubmit_created": again.created}), flush=True)


class _Reader(threading.Thread):
    """Polls the store like the site does (shared lock, read-only) and records any torn submission."""

    def __init__(self, db: Path):
        super().__init__(daemon=True)
        self.db = db
        self.stop = threading.Event()
        self.reads = 0
        self.torn: list[str] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        from procbench.submissions.store import reader

        try:
            while not self.stop.is_set():
                if self.db.exists():
                    with reader(self.db) as con:
                        self.torn += [t[0] for t in con.execute(TORN).fetchall()]
                    self.reads += 1
                time.sleep(0.05)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


TORN = """
SELECT s.submission_id FROM submissions s
WHERE (SELECT count(*) FROM aggregates a WHERE a.submission_id = s.submission_id) = 0
   OR (SELECT count(DISTINCT item_id) FROM item_scores i WHERE i.submission_id = s.submission_id) <> s.n_items
   OR (SELECT count(*) FROM status_history h WHERE h.submission_id = s.submission_id) <> 3
   OR NOT EXISTS (SELECT 1 FROM raw_files r WHERE r.content_sha256 = s.content_sha256)
"""


def _python(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.Popen(
        [sys.executable, __file__, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=PROJECT_ROOT,
    )


def test_eight_processes_store_every_file_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    folders = []
    for w in range(WORKERS):
        folder = tmp_path / f"w{w}"
        make_files(folder, FILES_PER_WORKER, f"w{w}")
        folders.append(folder)
    watcher = _Reader(db)
    watcher.start()
    workers = [_python(str(db), str(folder), f"team-{w}") for w, folder in enumerate(folders)]
    outputs = []
    try:
        for proc in workers:
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-3000:]
            outputs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        watcher.stop.set()
        watcher.join(timeout=60)
    assert watcher.error is None and watcher.torn == [] and watcher.reads > 0

    assert all(o == {"created": FILES_PER_WORKER, "resubmit_created": False} for o in outputs)
    con = duckdb.connect(str(db), read_only=True)
    try:
        total, distinct_files, distinct_models = con.execute(
            "SELECT count(*), count(DISTINCT content_sha256), count(DISTINCT model) FROM submissions"
        ).fetchone()
        assert total == distinct_files == distinct_models == WORKERS * FILES_PER_WORKER
        assert (
            con.execute("SELECT count(*) FROM raw_files").fetchone()[0]
            == WORKERS * FILES_PER_WORKER
        )
        assert (
            con.execute("SELECT count(*) FROM status_history").fetchone()[0]
            == 3 * WORKERS * FILES_PER_WORKER
        )
        per_team = dict(
            con.execute("SELECT team, count(*) FROM submissions GROUP BY team").fetchall()
        )
        assert per_team == {f"team-{w}": FILES_PER_WORKER for w in range(WORKERS)}
        assert con.execute("SELECT count(*) FROM failures").fetchone()[0] == 0
    finally:
        con.close()
    from procbench.submissions.admin import check_consistency

    assert check_consistency(db) == []


if __name__ == "__main__":
    _worker(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
