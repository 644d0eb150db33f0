"""The ``ray`` re-scoring engine: jobs scored by Ray workers, results handed back to the coordinator.

Importing this module registers ``ENGINES["ray"]``, so ``procbench rescore TASK --engine ray`` (and
``procbench.rescore.rescore(..., engine="ray")``) use it.  Which cluster: the ``address``
argument of :func:`run_with_ray`, else ``PROCBENCH_RAY_ADDRESS`` (e.g. ``ray://head:10001`` or
``auto``), else a local Ray started for the call with ``PROCBENCH_RAY_CPUS`` CPUs (default: all)
and shut down afterwards.

Workers only compute: each runs :func:`submissions.engines.run_job` on a job (a frozen, picklable
dataclass naming the spec file, the data root and the raw file) and returns a
:class:`~submissions.engines.RescoreResult`.  The store is written by the coordinating process
alone (``procbench.rescore``), as DuckDB requires.  On a real cluster every worker must have
procbench installed and see the data root; jobs planned with ``inline=True`` carry the raw files'
bytes, so the workers need not see the coordinator's disk.

Jobs of the same spec and split go to the same task in batches of ``BATCH`` jobs, so a worker
reads and fingerprints the gold once per batch rather than once per job.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from submissions.engines import ENGINES, RescoreJob, RescoreResult, run_job

ADDRESS_VARIABLE = "PROCBENCH_RAY_ADDRESS"
CPUS_VARIABLE = "PROCBENCH_RAY_CPUS"
BATCH = 8


def _score_batch(jobs: list[RescoreJob]) -> list[RescoreResult]:
    """What a worker runs: the local engine's job function on each job (it never raises)."""
    return [run_job(job) for job in jobs]


def _absolute(job: RescoreJob) -> RescoreJob:
    """The job with its paths made absolute: Ray workers do not share the coordinator's working directory."""
    raw_path = str(Path(job.raw_path).resolve()) if job.raw_path is not None else None
    return dataclasses.replace(job, spec_path=str(Path(job.spec_path).resolve()), data_root=str(Path(job.data_root).resolve()), raw_path=raw_path)


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


def _connect(ray: Any, address: str | None) -> bool:
    """Attach to a cluster, or start a local one; True when this call started Ray (and must stop it)."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get(ADDRESS_VARIABLE) or None
    options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False, "include_dashboard": False}
    if address is None:
        cpus = os.environ.get(CPUS_VARIABLE)
        if cpus:
            options["num_cpus"] = int(cpus)
    else:
        options = {"address": address, "ignore_reinit_error": True, "log_to_driver": False}
    ray.init(**options)
    return True


def run_with_ray(jobs: Sequence[RescoreJob], *, address: str | None = None, batch_size: int = BATCH) -> list[RescoreResult]:
    """Score ``jobs`` on a Ray cluster; one result per job (a failed batch fails its jobs, never the call)."""
    if not jobs:
        return []
    import ray

    started = _connect(ray, address)
    try:
        remote = ray.remote(max_retries=1)(_score_batch)
        batches = _batches([_absolute(job) for job in jobs], batch_size)
        pending = {remote.remote(batch): batch for batch in batches}
        results: list[RescoreResult] = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                batch = pending.pop(ref)
                try:
                    results.extend(ray.get(ref))
                except Exception as exc:  # noqa: BLE001 - a lost worker fails its jobs, not the run
                    reason = f"ray worker failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                    results.extend(RescoreResult(job.job_id, False, reason=reason) for job in batch)
        return results
    finally:
        if started:
            ray.shutdown()


ENGINES["ray"] = run_with_ray
