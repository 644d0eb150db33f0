"""The ``processes`` re-scoring engine (issue #31): local worker processes store exactly what the local engine stores.

Real stores, real specs, real spawned workers.  A worker killed mid-run (``PROCBENCH_CRASH_AT``) fails its
jobs with a reason, as the local engine fails a job, and the board stays where it was until a later
run re-scores every row.  The gold is read once per worker process and split, not once per job: counted
inside a real spawned worker, around the runner's own reader.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.rescore import plan, rescore
from procbench.submissions import processes_engine
from procbench.submissions.engines import ENGINES, RescoreJob, get_engine
from tests.rescore_stores import TASKS, changed_root, copy_store, rescored_rows, sample_store
from tests.test_submissions_support import query

cli = CliRunner()


def _board(db: Path, task: str) -> list[tuple[object, ...]]:
    return query(
        db,
        "SELECT submission_id, fingerprint, metric, value FROM board WHERE task = ? ORDER BY ALL",
        [task],
    )


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store of the sample submissions, and the samples with both golds changed."""
    folder = tmp_path_factory.mktemp("processes")
    return sample_store(folder), changed_root(folder)


def test_the_engine_registers_itself_and_needs_no_extra() -> None:
    assert get_engine("processes") is processes_engine.stream_with_processes is ENGINES["processes"]
    assert list(processes_engine.stream_with_processes([])) == []


def test_processes_rescore_exactly_like_the_local_engine(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    db, changed = stores
    local_db, pool_db = (
        copy_store(db, tmp_path / "local.duckdb"),
        copy_store(db, tmp_path / "pool.duckdb"),
    )
    local = {task: rescore(local_db, task, data_root=changed, engine="local") for task in TASKS}
    pooled = {
        task: rescore(pool_db, task, data_root=changed, engine="processes", workers=2)
        for task in TASKS
    }
    for task in TASKS:
        assert len(local[task].rescored) >= 2 and not local[task].failed, local[task]
        assert (
            sorted(pooled[task].rescored) == sorted(local[task].rescored)
            and not pooled[task].failed
        )
        assert pooled[task].moved.keys() == local[task].moved.keys() == {"test"}
        assert _board(pool_db, task) == _board(local_db, task)
    local_rows, pool_rows = rescored_rows(local_db), rescored_rows(pool_db)
    assert local_rows[0] and local_rows[1]
    assert pool_rows == local_rows  # the same aggregates and item scores, row for row


def test_the_cli_takes_the_engine_and_its_workers(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    db, changed = stores
    copy = copy_store(db, tmp_path / "cli.duckdb")
    done = cli.invoke(
        app,
        [
            "rescore",
            "openpi",
            "--engine",
            "processes",
            "--workers",
            "2",
            "--db",
            str(copy),
            "--data-dir",
            str(changed),
        ],
    )
    assert done.exit_code == 0, done.output
    assert "the board now shows fingerprint" in done.output and ", failed 0" in done.output
    wrong = cli.invoke(
        app, ["rescore", "openpi", "--workers", "2", "--db", str(copy), "--data-dir", str(changed)]
    )
    assert (
        wrong.exit_code == 2 and "--workers" in wrong.output
    )  # a setting of the processes engine alone: a usage error
    with pytest.raises(ValueError, match="processes engine"):
        rescore(copy, "openpi", data_root=changed, engine="local", workers=2)


def test_a_killed_worker_fails_its_jobs_and_the_board_stays(
    stores: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, changed = stores
    copy = copy_store(db, tmp_path / "crash.duckdb")
    before = _board(copy, "openpi")
    monkeypatch.setenv(
        processes_engine.CRASH_ENV, processes_engine.WORKER_CRASH_POINT
    )  # every spawned worker dies on its first job
    report = rescore(copy, "openpi", data_root=changed, engine="processes", workers=2)
    assert report.failed, report
    assert all(
        "worker process of the processes engine died" in reason for _, reason in report.failed
    )
    assert report.moved == {} and set(report.kept) == {"test"}
    assert _board(copy, "openpi") == before  # the board did not move
    failed = {origin for origin, _ in report.failed}
    statuses = query(
        copy, "SELECT submission_id, reason FROM status_history WHERE status = 'failed'"
    )
    assert failed <= {sid for sid, _ in statuses} and all(
        "died" in str(reason) for _, reason in statuses
    )
    monkeypatch.delenv(processes_engine.CRASH_ENV)
    again = rescore(
        copy, "openpi", data_root=changed, engine="processes", workers=2
    )  # the next run re-scores what failed and moves the board
    assert sorted(again.rescored) and not again.failed and set(again.moved) == {"test"}
    assert {
        query(copy, "SELECT origin_id FROM submissions WHERE submission_id = ?", [sid])[0][0]
        for sid in again.rescored
    } == failed


def test_a_job_that_fails_is_reported_as_the_local_engine_reports_it(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    db, changed = stores
    results = {}
    for engine in ("local", "processes"):
        copy = copy_store(db, tmp_path / f"{engine}.duckdb")
        jobs, _, _, _, _ = plan(copy, Path("specs/openpi.spec"), data_root=changed)
        Path(str(jobs[0].raw_path)).write_bytes(
            gzip.compress(b"tampered\n")
        )  # the stored raw file of one submission is damaged
        results[engine] = rescore(
            copy,
            "openpi",
            data_root=changed,
            engine=engine,
            workers=2 if engine == "processes" else None,
        )
        assert results[engine].moved == {} and set(results[engine].kept) == {"test"}
    assert (
        results["processes"].failed == results["local"].failed and len(results["local"].failed) == 1
    )
    assert sorted(results["processes"].rescored) == sorted(results["local"].rescored)


def _count_gold_reads(jobs: list[RescoreJob]) -> tuple[int, int, list[bool]]:
    """In a spawned worker: the worker's own function on two shares of the jobs, counting the gold reads (the runner's cache misses)."""
    from procbench.runners.runtime.runner import TaskRunner

    reads: list[str] = []
    gold = TaskRunner.gold

    def counted(self: TaskRunner, data_root: Path, split: str) -> tuple[object, str]:
        if (
            str(data_root),
            split,
        ) not in self._gold_cache:  # the runner reads and fingerprints the split's files
            reads.append(split)
        return gold(self, data_root, split)

    TaskRunner.gold = counted  # type: ignore[method-assign,assignment]
    half = len(jobs) // 2
    results = processes_engine.score_share(jobs[:half]) + processes_engine.score_share(jobs[half:])
    return len(reads), len(set(reads)), [r.ok for r in results]


def test_a_worker_reads_each_splits_gold_once_not_once_per_job(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    db, changed = stores
    copy = copy_store(db, tmp_path / "count.duckdb")
    jobs, _, _, _, _ = plan(copy, Path("specs/openpi.spec"), data_root=changed)
    assert len(jobs) >= 3
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        reads, splits, ok = pool.submit(_count_gold_reads, jobs).result()
    assert all(ok) and len(ok) == len(jobs)
    assert (reads, splits) == (1, 1)  # one split, read once by the worker for all its jobs


def _log_to(path: Path) -> tuple[Any, Any]:
    """A TaskRunner.gold and .validate that append (pid, what) lines to ``path`` (a forked worker inherits them)."""
    from procbench.runners.runtime.runner import TaskRunner

    gold, validate = TaskRunner.gold, TaskRunner.validate

    def log(what: str) -> None:
        with path.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {what}\n")

    def counted_gold(self: TaskRunner, data_root: Path, split: str) -> tuple[object, str]:
        if (str(data_root), split) not in self._gold_cache:
            log("gold")
        return gold(self, data_root, split)

    def counted_validate(self: TaskRunner, *args: Any, **kwargs: Any) -> Any:
        log("job")
        return validate(self, *args, **kwargs)

    return counted_gold, counted_validate


def test_forked_workers_score_every_job_on_the_coordinators_gold(
    stores: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forked workers inherit the runner and the gold the coordinator read while planning: no worker reads a gold file,
    the jobs are scored by the workers, and this process only hands them out."""
    from procbench.runners.runtime.runner import TaskRunner

    monkeypatch.delenv(processes_engine.START_VARIABLE, raising=False)
    if processes_engine.start_method() != "fork":
        pytest.skip("workers are forked on Linux only")
    db, changed = stores
    copy = copy_store(db, tmp_path / "fork.duckdb")
    jobs, _, _, _, _ = plan(copy, Path("specs/openpi.spec"), data_root=changed)
    log = tmp_path / "calls.log"
    gold, validate = _log_to(log)
    monkeypatch.setattr(TaskRunner, "gold", gold)
    monkeypatch.setattr(TaskRunner, "validate", validate)
    results = list(processes_engine.stream_with_processes(jobs, workers=2))
    assert sorted(r.job_id for r in results) == sorted(j.job_id for j in jobs)
    assert all(r.ok for r in results), [r.reason for r in results]
    calls = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    scorers = {pid for pid, what in calls if what == "job"}
    assert [what for _, what in calls].count("job") == len(jobs)
    # the workers scored, not this process; how the jobs fall between the two depends on which is free first (CI's
    # loaded machine once gave them all to one), so only their number is bounded here
    assert str(os.getpid()) not in scorers and 1 <= len(scorers) <= 2
    assert [
        pid for pid, what in calls if what == "gold"
    ] == []  # planning read it here, before the fork


def test_a_parallel_engines_results_are_written_as_they_come(
    stores: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The coordinator writes while the workers score: with no flush delay every result of the processes engine is
    committed when it arrives; the local engine's results wait for a full batch (or the end), as before."""
    from procbench import rescore as rescore_module

    db, changed = stores
    commits: dict[str, list[int]] = {}
    committer = rescore_module._Committer.__call__

    def counted(self: object, results: list[object], *rest: object) -> None:
        commits.setdefault(self.engine, []).append(len(results))  # type: ignore[attr-defined]
        committer(self, results, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(rescore_module._Committer, "__call__", counted)
    monkeypatch.setattr(rescore_module, "FLUSH_AFTER_S", 0.0)
    for engine in ("local", "processes"):
        copy = copy_store(db, tmp_path / f"{engine}.duckdb")
        report = rescore(
            copy,
            "openpi",
            data_root=changed,
            engine=engine,
            workers=2 if engine == "processes" else None,
        )
        assert len(report.rescored) >= 3 and not report.failed
    jobs = len(report.rescored)
    assert commits["local"] == [
        jobs
    ]  # one transaction at the end (fewer than COMMIT_EVERY results)
    assert commits["processes"][:jobs] == [1] * jobs and sum(commits["processes"]) == jobs


def test_the_start_method_comes_from_the_platform_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(processes_engine.START_VARIABLE, raising=False)
    assert processes_engine.start_method() == ("fork" if sys.platform == "linux" else "spawn")
    monkeypatch.setenv(processes_engine.START_VARIABLE, "spawn")
    assert processes_engine.start_method() == "spawn"
    monkeypatch.setenv(processes_engine.START_VARIABLE, "forkserver")
    with pytest.raises(ValueError, match=processes_engine.START_VARIABLE):
        processes_engine.start_method()


def test_shares_are_grouped_by_spec_split_and_data_root() -> None:
    def job(job_id: str, spec: str, split: str = "test") -> RescoreJob:
        return RescoreJob(
            job_id=job_id,
            task="t",
            spec_path=spec,
            split=split,
            data_root="d",
            filename="p",
            content_sha256="0",
            raw_path="x",
        )

    jobs = [
        job("a0", "a"),
        job("b0", "b"),
        job("a1", "a"),
        job("a-dev", "a", "dev"),
        job("b1", "b"),
    ]
    assert [j.job_id for j in processes_engine.ordered(jobs)] == ["a0", "a1", "b0", "b1", "a-dev"]


def test_the_worker_count_comes_from_the_argument_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(processes_engine.WORKERS_VARIABLE, raising=False)
    assert processes_engine.default_workers() >= 1
    monkeypatch.setenv(processes_engine.WORKERS_VARIABLE, "3")
    assert processes_engine.default_workers() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(processes_engine.WORKERS_VARIABLE, bad)
        with pytest.raises(ValueError, match=processes_engine.WORKERS_VARIABLE):
            processes_engine.default_workers()
