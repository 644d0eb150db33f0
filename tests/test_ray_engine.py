"""The ray re-scoring engine stores exactly what the local engine stores (a real local Ray cluster)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from procbench.dsl.tasks import spec_path
from procbench.rescore import plan, rescore
from procbench.submissions.engines import ENGINES, RescoreJob, get_engine, run_job
from tests.rescore_stores import TASKS, changed_root, copy_store, rescored_rows, sample_store

ray = pytest.importorskip("ray")

from procbench.submissions import ray_engine  # noqa: E402  (needs ray)


def test_ray_engine_rescores_exactly_like_the_local_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ray_engine.CPUS_VARIABLE, "2")
    monkeypatch.delenv(ray_engine.ADDRESS_VARIABLE, raising=False)
    db = sample_store(tmp_path)
    changed = changed_root(tmp_path)
    local_db, ray_db = copy_store(db, "local.duckdb"), copy_store(db, "ray.duckdb")
    local = {task: rescore(local_db, task, data_root=changed, engine="local") for task in TASKS}
    remote = {task: rescore(ray_db, task, data_root=changed, engine="ray") for task in TASKS}
    for task in TASKS:
        assert local[task].rescored and not local[task].failed, local[task]
        assert sorted(remote[task].rescored) == sorted(local[task].rescored)
        assert not remote[task].failed
    local_rows, ray_rows = rescored_rows(local_db), rescored_rows(ray_db)
    assert local_rows[0] and local_rows[1]
    assert ray_rows == local_rows
    assert not ray.is_initialized()  # the engine stopped the Ray it started


def test_the_engine_registers_itself_and_handles_no_jobs() -> None:
    assert get_engine("ray") is ray_engine.stream_with_ray is ENGINES["ray"]
    assert ray_engine.run_with_ray([]) == [] and list(ray_engine.stream_with_ray([])) == []


def _job(job_id: str, spec: str, split: str = "test", root: str = "data") -> RescoreJob:
    return RescoreJob(
        job_id=job_id,
        task="t",
        spec_path=spec,
        split=split,
        data_root=root,
        filename="p.jsonl",
        content_sha256="0",
        raw_path="blobs/x.gz",
    )


def test_jobs_are_batched_per_spec_and_split_and_shipped_without_the_coordinators_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / "x.gz").write_bytes(b"gzip bytes")
    jobs = [_job(f"a{i}", "specs/a.spec") for i in range(5)] + [
        _job("b0", "specs/b.spec"),
        _job("a-dev", "specs/a.spec", split="dev"),
    ]
    batches = ray_engine._batches([ray_engine._absolute(j) for j in jobs], 2)
    assert [[j.job_id for j in b] for b in batches] == [
        ["a0", "a1"],
        ["a2", "a3"],
        ["a4"],
        ["b0"],
        ["a-dev"],
    ]
    first = batches[0][0]
    assert first.spec_path == str(tmp_path / "specs" / "a.spec") and first.data_root == str(
        tmp_path / "data"
    )
    shipped = ray_engine._shipped(
        first
    )  # what a worker gets: the raw file's bytes, no path of the coordinator but the data root
    assert (
        shipped.raw_gzip == b"gzip bytes"
        and shipped.raw_path is None
        and shipped.spec_path == ""
        and shipped.data_root == str(tmp_path / "data")
    )


def test_batches_are_sized_so_every_cpu_gets_several() -> None:
    assert ray_engine.BATCHES_PER_CPU == 4
    assert ray_engine.batch_size(16, 2) == 2  # 16 jobs on 2 CPUs: eight tasks of 2, not two of 8
    assert ray_engine.batch_size(8, 2) == 1 and ray_engine.batch_size(9, 2) == 2
    assert ray_engine.batch_size(8, 16) == 1
    assert (
        ray_engine.batch_size(1000, 4) == ray_engine.BATCH
    )  # capped: results stream back in small batches
    assert ray_engine.batch_size(1000, 4, 50) == 50 and ray_engine.batch_size(0, 4) == 1


def test_the_cluster_address_comes_from_the_argument_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[dict] = []

    class Recorder:
        @staticmethod
        def is_initialized() -> bool:
            return False

        @staticmethod
        def init(**options: object) -> None:
            calls.append(options)

    monkeypatch.setenv(ray_engine.ADDRESS_VARIABLE, "ray://head:10001")
    assert ray_engine._connect(Recorder, None) is True
    assert ray_engine._connect(Recorder, "auto") is True
    monkeypatch.delenv(ray_engine.ADDRESS_VARIABLE)
    monkeypatch.setenv(ray_engine.CPUS_VARIABLE, "3")
    ray_engine._connect(Recorder, None)
    assert [c.get("address") for c in calls] == [
        "ray://head:10001",
        "auto",
        "local",
    ]  # unset: a Ray of its own, never a `ray start` cluster Ray would find on this machine
    assert calls[2]["num_cpus"] == 3
    assert calls[2]["_system_config"] == {
        "worker_niceness": 0
    }  # a local Ray's workers at normal priority, not Ray's nice 15
    monkeypatch.setenv(ray_engine.CPUS_VARIABLE, "many")
    with pytest.raises(ValueError, match="PROCBENCH_RAY_CPUS must be a positive whole number"):
        ray_engine._connect(Recorder, None)


def test_each_worker_loads_the_task_once_and_every_cpu_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nine jobs on a local Ray of 2 CPUs: two actors, each builds the runner and reads the gold once, both score."""
    monkeypatch.setenv(ray_engine.CPUS_VARIABLE, "2")
    monkeypatch.delenv(ray_engine.ADDRESS_VARIABLE, raising=False)
    db, changed = sample_store(tmp_path), changed_root(tmp_path)
    planned, *_ = plan(db, spec_path("openpi"), data_root=changed)
    assert planned
    jobs = [
        dataclasses.replace(planned[i % len(planned)], job_id=f"copy-{i}") for i in range(9)
    ]  # the same stored files under other ids: more jobs than CPUs
    results = ray_engine.run_with_ray(jobs)
    assert sorted(r.job_id for r in results) == sorted(j.job_id for j in jobs)
    assert all(r.ok for r in results), [r.reason for r in results if not r.ok]
    here = {j.job_id: run_job(j) for j in jobs[:2]}  # the same rows as this process computes
    for r in results:
        if r.job_id in here:
            assert (r.fingerprint, r.items, r.aggregates) == (
                here[r.job_id].fingerprint,
                here[r.job_id].items,
                here[r.job_id].aggregates,
            )
    run = ray_engine.LAST_RUN
    assert run["cpus"] == 2 and run["batch_size"] == ray_engine.batch_size(9, 2) == 2
    assert run["batches"] == 5  # ceil(9 / 2)
    actors = run["actors"]
    assert len(actors) == 2 and len({a["pid"] for a in actors}) == 2  # one worker process per CPU
    assert all(a["batches"] >= 1 for a in actors)  # both CPUs scored
    assert sum(a["batches"] for a in actors) == 5 and sum(a["jobs"] for a in actors) == 9
    assert all(a["runners"] == 1 and a["golds"] == 1 for a in actors)  # loaded once per worker
    assert not ray.is_initialized()


ATTACHED_CALLS = """
import json, sys
from pathlib import Path
from procbench.dsl.tasks import spec_path
from procbench.rescore import plan
from procbench.submissions import ray_engine
jobs, *_ = plan(Path(sys.argv[1]), spec_path("openpi"), data_root=Path(sys.argv[2]))
for _ in range(2):  # the first call's disconnect leaves the cluster to the second
    results = ray_engine.run_with_ray(jobs)
    print(json.dumps({"jobs": sorted(j.job_id for j in jobs), "results": sorted(r.job_id for r in results),
        "failed": [r.reason for r in results if not r.ok], "run": ray_engine.LAST_RUN}))
"""


def test_the_engine_attaches_to_a_running_cluster_and_leaves_it_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's `ray start --head` (procbench.bench.ray_head): two calls of a fresh process (as the bench runs
    them) attach to it, and it stops with the bench."""
    import json
    import os
    import subprocess
    import sys

    import psutil

    from procbench.bench.ray_head import ENVIRONMENT, running_head
    from procbench.paths import PROJECT_ROOT

    db, changed = sample_store(tmp_path), changed_root(tmp_path)
    with running_head(2) as head:
        env = {**os.environ, **ENVIRONMENT, ray_engine.ADDRESS_VARIABLE: head.address}
        done = subprocess.run(
            [sys.executable, "-c", ATTACHED_CALLS, str(db), str(changed)],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        calls = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert len(calls) == 2
        for call in calls:
            assert call["jobs"] and call["results"] == call["jobs"] and not call["failed"], call
            run = call["run"]
            assert run["cpus"] == 2 and len(run["actors"]) == min(2, run["batches"])
        assert psutil.pid_exists(head.pid)
    assert not psutil.pid_exists(head.pid) or psutil.Process(head.pid).status() == "zombie"
