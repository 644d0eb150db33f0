"""SIGKILL during submit, at named points and at random moments: the database stays consistent
(no half submission, no orphan rows) and running the same submissions again completes them.

Run as a script, this module is the victim: ``python test_store_crash.py DB FOLDER``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from procbench.paths import PROJECT_ROOT
from procbench.submissions.admin import check_consistency
from procbench.submissions.store import CRASH_ENV
from tests.test_submissions_support import query, submit_openpi, variant

CRASH_POINTS = {  # point -> submissions stored when the process dies there
    "intake.before_store": 0,  # raw file written, no rows yet
    "store.between_inserts": 0,  # mid-transaction: submission and items inserted, aggregates not
    "store.before_close": 1,  # committed, still only in the WAL (not checkpointed)
}
RANDOM_ROUNDS = 2
FILES_PER_ROUND = 25


def _victim(db: Path, folder: Path) -> None:
    from procbench.api import load_task
    from procbench.paths import SAMPLE_DATA_ROOT
    from procbench.submissions import SubmissionRequest, submit

    spec, runner = load_task("openpi")
    print("ready", flush=True)
    files = sorted(folder.glob("*.jsonl"))
    for path in files:
        submit(
            SubmissionRequest(split="test", predictions=path, model=path.stem, team="t"),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
    print("done", flush=True)
    if os.environ.get(CRASH_ENV):
        return
    while True:  # keep writing (idempotent resubmissions are full store transactions) until killed
        for path in files:
            submit(
                SubmissionRequest(split="test", predictions=path, model=path.stem, team="t"),
                spec,
                runner,
                data_root=SAMPLE_DATA_ROOT,
                db_path=db,
            )


def _spawn(db: Path, folder: Path, crash_at: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    env.pop(CRASH_ENV, None)
    if crash_at:
        env[CRASH_ENV] = crash_at
    return subprocess.Popen(
        [sys.executable, __file__, str(db), str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=PROJECT_ROOT,
    )


def _stored(db: Path) -> int:
    return query(db, "SELECT count(*) FROM submissions")[0][0] if db.exists() else 0  # type: ignore[return-value]


def _rerun(db: Path, folder: Path) -> None:
    for path in sorted(folder.glob("*.jsonl")):
        submit_openpi(db, path, model=path.stem)


def test_sigkill_at_each_crash_point_leaves_a_consistent_store_and_a_rerun_completes(
    tmp_path: Path,
) -> None:
    cases = {}
    for point in CRASH_POINTS:
        folder = tmp_path / point / "files"
        variant(folder, 3)
        cases[point] = (
            tmp_path / point / "board.duckdb",
            folder,
            _spawn(tmp_path / point / "board.duckdb", folder, point),
        )
    for point, (db, folder, proc) in cases.items():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, f"{point}: exit {proc.returncode}\n{err[-2000:]}"
        assert _stored(db) == CRASH_POINTS[point], point
        if db.exists():
            assert check_consistency(db) == [], point
        _rerun(db, folder)
        assert _stored(db) == 1, point
        assert check_consistency(db) == [], point
        assert query(db, "SELECT count(*) FROM raw_files")[0][0] == 1


def test_sigkill_at_random_moments_then_rerun_stores_every_file_once(tmp_path: Path) -> None:
    rng = random.Random(20261122)
    rounds = []
    for r in range(RANDOM_ROUNDS):
        folder = tmp_path / f"round{r}" / "files"
        for k in range(FILES_PER_ROUND):
            variant(folder, k)
        db = tmp_path / f"round{r}" / "board.duckdb"
        rounds.append((db, folder, _spawn(db, folder)))
    for db, folder, proc in rounds:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
    # kill each victim somewhere inside its stream of submissions (each takes tens of milliseconds)
    start = time.monotonic()
    for at, proc in sorted(
        ((rng.uniform(0.05, 1.2), proc) for _, _, proc in rounds), key=lambda pair: pair[0]
    ):
        time.sleep(max(0.0, start + at - time.monotonic()))
        proc.send_signal(signal.SIGKILL)
    for db, folder, proc in rounds:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, err[-2000:]
        assert _stored(db) <= FILES_PER_ROUND
        if db.exists():
            assert check_consistency(db) == []
        _rerun(db, folder)
        assert _stored(db) == FILES_PER_ROUND
        assert (
            query(db, "SELECT count(DISTINCT content_sha256) FROM submissions")[0][0]
            == FILES_PER_ROUND
        )
        assert check_consistency(db) == []


if __name__ == "__main__":
    _victim(Path(sys.argv[1]), Path(sys.argv[2]))
