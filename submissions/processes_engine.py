"""The ``processes`` re-scoring engine: jobs scored by local worker processes (issue #31).

Importing this module registers ``ENGINES["processes"]``, so ``procbench rescore TASK --engine processes
[--workers N]`` (and ``procbench.rescore.rescore(..., engine="processes", workers=N)``) use it.  It needs
nothing beyond the base install.  ``N`` scoring processes (default ``os.cpu_count()``, or
``PROCBENCH_WORKERS``) score while this process only hands out jobs and yields the results as they come,
so ``procbench.rescore`` writes each one to the store while the workers score the next: the store's
writes (about a quarter of the local engine's time on PAGED, whose submissions have 70,000 item rows)
are no longer a serial tail after the scoring.  A worker sends each result's item rows as columns (an Arrow
table, :func:`columnar`), which the store inserts with DuckDB's Arrow scan: the coordinator, which shares the
cores with the workers, neither unpickles a tuple per row nor converts each value from Python into DuckDB.

On Linux the workers are forked (:func:`start_method`) after this process has checked each job's spec
and read its split's gold (:func:`warm`): they start in milliseconds and inherit the runner, the gold
and whatever scoring imported here (copy-on-write), so no worker reads a gold file or imports a scorer
again; what this process holds at the fork is frozen (``gc.freeze``) until the pool ends, so no collection
walks it, in the workers or here.  Forking is safe here because the coordinator holds no store open while the engine runs (the
store's connection is per process: ``procbench.submissions.store`` drops it in a forked child) and a
worker never touches DuckDB; ``PROCBENCH_START_METHOD=spawn`` (or a platform without ``fork``) starts
fresh interpreters instead, which read the gold once each.

Jobs go out one per task (dynamic scheduling: a worker that finishes takes the next, so all finish
together), at most :data:`IN_FLIGHT_PER_WORKER` per worker at a time.  A worker that dies (killed, out
of memory) fails the jobs it held with the reason, as the local engine fails a job, and this process
scores the jobs not yet started; the board moves only once every row re-scored (the next run retries).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import traceback
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

from procbench.submissions.engines import ENGINES, RescoreJob, RescoreResult, run_job
from procbench.submissions.rows import as_columns

WORKERS_VARIABLE = "PROCBENCH_WORKERS"
START_VARIABLE = "PROCBENCH_START_METHOD"  # fork (the default on Linux) or spawn
CRASH_ENV = "PROCBENCH_CRASH_AT"  # the store's fault-injection variable (procbench.submissions.store.crash_point); WORKER_CRASH_POINT kills a worker
WORKER_CRASH_POINT = "processes.worker"
IN_FLIGHT_PER_WORKER = 2
START_METHODS = ("fork", "spawn")


def default_workers() -> int:
    """``PROCBENCH_WORKERS`` when set, else the machine's CPU count."""
    text = os.environ.get(WORKERS_VARIABLE, "").strip()
    if not text:
        return os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{WORKERS_VARIABLE} must be a positive whole number, not {text[:40]!r}")
    return int(text)


def start_method() -> str:
    """``PROCBENCH_START_METHOD`` when set, else ``fork`` on Linux (workers inherit the warmed runner) and ``spawn`` elsewhere."""
    text = os.environ.get(START_VARIABLE, "").strip()
    if text:
        if text not in START_METHODS:
            raise ValueError(
                f"{START_VARIABLE} must be one of {', '.join(START_METHODS)}, not {text[:40]!r}"
            )
        return text
    return "fork" if sys.platform == "linux" else "spawn"


def warm(jobs: Iterable[RescoreJob]) -> None:
    """Check each job's spec and read its split's gold in this process (both cached per process), and import Arrow,
    before workers fork.

    A spec or gold that cannot be read is left for the jobs to fail on, with the reason the local engine gives.
    """
    import pyarrow  # noqa: F401  (what a worker sends its item rows as: procbench.submissions.rows.ItemColumns)

    from procbench.dsl.tasks import load_task

    for spec_file, split, data_root in {(j.spec_path, j.split, j.data_root) for j in jobs}:
        try:
            _, runner = load_task(spec_file)
            runner.gold(Path(data_root), split)
        except Exception:  # noqa: BLE001, S112 - the job reports it (run_job never raises)
            continue


def score_share(jobs: Sequence[RescoreJob]) -> list[RescoreResult]:
    """What a worker runs on its jobs: the local engine's job function on each (it never raises), each result's
    item rows sent back as columns (:func:`columnar`)."""
    if (
        os.environ.get(CRASH_ENV) == WORKER_CRASH_POINT
    ):  # fault injection (tests): the worker dies as an OOM-killed one would
        os.kill(os.getpid(), signal.SIGKILL)
    return [columnar(run_job(job)) for job in jobs]


def columnar(result: RescoreResult) -> RescoreResult:
    """``result`` with its item rows as :class:`~procbench.submissions.rows.ItemColumns` (an Arrow table), whatever
    their number (``run_job`` makes only large ones columns).

    The same rows, in the same order.  A PAGED result has about 70,000: as tuples, the coordinator would unpickle a
    tuple per row, and the store convert each value from Python into DuckDB, while it shares the cores with the
    workers; as columns, it unpickles three Arrow buffers and the store inserts them with DuckDB's Arrow scan.
    """
    items = as_columns(result.items)
    return result if items is result.items else replace(result, items=items)


def _start_worker() -> None:
    # a worker computes in one thread: OpenBLAS's threads (started by importing NumPy) would only compete with the other processes
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _why(exc: BaseException) -> str:
    if isinstance(exc, BrokenProcessPool):
        return "a worker process of the processes engine died while scoring it (killed, or out of memory); the next `procbench rescore` retries it"
    return f"re-scoring failed in a worker process: {traceback.format_exception_only(exc)[-1].strip()[:300]}"


def ordered(jobs: Sequence[RescoreJob]) -> deque[RescoreJob]:
    """The jobs grouped by (spec, split, data root), each group in the given order: a process rarely needs a second runner."""
    groups: dict[tuple[str, str, str], list[RescoreJob]] = {}
    for job in jobs:
        groups.setdefault((job.spec_path, job.split, job.data_root), []).append(job)
    return deque(job for group in groups.values() for job in group)


def stream_with_processes(
    jobs: Sequence[RescoreJob], *, workers: int | None = None
) -> Iterator[RescoreResult]:
    """Score ``jobs`` in ``workers`` worker processes, yielding each result as it is ready; one result per job (a job
    whose worker died fails, never the call).  One worker, or one job: scored here, as the local engine does."""
    if not jobs:
        return
    count = workers if workers is not None else default_workers()
    if count < 1:
        raise ValueError(f"the processes engine needs at least one worker, not {count}")
    queue = ordered(jobs)
    size = min(count, len(queue))
    if size < 2:
        yield from (run_job(job) for job in queue)
        return
    method = start_method()
    frozen = method == "fork"
    if frozen:
        warm(queue)
        # what this process holds now (the runner, the gold, the imported modules) is never collected in the workers
        # (nor here) while they score: their collections skip it and leave its pages shared instead of copying them
        gc.freeze()
    pool = ProcessPoolExecutor(
        max_workers=size,
        mp_context=multiprocessing.get_context(method),
        initializer=_start_worker,
    )
    pending: dict[Future[list[RescoreResult]], RescoreJob] = {}
    broken = False

    def fill() -> (
        None
    ):  # one job per task, at most IN_FLIGHT_PER_WORKER per worker: a worker never waits for this process
        nonlocal broken
        while queue and not broken and len(pending) < IN_FLIGHT_PER_WORKER * size:
            job = queue.popleft()
            try:
                pending[pool.submit(score_share, [job])] = job
            except BrokenProcessPool:
                queue.appendleft(job)  # never started: this process scores it
                broken = True

    def finished(futures: Iterable[Future[list[RescoreResult]]]) -> Iterator[RescoreResult]:
        nonlocal broken
        for future in futures:
            job = pending.pop(future)
            try:
                yield from future.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker (BrokenProcessPool) or a job that cannot travel fails the job, not the run
                broken = broken or isinstance(exc, BrokenProcessPool)
                yield RescoreResult(job.job_id, False, reason=_why(exc))

    try:
        fill()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            fill()  # before yielding: the workers score while the caller stores these results
            yield from finished(done)
            fill()
        yield from (run_job(job) for job in queue)  # the pool broke: this process scores the rest
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if frozen:
            gc.unfreeze()


ENGINES["processes"] = stream_with_processes
