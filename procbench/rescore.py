"""Re-scoring stored raw files when a spec's fingerprint changes.

Old results stay under their fingerprint; the new ones are stored as new rows (``origin_id`` = the
original submission) under the new fingerprint.  The engine only computes; this module plans the jobs
and is the single writer of their results, committed as they come in batches of ``commit_every``
(``PROCBENCH_RESCORE_COMMIT_EVERY``, default 32; a parallel engine's batch also at the first result that
comes ``FLUSH_AFTER_S`` or more after the batch's first, so this process writes while the workers score), so memory stays bounded
and a run killed half way keeps what it committed.  Re-running is safe and resumes: a submission that already has a row under
the new fingerprint is not planned again.

A board moves to the new fingerprint only once every stored submission of its split that can be
re-scored has a row under it (issue #29): a re-scoring in which any job fails registers the new
fingerprint and keeps what succeeded, and the board keeps showing the old one.  The condition is read
from the store, not from this run, so a run killed before the move is completed by the next one.
Before anything runs, a re-scoring whose data is of another kind than the board's (the real split
against the bundled samples, or the reverse) is refused, naming both data roots.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from functools import partial
from pathlib import Path

from procbench.dsl.model import TaskSpec
from procbench.dsl.tasks import load_task, spec_path
from procbench.logs import Progress
from procbench.runners.runtime.runner import TaskRunner
from procbench.submissions import blobs, boards, judging, provenance, store
from procbench.submissions.details import ModelCard
from procbench.submissions.engines import Engine, RescoreJob, RescoreResult, get_engine
from procbench.submissions.intake import load_reported, register_spec
from procbench.submissions.rows import aggregate_frame, item_frame


@dataclass(frozen=True)
class RescoreReport:
    task: str
    fingerprints: dict[str, str]  # split -> current fingerprint
    rescored: list[str] = field(default_factory=list)  # new submission ids
    failed: list[tuple[str, str]] = field(default_factory=list)  # (origin id, reason)
    up_to_date: int = 0  # submissions that already had a row under the current fingerprint
    skipped_splits: list[str] = field(default_factory=list)  # splits whose data is missing
    moved: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # split -> (fingerprint shown before, now)
    kept: dict[str, str] = field(
        default_factory=dict
    )  # split -> why its board still shows its old fingerprint


class DataKindMismatch(ValueError):
    """A re-scoring refused before it ran: its data root is of another kind than the rows it would re-score."""


@dataclass(frozen=True)
class _Origin:
    submission_id: str
    split: str
    team: str
    content_sha256: str
    fingerprint: str
    filename: str
    metadata_json: str
    location: str | None


CARD_FIELDS = tuple(f.name for f in fields(ModelCard))
_COPIED = (
    "model",
    "metadata_json",
    "is_reference",
    "hidden",
    "deleted",
    "n_items",
    "created_at",
    "origin_id",
    "receipt_id",
    "filename",
    "run_by",
    *CARD_FIELDS,
)


def _origins(db_path: Path, task: str, split: str, fingerprint: str) -> tuple[list[_Origin], int]:
    """Original, not deleted submissions of a split with no row under ``fingerprint`` yet."""
    with store.reader(db_path) as con:
        rows = con.execute(
            """
            SELECT s.submission_id, s.split, s.team, s.content_sha256, s.fingerprint, s.filename, s.metadata_json, r.location,
                   EXISTS (SELECT 1 FROM submissions n WHERE (n.origin_id = s.submission_id OR n.submission_id = s.submission_id) AND n.fingerprint = ?) AS done
            FROM submissions s LEFT JOIN raw_files r ON r.content_sha256 = s.content_sha256
            WHERE s.task = ? AND s.split = ? AND s.origin_id IN (s.submission_id, '') AND NOT s.is_reference AND NOT s.deleted
            ORDER BY s.created_at
            """,
            [fingerprint, task, split],
        ).fetchall()
    todo = [_Origin(*r[:8]) for r in rows if not r[8]]
    return todo, sum(1 for r in rows if r[8])


@dataclass(frozen=True)
class _Registered:
    """What a stored fingerprint was scored on (its ``tasks`` row, migrations 004 and 006)."""

    kind: str
    gold_items: int | None
    data_digest: str
    scorer_digest: str
    data_root: str


def _registered(db_path: Path, task: str, split: str) -> dict[str, _Registered]:
    with store.reader(db_path) as con:
        rows = con.execute(
            "SELECT fingerprint, coalesce(data_kind, 'unknown'), gold_items, coalesce(data_digest, ''), coalesce(scorer_digest, ''), coalesce(data_root, '')"
            " FROM tasks WHERE task = ? AND split = ?",
            [task, split],
        ).fetchall()
    return {fp: _Registered(*rest) for fp, *rest in rows}


_KIND_WORDS = {
    provenance.REAL: "the real data (its files match the spec's lock)",
    provenance.SAMPLE: "the bundled sample data",
    provenance.UNVERIFIED: "unverified data (files that do not match the spec's lock)",
    provenance.UNLOCKED: "the task's own data (the spec has no data lock for this split)",
}


def _data_words(kind: str, items: int | None, root: str) -> str:
    said = _KIND_WORDS.get(kind, "data of unknown kind")
    parts = [f"{items} items" if items is not None else "", f"data root {root}" if root else ""]
    return said + "".join(f", {p}" for p in parts if p)


def _change(old: _Registered | None, new: provenance.DataProvenance) -> str:
    """What differs between a stored row's fingerprint and the new one: the spec, the data, or both ('' when unknown)."""
    if old is None or old.kind == provenance.UNKNOWN:
        return ""
    spec_changed = bool(old.scorer_digest) and old.scorer_digest != new.scorer_digest
    data_changed = (
        old.kind != new.kind
        or old.gold_items != new.gold_items
        or old.data_digest != new.data_digest
        or not spec_changed
    )
    data = (
        f"the data differs (stored row: {_data_words(old.kind, old.gold_items, old.data_root)}; now: "
        f"{_data_words(new.kind, new.gold_items, new.data_root)})"
    )
    if (
        spec_changed
        and data_changed
        and (old.kind, old.gold_items, old.data_digest)
        != (new.kind, new.gold_items, new.data_digest)
    ):
        return f"the spec changed and {data}"
    if spec_changed:
        return "the spec changed (the data is of the same kind and size)"
    return f"{data}; the spec is unchanged"


def plan(
    db_path: Path,
    spec_file: Path,
    *,
    data_root: Path,
    splits: Sequence[str] | None = None,
    inline: bool = False,
) -> tuple[list[RescoreJob], list[tuple[str, str]], dict[str, str], list[str], int]:
    """(jobs, origins that cannot be re-scored with why, split -> fingerprint, skipped splits, up to date)."""
    spec, runner = load_task(spec_file)
    fingerprints: dict[str, str] = {}
    jobs: list[RescoreJob] = []
    unplannable: list[tuple[str, str]] = []
    skipped: list[str] = []
    up_to_date = 0
    for split in splits or spec.data.splits:
        try:
            gold, fingerprint = runner.gold(data_root, split)
        except (FileNotFoundError, ValueError):
            skipped.append(split)
            continue
        fingerprints[split] = fingerprint
        todo, done = _origins(db_path, spec.name, split, fingerprint)
        up_to_date += done
        registered = _registered(db_path, spec.name, split) if todo else {}
        now_on = (
            provenance.of(
                spec, split, data_root, gold_items=len(gold.items), scorer_digest=runner.spec_digest
            )
            if todo
            else None
        )
        for origin in todo:
            if origin.fingerprint == fingerprint:
                continue
            if origin.location is None:
                unplannable.append(
                    (
                        origin.submission_id,
                        "no raw file is stored for it (submitted before raw files were kept)",
                    )
                )
                continue
            path = blobs.blob_path(db_path, origin.location)
            jobs.append(
                RescoreJob(
                    job_id=origin.submission_id,
                    task=spec.name,
                    spec_path=str(spec_file.resolve()),
                    split=split,
                    data_root=str(data_root),
                    filename=origin.filename or f"predictions.{spec.predictions.format}",
                    content_sha256=origin.content_sha256,
                    raw_path=None if inline else str(path),
                    raw_gzip=path.read_bytes() if inline else None,
                    metadata_json=origin.metadata_json,
                    expected_fingerprint=fingerprint,
                    change=_change(registered.get(origin.fingerprint), now_on) if now_on else "",
                )
            )
    return jobs, unplannable, fingerprints, skipped, up_to_date


def _incompatible(stored: str, now: str) -> bool:
    """Rows on the real data re-scored on the samples or on files that differ from the lock, or sample rows on the real data: refused.

    Sample rows on another copy of the samples (unverified: a gold fix being tried), unverified rows on
    any data, and a spec that dropped its lock (unlocked) are left to the all-or-nothing rule: the board
    moves only if every row re-scores.
    """
    return (stored == provenance.REAL and now in (provenance.SAMPLE, provenance.UNVERIFIED)) or (
        stored == provenance.SAMPLE and now == provenance.REAL
    )


def check_data_kind(
    db_path: Path,
    spec: TaskSpec,
    runner: TaskRunner,
    *,
    data_root: Path,
    fingerprints: dict[str, str],
    jobs: Sequence[RescoreJob],
) -> None:
    """Refuse (DataKindMismatch) re-scoring a board's rows on data of another kind than they were scored on (``_incompatible``).

    The kinds are those the store recorded for the board's fingerprint and for each re-scored row's
    (``real``, ``sample``, ``unverified``; ``unknown`` rows, registered before migration 004, are not
    compared).  Real rows against the bundled samples is the case this exists for: every job would fail
    on ids the samples do not have, or worse, a sample-sized file would score.
    """
    problems: list[str] = []
    origins_by_split: dict[str, set[str]] = {}
    with store.reader(db_path) as con:
        for job in jobs:
            row = con.execute(
                "SELECT fingerprint FROM submissions WHERE submission_id = ?", [job.job_id]
            ).fetchone()
            if row:
                origins_by_split.setdefault(job.split, set()).add(str(row[0]))
        shown = {split: boards.current(con, spec.name, split) for split in fingerprints}
        # a board that shows no submitted rows holds nothing to protect (e.g. one an earlier re-scoring emptied): only its rows' data counts
        shown = {
            split: fp
            for split, fp in shown.items()
            if fp and boards.rows_under(con, spec.name, split, fp)
        }
    for split, fingerprint in fingerprints.items():
        stored = _registered(db_path, spec.name, split)
        if not stored:
            continue
        gold, _ = runner.gold(data_root, split)
        now_on = provenance.of(
            spec, split, data_root, gold_items=len(gold.items), scorer_digest=runner.spec_digest
        )
        compared = {
            fp
            for fp in (shown.get(split), *origins_by_split.get(split, ()))
            if fp and fp != fingerprint
        }
        for fp in sorted(compared):
            old = stored.get(fp)
            if old is None or not _incompatible(old.kind, now_on.kind):
                continue
            which = "the board shows rows" if fp == shown.get(split) else "stored rows were"
            problems.append(
                f"{spec.name} / {split}: {which} scored on {_data_words(old.kind, old.gold_items, old.data_root)} (fingerprint {fp[:12]}); "
                f"this re-scoring reads {_data_words(now_on.kind, now_on.gold_items, str(data_root))}"
            )
            break
    if problems:
        raise DataKindMismatch(
            "refused: re-scoring would score rows on another kind of data than they were scored on; nothing was re-scored or stored\n  "
            + "\n  ".join(problems)
            + "\n  hint: point --data-dir (or PROCBENCH_DATA) at the data the board was scored on; `procbench admin board list TASK` shows each "
            "fingerprint's data"
        )


def rescore(
    db_path: Path,
    task: str | Path,
    *,
    data_root: Path,
    engine: str = "local",
    splits: Sequence[str] | None = None,
    inline: bool = False,
    actor: str = "",
    now: datetime | None = None,
    commit_every: int | None = None,
    workers: int | None = None,
) -> RescoreReport:
    """Re-score every stored submission of a task whose fingerprint is no longer current; move each board whose rows all re-scored."""
    db_path = Path(db_path)
    every = commit_every or _commit_every()
    spec_file = spec_path(task)
    spec, runner = load_task(spec_file)
    run = get_engine(engine)
    if workers is not None:  # the processes engine's pool size (issue #31)
        if engine != "processes":
            raise ValueError(
                f"workers is a setting of the processes engine, not of the {engine} engine"
            )
        run = partial(run, workers=workers)  # type: ignore[call-arg]  # the processes engine takes it (procbench.submissions.processes_engine)
    jobs, unplannable, fingerprints, skipped, up_to_date = plan(
        db_path, spec_file, data_root=data_root, splits=splits, inline=inline
    )
    with store.reader(
        db_path
    ) as con:  # only boards that exist are re-scored onto: a re-scoring adds no new (empty) board
        fingerprints = {
            split: fp
            for split, fp in fingerprints.items()
            if boards.has_board(con, spec.name, split)
        }
    store.crash_point(
        "rescore.planned"
    )  # fault injection (tests): PROCBENCH_CRASH_AT names the point, store.crash_point
    check_data_kind(
        db_path, spec, runner, data_root=data_root, fingerprints=fingerprints, jobs=jobs
    )
    store.crash_point("rescore.before_jobs")
    stamp = now or store.now()
    report = RescoreReport(spec.name, fingerprints, up_to_date=up_to_date, skipped_splits=skipped)
    if (
        jobs
        or unplannable
        or any(
            not _is_registered(db_path, spec.name, split, fp) for split, fp in fingerprints.items()
        )
    ):
        with (
            store.writer(db_path) as con,
            store.transaction(con),
        ):  # the new fingerprints first: each batch of rows below is committed under them
            for split, fingerprint in fingerprints.items():
                gold, _ = runner.gold(data_root, split)
                register_spec(
                    con,
                    spec,
                    split,
                    fingerprint,
                    gold.labels,
                    runner=runner,
                    data_root=data_root,
                    gold_items=len(gold.items),
                )
        by_id = {job.job_id: job for job in jobs}
        commit = _Committer(
            db_path, spec, by_id, fingerprints, report, engine=engine, actor=actor, at=stamp
        )
        batch: list[RescoreResult] = []
        # a parallel engine's results are also committed once the batch's first has waited FLUSH_AFTER_S: this process
        # writes while the workers score, instead of writing everything after the last one (issue #31)
        flush_after = FLUSH_AFTER_S if engine != "local" else math.inf
        first = 0.0
        for result in _run_with_progress(
            run, jobs, spec.name, engine
        ):  # results as the engine yields them, committed in bounded batches
            if result.job_id not in by_id or result.job_id in commit.seen:
                continue  # not a job of this run, or a second result for one: the first counts
            commit.seen.add(result.job_id)
            if not batch:
                first = time.monotonic()
            batch.append(result)
            if len(batch) >= every or time.monotonic() - first >= flush_after:
                commit(batch)
                batch = []
        store.crash_point("rescore.after_jobs")
        lost = [
            RescoreResult(job.job_id, False, reason=f"the {engine} engine returned no result")
            for job in jobs
            if job.job_id not in commit.seen
        ]
        commit(batch + lost, unplannable)
    else:
        store.crash_point("rescore.after_jobs")
    store.crash_point("rescore.after_commit")
    with (
        store.reader(db_path) as con
    ):  # the paper rows, under the new fingerprint of each board that is to move (none for a no-op)
        moving = {
            split
            for split, fp in fingerprints.items()
            if boards.current(con, spec.name, split) != fp
        }
    if moving:
        load_reported(
            replace(spec, reported=tuple(r for r in spec.reported if r.split in moving)),
            runner,
            data_root=data_root,
            db_path=db_path,
        )
    store.crash_point("rescore.before_move")
    _move_boards(db_path, spec.name, fingerprints, report, actor=actor, at=stamp)
    return report


def _run_with_progress(
    run: Engine, jobs: list[RescoreJob], task: str, engine: str
) -> Iterator[RescoreResult]:
    """The engine's results as they come, a progress line per result on stderr (procbench.logs); the local engine is
    given one job at a time."""
    if not jobs:
        return
    progress = Progress(f"rescore {task}", len(jobs))
    if (
        engine != "local"
    ):  # a parallel engine takes every job at once and yields results as its batches finish
        for result in run(jobs):
            progress.step(f"submission {result.job_id[:12]} with the {engine} engine")
            yield result
        return
    for job in jobs:
        yield from run([job])
        progress.step(f"{job.split} submission {job.job_id[:12]}")


COMMIT_EVERY = (
    32  # results per transaction: a killed run keeps what it committed (the next run skips it)
)
COMMIT_VARIABLE = "PROCBENCH_RESCORE_COMMIT_EVERY"
FLUSH_AFTER_S = (
    0.5  # a parallel engine's results wait at most about this long for their transaction
)


def _commit_every() -> int:
    text = os.environ.get(COMMIT_VARIABLE, "").strip()
    if not text:
        return COMMIT_EVERY
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{COMMIT_VARIABLE} must be a positive whole number, not {text[:40]!r}")
    return int(text)


@dataclass
class _Committer:
    """Writes a batch of results (and at the end the origins that could not be planned) in one transaction."""

    db_path: Path
    spec: TaskSpec
    jobs: dict[str, RescoreJob]
    fingerprints: dict[str, str]
    report: RescoreReport
    engine: str
    actor: str
    at: datetime
    seen: set[str] = field(default_factory=set)

    def __call__(
        self, results: Sequence[RescoreResult], unplannable: Sequence[tuple[str, str]] = ()
    ) -> None:
        if not results and not unplannable:
            return
        report, fingerprints, stamp, actor = self.report, self.fingerprints, self.at, self.actor
        with store.writer(self.db_path) as con, store.transaction(con):
            for result in results:
                job = self.jobs[result.job_id]
                if result.ok and result.fingerprint != fingerprints[job.split]:
                    expected = fingerprints[job.split][:12]
                    why = f"engine scored under fingerprint {result.fingerprint[:12]}, expected {expected}"
                    result = RescoreResult(job.job_id, False, result.fingerprint, why)
                if not result.ok:
                    reason = f"re-scoring under fingerprint {fingerprints[job.split][:12]} failed: {result.reason}"
                    store.add_status(
                        con, job.job_id, store.StatusEvent("failed", stamp, reason, actor)
                    )
                    report.failed.append((job.job_id, result.reason))
                    continue
                report.rescored.append(
                    _store_result(
                        con, self.spec, job, result, engine=self.engine, actor=actor, at=stamp
                    )
                )
            for origin_id, reason in unplannable:
                store.add_status(
                    con,
                    origin_id,
                    store.StatusEvent("failed", stamp, f"cannot re-score: {reason}", actor),
                )
                report.failed.append((origin_id, reason))
            store.crash_point("rescore.before_commit")
        store.crash_point("rescore.after_commit")


def _is_registered(db_path: Path, task: str, split: str, fingerprint: str) -> bool:
    return fingerprint in _registered(db_path, task, split)


_NOT_YET = """
    SELECT count(*) FILTER (WHERE NOT done AND (re_scorable OR fingerprint = ?)), count(*) FILTER (WHERE re_scorable OR fingerprint = ?) FROM (
        SELECT s.fingerprint, r.content_sha256 IS NOT NULL AS re_scorable,
               EXISTS (SELECT 1 FROM submissions n WHERE (n.origin_id = s.submission_id OR n.submission_id = s.submission_id) AND n.fingerprint = ?) AS done
        FROM submissions s LEFT JOIN raw_files r ON r.content_sha256 = s.content_sha256
        WHERE s.task = ? AND s.split = ? AND s.origin_id IN (s.submission_id, '') AND NOT s.is_reference AND NOT s.deleted
    )
"""


def _boards_to_move(
    con, task: str, fingerprints: dict[str, str], report: RescoreReport
) -> dict[str, tuple[str, str, int]]:
    """split -> (shown, new fingerprint, submissions) for each board whose every re-scorable submission has a row under its new fingerprint."""
    ready = {}
    for split, fingerprint in fingerprints.items():
        shown = boards.current(con, task, split)
        if shown in (None, fingerprint):
            continue
        missing, total = con.execute(
            _NOT_YET, [fingerprint, fingerprint, fingerprint, task, split]
        ).fetchone() or (0, 0)
        if missing:
            report.kept[split] = (
                f"{missing} of {total} stored submissions have no row under the new fingerprint {fingerprint[:12]}; the board still shows "
                f"{str(shown)[:12]} (`procbench admin board point {task} {split} {fingerprint[:12]}` shows the new one anyway)"
            )
        else:
            ready[split] = (str(shown), fingerprint, int(total))
    return ready


def _move_boards(
    db_path: Path,
    task: str,
    fingerprints: dict[str, str],
    report: RescoreReport,
    *,
    actor: str,
    at: datetime,
) -> None:
    """Point each board at its new fingerprint once every stored submission that can be re-scored has a row under it."""
    with store.reader(db_path) as con:  # most runs move nothing: decided without the exclusive lock
        if not _boards_to_move(con, task, fingerprints, RescoreReport(task, {})):
            _boards_to_move(con, task, fingerprints, report)  # for the reasons it keeps boards
            return
    with (
        store.writer(db_path) as con,
        store.transaction(con),
    ):  # decided again under the lock: a submission may have arrived
        for split, (shown, fingerprint, total) in _boards_to_move(
            con, task, fingerprints, report
        ).items():
            reason = f"re-scored: every one of the {total} stored submissions that can be re-scored has a row under it"
            if (
                boards.move(
                    con,
                    task,
                    split,
                    fingerprint,
                    how=boards.RESCORE,
                    reason=reason,
                    actor=actor,
                    at=at,
                )
                is not None
            ):
                report.moved[split] = (shown, fingerprint)


def _store_result(
    con,
    spec: TaskSpec,
    job: RescoreJob,
    result: RescoreResult,
    *,
    engine: str,
    actor: str,
    at: datetime,
) -> str:
    origin = con.execute(
        f"SELECT {', '.join(_COPIED)}, team, content_sha256, fingerprint FROM submissions WHERE submission_id = ?",
        [job.job_id],
    ).fetchone()
    values = dict(zip((*_COPIED, "team", "content_sha256", "fingerprint"), origin))
    sid = store.submission_id(
        job.task, job.split, values["team"], job.content_sha256, result.fingerprint
    )
    if store.exists(con, sid):
        return sid
    row = store.SubmissionRow(
        submission_id=sid,
        task=job.task,
        split=job.split,
        fingerprint=result.fingerprint,
        team=values["team"],
        model=values["model"],
        content_sha256=job.content_sha256,
        n_items=result.n_items,
        n_answered=result.n_answered,
        created_at=values["created_at"],
        metadata=json.loads(values["metadata_json"]),
        is_reference=values["is_reference"],
        origin_id=job.job_id,
        receipt_id=values["receipt_id"],
        filename=values["filename"],
        card=ModelCard(**{f: values[f] for f in CARD_FIELDS}),
        hidden=values["hidden"],
        deleted=values["deleted"],
        run_by=values["run_by"],
        # issue #34: a board-judged row was graded again with this spec's prompts (procbench.submissions.judging.regrade_for_rescore)
        judge_prompt_digest=judging.board_prompt_digest(spec, json.loads(values["metadata_json"])),
    )
    reason = f"re-scored from fingerprint {values['fingerprint'][:12]} by the {engine} engine"
    store.insert_submission(
        con,
        row,
        items=item_frame(sid, result.items),
        aggregates=aggregate_frame(sid, result.aggregates),
        history=[store.StatusEvent("rescored", at, reason, actor)],
    )
    return sid
