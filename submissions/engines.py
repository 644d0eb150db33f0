"""The re-scoring engine seam: self-contained jobs in, plain results out; the store is not touched.

``ENGINES[name](jobs)`` scores every job and yields (or returns) one ``RescoreResult`` per job, in
any order (``job_id`` pairs them up), as each is ready: the caller commits them in batches as they
come.  Jobs and results are frozen dataclasses of plain values, picklable, so an engine may ship them
to other processes or machines: a job names its spec file, split, data root and the raw file (a path
to the stored gzip blob, or its bytes when workers cannot see the coordinator's disk).  An engine
whose workers cannot see the spec file ships a :class:`PortableTask` (the checked spec and its
runner's plan, ``procbench.dsl.plan``) beside the jobs and scores them with ``run_job(job, task)``.  Only the
coordinating process writes the results to the store (``procbench.rescore``).  Other engines register themselves on import, e.g.
``submissions/ray_engine.py`` doing ``ENGINES["ray"] = run_with_ray``; ``get_engine("ray")``
imports ``procbench.submissions.ray_engine`` on demand.
"""

from __future__ import annotations

import importlib
import json
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procbench.submissions.rows import AggregateRow, ItemRow

if TYPE_CHECKING:
    from procbench.dsl.model import TaskSpec
    from procbench.runners.runtime.runner import TaskRunner


@dataclass(frozen=True)
class RescoreJob:
    """Re-score one stored raw file under the spec at ``spec_path`` (everything a worker needs)."""

    job_id: str  # the origin submission id
    task: str
    spec_path: str
    split: str
    data_root: str
    filename: str  # the upload's name: some readers pick the format by its suffix
    content_sha256: str  # of the decompressed file; checked before scoring
    raw_path: str | None = None  # gzip blob on a filesystem the worker can read
    raw_gzip: bytes | None = None  # or the gzip bytes themselves
    metadata_json: str = "{}"  # the submission's metadata (some scorers read it, e.g. cot=true)
    expected_fingerprint: str = (
        ""  # the coordinator's fingerprint; a worker computing another fails the job
    )
    change: str = ""  # what differs from the stored row's fingerprint (the spec, the data), for a failure's reason


@dataclass(frozen=True)
class RescoreResult:
    job_id: str
    ok: bool
    fingerprint: str = ""
    reason: str = ""  # why it failed (shown in the submission's status history)
    n_items: int = 0
    # a tuple, or from the processes engine the same rows as columns (procbench.submissions.rows.ItemColumns)
    items: Sequence[ItemRow] = ()
    aggregates: tuple[AggregateRow, ...] = ()
    warnings: tuple[str, ...] = ()
    n_answered: int | None = (
        None  # items with a prediction record (the row's coverage, migration 007)
    )


@dataclass(frozen=True)
class PortableTask:
    """What a worker that cannot see the spec file scores a job with: the checked spec and its runner's plan.

    The plan is plain data (``procbench.dsl.plan.is_plain``) holding the spec's digest, so the worker's runner
    (``procbench.dsl.plan.build``) computes the coordinator's fingerprint on the same data; ``version`` is the
    coordinator's procbench version (a worker running another fails the job rather than score with other code).
    """

    spec: TaskSpec
    plan: dict[str, Any]
    version: str = ""


def portable_task(spec_path: str | Path) -> PortableTask:
    """The :class:`PortableTask` of a spec file (checked and planned here, on the coordinator)."""
    from procbench.dsl.compiler import plan_of
    from procbench.dsl.tasks import load_task

    spec, runner = load_task(spec_path)
    return PortableTask(spec, plan_of(spec, runner.spec_digest), installed_version())


def installed_version() -> str:
    """This process's procbench version ('' when it is not installed as a distribution)."""
    from importlib import metadata

    try:
        return metadata.version("procbench")
    except metadata.PackageNotFoundError:
        return ""


_RUNNERS: dict[
    str, TaskRunner
] = {}  # plan digest -> runner: a worker process builds each task's runner (and reads its gold) once


def _runner_of(task: PortableTask) -> TaskRunner:
    from procbench.dsl.plan import build

    digest = str(task.plan.get("digest", ""))
    runner = _RUNNERS.get(digest)
    if runner is None:
        if len(_RUNNERS) >= 8:
            _RUNNERS.clear()
        runner = _RUNNERS[digest] = build(task.plan)
    return runner


Engine = Callable[[Sequence[RescoreJob]], Iterable[RescoreResult]]


def run_job(job: RescoreJob, task: PortableTask | None = None) -> RescoreResult:
    """Score one job in this process (under ``task`` when given, else the spec file the job names); never raises
    (a failure is a result with ``ok=False``)."""
    from procbench.runners.runtime._types import InvalidPredictions
    from procbench.submissions.blobs import materialise
    from procbench.submissions.judging import regrade_for_rescore
    from procbench.submissions.rows import COLUMNAR_ROWS, aggregate_rows, as_columns, item_rows

    scratch = ""
    try:
        if task is None:
            from procbench.dsl.tasks import load_task

            spec, runner = load_task(job.spec_path)
        else:
            spec, runner = task.spec, _runner_of(task)
        gold, fingerprint = runner.gold(Path(job.data_root), job.split)
        if job.expected_fingerprint and fingerprint != job.expected_fingerprint:
            return RescoreResult(
                job.job_id,
                False,
                fingerprint,
                f"worker computed fingerprint {fingerprint[:12]}, expected {job.expected_fingerprint[:12]} (the worker's data root or code differs from "
                f"the coordinator's; data root {job.data_root})",
            )
        if job.raw_path is not None:
            compressed: Path | bytes = Path(job.raw_path)
        elif job.raw_gzip is not None:
            compressed = job.raw_gzip
        else:
            return RescoreResult(job.job_id, False, fingerprint, "the job carries no raw file")
        with materialise(compressed, job.filename, expected_sha256=job.content_sha256) as path:
            scratch = str(path)
            records, notes = runner.validate(path, gold)
            metadata = json.loads(job.metadata_json)
            records = regrade_for_rescore(
                spec, gold, records, metadata
            )  # issue #17: a board-judged row is judged again, never by its file's verdicts
            evaluation = runner.evaluate_records(
                gold, fingerprint, job.split, records, notes, metadata
            )
        items: Sequence[ItemRow] = item_rows(evaluation)
        if (
            len(items) >= COLUMNAR_ROWS
        ):  # every engine stores a large result with DuckDB's Arrow scan
            items = as_columns(items)
        return RescoreResult(
            job.job_id,
            True,
            fingerprint,
            "",
            evaluation.n_items,
            items,
            aggregate_rows(evaluation),
            tuple(evaluation.warnings),
            evaluation.answered,
        )
    except InvalidPredictions as exc:
        # issue #29: say what changed (the data, the spec) and name the stored file, never its scratch copy
        why = f": {job.change}" if job.change else " under the current spec and data"
        return RescoreResult(
            job.job_id,
            False,
            "",
            _named(f"no longer valid{why}: {exc.render()}", scratch, job.filename),
        )
    except Exception as exc:  # noqa: BLE001 - one bad job must not sink the batch
        last = traceback.format_exception_only(exc)[-1].strip()
        return RescoreResult(
            job.job_id, False, "", _named(f"re-scoring failed: {last}", scratch, job.filename)
        )


def _named(reason: str, scratch: str, filename: str) -> str:
    """``reason`` with the scratch copy's path (a temporary folder) replaced by the stored file's name."""
    if not scratch:
        return reason
    return reason.replace(scratch, filename).replace(
        str(Path(scratch).parent), "<the stored file's scratch copy>"
    )


def run_local(jobs: Sequence[RescoreJob]) -> list[RescoreResult]:
    """Score the jobs one after another in this process."""
    return [run_job(job) for job in jobs]


ENGINES: dict[str, Engine] = {"local": run_local}


def get_engine(name: str) -> Engine:
    """A registered engine; ``submissions.<name>_engine`` is imported on demand to register it."""
    if name not in ENGINES and name.isidentifier():
        try:
            importlib.import_module(f"procbench.submissions.{name}_engine")
        except ModuleNotFoundError as exc:
            if exc.name != f"procbench.submissions.{name}_engine":
                raise
    if name not in ENGINES:
        raise KeyError(f"no re-scoring engine {name!r} (available: {', '.join(sorted(ENGINES))})")
    return ENGINES[name]
