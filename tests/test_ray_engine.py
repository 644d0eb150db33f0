"""The ray re-scoring engine stores exactly what the local engine stores (a real local Ray cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from procbench.submissions.engines import ENGINES, RescoreJob, get_engine
from procbench.rescore import rescore
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
    assert [c.get("address") for c in calls] == ["ray://head:10001", "auto", None]
    assert calls[2]["num_cpus"] == 3
    assert calls[2]["_system_config"] == {
        "worker_niceness": 0
    }  # a local Ray's workers at normal priority, not Ray's nice 15
    monkeypatch.setenv(ray_engine.CPUS_VARIABLE, "many")
    with pytest.raises(ValueError, match="PROCBENCH_RAY_CPUS must be a positive whole number"):
        ray_engine._connect(Recorder, None)
