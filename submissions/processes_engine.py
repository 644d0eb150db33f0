"""The ``processes`` re-scoring engine: jobs scored by local worker processes (issue #31).

Importing this module registers ``ENGINES["processes"]``, so ``procbench rescore TASK --engine processes
[--workers N]`` (and ``procbench.rescore.rescore(..., engine="processes", workers=N)``) use it.  It needs
nothing beyond the base install.  ``N`` scoring processes (default ``os.cpu_count()``, or
``PROCBENCH_WORKERS``): this one, whose runner the planning already warmed (``procbench.dsl.tasks.load_task`` is
cached per process, the gold per data root and split), and a :class:`~concurrent.futures.ProcessPoolExecutor`
of ``N - 1`` workers started with ``spawn``, so that a worker never inherits the coordinator's open DuckDB
store, locks or threads.  This process scoring too is what makes the engine pay: a spawned worker spends
its first seconds importing the scorer and reading the gold, and on two cores a pool of two beside an
idle coordinator is barely faster than the local engine.

Each worker scores its share with the local engine's job function (:func:`procbench.submissions.engines.run_job`):
the spec is checked and compiled once per worker and its runner reads and fingerprints each split's gold
once, however many jobs the worker gets.  The pool takes jobs from the front of the queue, at most
:data:`IN_FLIGHT_PER_WORKER` per worker at a time, and this process from the back, between yielding the
results that came in: ``procbench.rescore`` commits them, alone, as they come.  A worker that dies
(killed, out of memory) fails the jobs it held with the reason, as the local engine fails a job, and
this process scores the rest; the board moves only once every row re-scored (the next run retries).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from procbench.submissions.engines import ENGINES, RescoreJob, RescoreResult, run_job

WORKERS_VARIABLE = "PROCBENCH_WORKERS"
CRASH_ENV = "PROCBENCH_CRASH_AT"  # the store's fault-injection variable (procbench.submissions.store.crash_point); WORKER_CRASH_POINT kills a worker
WORKER_CRASH_POINT = "processes.worker"
IN_FLIGHT_PER_WORKER = 2
START_METHOD = "spawn"  # never fork: the coordinator has DuckDB (and its threads) open


def default_workers() -> int:
    """``PROCBENCH_WORKERS`` when set, else the machine's CPU count."""
    text = os.environ.get(WORKERS_VARIABLE, "").strip()
    if not text:
        return os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{WORKERS_VARIABLE} must be a positive whole number, not {text[:40]!r}")
    return int(text)


def score_share(jobs: Sequence[RescoreJob]) -> list[RescoreResult]:
    """What a worker runs on its jobs: the local engine's job function on each (it never raises)."""
    if (
        os.environ.get(CRASH_ENV) == WORKER_CRASH_POINT
    ):  # fault injection (tests): the worker dies as an OOM-killed one would
        os.kill(os.getpid(), signal.SIGKILL)
    return [run_job(job) for job in jobs]


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
    """Score ``jobs`` in ``workers`` processes (this one and ``workers - 1`` spawned ones), yielding each result as it is
    ready; one result per job (a job whose worker died fails, never the call)."""
    if not jobs:
        return
    count = workers if workers is not None else default_workers()
    if count < 1:
        raise ValueError(f"the processes engine needs at least one worker, not {count}")
    queue = ordered(jobs)
    spawned = min(count - 1, len(queue) - 1)
    if spawned < 1:
        yield from (run_job(job) for job in queue)
        return
    pool = ProcessPoolExecutor(
        max_workers=spawned,
        mp_context=multiprocessing.get_context(START_METHOD),
        initializer=_start_worker,
    )
    pending: dict[Future[list[RescoreResult]], RescoreJob] = {}
    broken = False

    def fill() -> (
        None
    ):  # the pool takes jobs from the front of the queue, at most IN_FLIGHT_PER_WORKER per worker at a time
        nonlocal broken
        while queue and not broken and len(pending) < IN_FLIGHT_PER_WORKER * spawned:
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
        while queue or pending:
            yield from finished([f for f in pending if f.done()])
            fill()
            if queue:  # this process scores too, from the back of the queue, with the runner planning warmed (procbench.dsl.tasks.load_task's cache)
                yield run_job(queue.pop())
            elif pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                yield from finished(done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


ENGINES["processes"] = stream_with_processes
