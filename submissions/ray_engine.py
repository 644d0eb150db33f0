"""The ``ray`` re-scoring engine: jobs scored by Ray workers, results streamed back to the coordinator.

Importing this module registers ``ENGINES["ray"]``, so ``procbench rescore TASK --engine ray`` (and
``procbench.rescore.rescore(..., engine="ray")``) use it.  docs/distributed.md is the operator's page.
Settings (environment of the coordinator unless said):

* ``PROCBENCH_RAY_ADDRESS``: the cluster (``127.0.0.1:6379``, ``ray://head:10001``, ``auto``); unset, a
  local Ray is started for the call and shut down afterwards;
* ``PROCBENCH_RAY_CPUS``: the CPUs of that local Ray (default: all);
* ``PROCBENCH_RAY_BATCH``: the most jobs one Ray task scores (default :data:`BATCH`); batches are cut
  smaller so that every CPU of the cluster gets several (:func:`batch_size`);
* ``PROCBENCH_RAY_DATA`` (on the worker nodes, set when ``ray start`` runs there): where the data root is
  on that machine, when not at the coordinator's path.

Jobs are self-contained: a Ray task gets a :class:`~procbench.submissions.engines.PortableTask` (the checked
spec and its runner's plan, put in the object store once per spec) and jobs carrying the raw file's
gzip bytes, read from the store's disk only when their batch is submitted, so no path of the
coordinator reaches a worker but the data root's.  A worker needs ``pip install "procbench[distributed]"``
(the coordinator's version: another fails its jobs) and the data at the data root (or at
``PROCBENCH_RAY_DATA``); the worker's fingerprint is checked against the coordinator's, so other data
fails the job rather than score.  At most two batches per CPU are in flight, and results are yielded as
batches finish (``ray.wait``): ``procbench.rescore`` commits them in bounded batches, so a run killed half
way keeps what it committed and the next run skips it.

Workers only compute: the store is written by the coordinating process alone, as DuckDB requires.
A local Ray started here runs its workers at normal priority (Ray's default is nice 15).

The jobs go to one :class:`Scorer` actor per cluster CPU (at most one per batch): a worker process that
builds the task's runner and reads its split's gold once, when it starts (while the coordinator reads the
first raw files), and keeps them for every batch it scores; a batch goes to the actor with the fewest in
flight, so every CPU scores to the end.  :data:`LAST_RUN` says, after a call, how many actors scored how
many batches and what each loaded (tests check that no worker loads a task twice).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from procbench.runners.runtime.extras import require
from procbench.submissions.engines import (
    ENGINES,
    PortableTask,
    RescoreJob,
    RescoreResult,
    _runner_of,
    _RUNNERS,
    installed_version,
    portable_task,
    run_job,
)

require(
    "distributed", "the ray re-scoring engine (--engine ray)"
)  # registering an engine that cannot run: one line naming the extra instead

ADDRESS_VARIABLE = "PROCBENCH_RAY_ADDRESS"
CPUS_VARIABLE = "PROCBENCH_RAY_CPUS"
BATCH_VARIABLE = "PROCBENCH_RAY_BATCH"
DATA_VARIABLE = "PROCBENCH_RAY_DATA"
BATCH = 8
BATCHES_PER_CPU = 4
IN_FLIGHT_PER_CPU = 2


def _worker_root(data_root: str) -> str:
    """The data root on this worker: ``PROCBENCH_RAY_DATA`` when set on its node, else the coordinator's."""
    return os.environ.get(DATA_VARIABLE, "").strip() or data_root


def _score_batch(task: PortableTask, jobs: list[RescoreJob]) -> list[RescoreResult]:
    """What a worker runs: the local engine's job function on each job, under the shipped task (it never raises)."""
    mine = installed_version()
    if task.version and mine != task.version:
        reason = f"the worker runs procbench {mine or '(not installed)'}, the coordinator {task.version}: install the same version on every node"
        return [RescoreResult(job.job_id, False, reason=reason) for job in jobs]
    return [
        run_job(dataclasses.replace(job, data_root=_worker_root(job.data_root)), task)
        for job in jobs
    ]


class Scorer:
    """One scoring worker of a call (a Ray actor holding a CPU): it builds a task's runner and reads a split's gold
    once (``procbench.submissions.engines`` keeps both per process), then scores batch after batch with them."""

    def __init__(self, task: PortableTask, groups: Sequence[tuple[str, str]]) -> None:
        self.batches = self.jobs = 0
        if task.version and installed_version() != task.version:
            return  # its batches fail with both versions named (_score_batch)
        for (
            data_root,
            split,
        ) in groups:  # warm: the runner and the gold, before the first batch comes
            try:
                _runner_of(task).gold(Path(_worker_root(data_root)), split)
            except Exception:  # noqa: BLE001, S112 - the jobs report it (run_job never raises)
                continue

    def score(self, task: PortableTask, jobs: list[RescoreJob]) -> list[RescoreResult]:
        self.batches, self.jobs = self.batches + 1, self.jobs + len(jobs)
        return _score_batch(task, jobs)

    def stats(self) -> dict[str, int]:
        """This worker's process, the batches and jobs it scored, the runners it built and the golds it read."""
        return {
            "pid": os.getpid(),
            "batches": self.batches,
            "jobs": self.jobs,
            "runners": len(_RUNNERS),
            "golds": sum(len(runner._gold_cache) for runner in _RUNNERS.values()),
        }


def _absolute(job: RescoreJob) -> RescoreJob:
    """The job with its paths made absolute: Ray workers do not share the coordinator's working directory."""
    raw_path = str(Path(job.raw_path).resolve()) if job.raw_path is not None else None
    return dataclasses.replace(
        job,
        spec_path=str(Path(job.spec_path).resolve()),
        data_root=str(Path(job.data_root).resolve()),
        raw_path=raw_path,
    )


def _shipped(job: RescoreJob) -> RescoreJob:
    """The job as a worker gets it: the raw file's bytes instead of its path, no spec path (the task travels beside it)."""
    raw = (
        job.raw_gzip
        if job.raw_gzip is not None
        else Path(job.raw_path).read_bytes()
        if job.raw_path is not None
        else None
    )
    return dataclasses.replace(job, spec_path="", raw_path=None, raw_gzip=raw)


def batch_size(jobs: int, cpus: int, most: int = BATCH) -> int:
    """Jobs per Ray task: at most ``most``, and few enough that every CPU gets :data:`BATCHES_PER_CPU` (16 jobs on 2
    CPUs: 2).  A worker process keeps its runner and gold between tasks, so small batches cost little, while the
    coordinator writes each batch's results as the workers score the next ones: with one batch per CPU it wrote
    them all after the last (16 PAGED submissions on 2 cores: 23 s, in batches of 2: 18 s)."""
    return max(1, min(most, math.ceil(jobs / (max(1, cpus) * BATCHES_PER_CPU))))


def _batches(jobs: Sequence[RescoreJob], size: int) -> list[list[RescoreJob]]:
    """Jobs grouped by (spec, split, data root), cut into batches of at most ``size``."""
    groups: dict[tuple[str, str, str], list[RescoreJob]] = {}
    for job in jobs:
        groups.setdefault((job.spec_path, job.split, job.data_root), []).append(job)
    out = []
    for group in groups.values():
        it = iter(group)
        while batch := list(islice(it, size)):
            out.append(batch)
    return out


def _positive(variable: str) -> int | None:
    text = os.environ.get(variable, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{variable} must be a positive whole number, not {text[:40]!r}")
    return int(text)


def _connect(ray: Any, address: str | None) -> bool:
    """Attach to a cluster, or start a local one; True when this call started Ray (and must stop it)."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get(ADDRESS_VARIABLE) or None
    options: dict[str, Any] = {
        "ignore_reinit_error": True,
        "log_to_driver": False,
        "include_dashboard": False,
    }
    if address is None:
        # "local": a Ray of its own even when `ray start` runs on this machine (Ray would attach to that one)
        options["address"] = "local"
        cpus = _positive(CPUS_VARIABLE)
        if cpus:
            options["num_cpus"] = cpus
        options["_system_config"] = {
            "worker_niceness": 0
        }  # Ray's workers run at nice 15 by default: any other work starves them
    else:
        options = {"address": address, "ignore_reinit_error": True, "log_to_driver": False}
    ray.init(**options)
    return True


def _failed(batch: Sequence[RescoreJob], exc: BaseException | str) -> list[RescoreResult]:
    text = str(exc).strip()
    first = text.splitlines()[0][:300] if text else ""
    reason = (
        f"ray worker failed: {type(exc).__name__}: {first}"
        if isinstance(exc, BaseException)
        else first
    )
    return [RescoreResult(job.job_id, False, reason=reason) for job in batch]


LAST_RUN: dict[
    str, Any
] = {}  # the latest call's shape: cpus, batch size, batches, and each actor's stats (Scorer.stats)


def stream_with_ray(
    jobs: Sequence[RescoreJob], *, address: str | None = None, batch_size_most: int | None = None
) -> Iterator[RescoreResult]:
    """Score ``jobs`` on a Ray cluster, yielding each batch's results as it finishes; one result per job (a failed
    batch fails its jobs, never the call)."""
    if not jobs:
        return
    most = batch_size_most or _positive(BATCH_VARIABLE) or BATCH
    import ray
    from ray.exceptions import RayActorError

    started = _connect(ray, address)
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = batch_size(len(jobs), cpus, most)
        batches = _batches([_absolute(job) for job in jobs], size)
        LAST_RUN.clear()
        LAST_RUN.update(cpus=cpus, batch_size=size, batches=len(batches), actors=[])
        tasks: dict[
            str, Any
        ] = {}  # spec path -> the object reference of its PortableTask (put once)
        early: list[RescoreResult] = []

        values: dict[str, PortableTask] = {}

        def task_of(spec_path: str) -> Any:
            if spec_path not in tasks:
                values[spec_path] = portable_task(spec_path)
                tasks[spec_path] = ray.put(values[spec_path])
            return tasks[spec_path]

        first: PortableTask | None = (
            None  # the first spec that can be read: the actors warm up on it
        )
        spec, unreadable = "", set[str]()
        for batch in batches:
            try:
                task_of(batch[0].spec_path)
                spec = batch[0].spec_path
                # by value (tens of kB): Ray restarts an actor only when its arguments are not in the object store
                first = values[spec]
                break
            except Exception as exc:  # noqa: BLE001 - a spec that cannot be read fails its jobs
                early.extend(_failed(batch, exc))
                unreadable.add(batch[0].spec_path)
        batches = [b for b in batches if b[0].spec_path not in unreadable]
        groups = sorted({(b[0].data_root, b[0].split) for b in batches if b[0].spec_path == spec})
        actor_class = ray.remote(num_cpus=1, max_restarts=1, max_task_retries=1)(Scorer)
        actors: list[Any] = (
            [actor_class.remote(first, groups) for _ in range(min(cpus, len(batches)))]
            if first is not None
            else []
        )
        in_flight = [0] * len(actors)
        alive = [True] * len(actors)
        queue = iter(batches)
        pending: dict[Any, tuple[list[RescoreJob], int]] = {}

        def submit(batch: list[RescoreJob]) -> bool:
            """To the live actor with the fewest batches in flight, if one has fewer than IN_FLIGHT_PER_CPU."""
            free = [i for i in range(len(actors)) if alive[i] and in_flight[i] < IN_FLIGHT_PER_CPU]
            if not free:
                return False
            index = min(free, key=in_flight.__getitem__)
            try:
                ref = actors[index].score.remote(
                    task_of(batch[0].spec_path), [_shipped(job) for job in batch]
                )
            except Exception as exc:  # noqa: BLE001 - a spec or raw file that cannot be read fails its jobs
                early.extend(_failed(batch, exc))
                return True
            pending[ref] = (batch, index)
            in_flight[index] += 1
            return True

        waiting: list[list[RescoreJob]] = []

        def fill() -> None:  # raw files are read as their batch goes out, never all at once
            while True:
                batch = waiting.pop() if waiting else next(queue, None)
                if batch is None:
                    return
                if not any(alive):
                    early.extend(
                        _failed(batch, "ray worker failed: every scoring actor of this call died")
                    )
                    continue
                if not submit(batch):
                    waiting.append(batch)
                    return

        while True:
            fill()
            yield from early
            early.clear()
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                batch, index = pending.pop(ref)
                in_flight[index] -= 1
                try:
                    results = ray.get(ref)
                except RayActorError as exc:  # the actor is gone (Ray restarted it once already)
                    alive[index] = False
                    results = _failed(batch, exc)
                except Exception as exc:  # noqa: BLE001 - a lost worker fails its jobs, not the run
                    results = _failed(batch, exc)
                fill()  # before handing these results over: keep the cluster busy
                yield from results
        for actor, live in zip(actors, alive, strict=True):
            if live:
                try:
                    LAST_RUN["actors"].append(ray.get(actor.stats.remote(), timeout=30))
                except Exception:  # noqa: BLE001, S112 - the figures are a report, not the run's
                    continue
    finally:
        if started:
            ray.shutdown()


def run_with_ray(
    jobs: Sequence[RescoreJob], *, address: str | None = None, batch_size_most: int | None = None
) -> list[RescoreResult]:
    """Every result of :func:`stream_with_ray`, as a list."""
    return list(stream_with_ray(jobs, address=address, batch_size_most=batch_size_most))


ENGINES["ray"] = stream_with_ray
