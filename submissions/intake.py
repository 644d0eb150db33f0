"""One intake path for the CLI and the site: check → stage → validate → score → store.

Nothing reaches ``submissions`` unless the file validated and scored completely: the submission,
its status trail, per-item scores, aggregates and raw-file row commit in one transaction.  Any
failure stores no submission rows, writes one ``failures`` row under a receipt id, and raises an
error (``procbench.submissions.errors``) that carries the receipt and the reason the user sees.
"""

from __future__ import annotations

import contextvars
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procbench.dsl.board_spec import BoardSpec, board_of
from procbench.runners.runtime import digests
from procbench.runners.runtime._types import GoldDataError, InvalidPredictions, Problem, clip
from procbench.runners.runtime.data_findings import lacks_something
from procbench.runners.runtime.judge_terms import JudgeError
from procbench.runners.runtime.runner import Evaluation, TaskRunner
from procbench.submissions import (
    blobs,
    boards,
    judging,  # issue #17 (self-judged verdicts)
    provenance,
    store,
)
from procbench.submissions.auth import AuthError, authenticate
from procbench.submissions.details import (
    MAX_NAME_CHARS,
    REFERENCE_TEAM,
    RUN_BY,
    DetailError,
    ModelCard,
    check_name,
)  # REFERENCE_TEAM: reserved there (issue #17)
from procbench.submissions.errors import (
    MissingData,
    RejectedPredictions,
    ScoringFailed,
    SubmissionRefused,
)
from procbench.submissions.metadata_checks import check_metadata
from procbench.submissions.quotas import RESERVED_STAGE, QuotaExceeded, check_quota, quota_for
from procbench.submissions.rows import aggregate_frame, aggregate_rows, item_frame, item_rows
from procbench.submissions.sql import duckdb, engine_only
from procbench.submissions.staging import (
    BadFileName,
    FileRefused,
    IntakeLimits,
    StagedFile,
    StagingFailed,
    stage,
)

if TYPE_CHECKING:  # a submit takes the spec's board fields from the cached plan (dsl/board_spec.py), not its syntax tree
    from procbench.dsl.model import TaskSpec

MAX_REASON_CHARS = (
    20_000  # of a failures row's reason and of a ScoringFailed message (they may quote the file)
)
INTERNAL_STAGE = "internal"  # issue #29: intake itself failed (a bug, not the file's fault): logged, not counted against max_attempts


@dataclass(frozen=True)
class SubmissionOutcome:
    submission_id: str
    created: bool  # False when the same file was already stored (idempotent resubmission)
    evaluation: Evaluation
    warnings: list[str] = field(default_factory=list)
    receipt: str = ""
    team: str = ""
    # the fingerprint the task's board showed, read where intake stored or found the row (None: no board, or not
    # read): the console warns from it when the row is not on its board without opening the store again (issue #31)
    board_fingerprint: str | None = None


@dataclass(frozen=True)
class SubmissionRequest:
    """What a submitter asks intake to store: one prediction file, for one split, under a model and team.

    The submitter's word, checked by ``submit`` (names, metadata, card, ``run_by``) before anything is
    staged.  ``team=None`` stores under the token's team (``anonymous`` without a token);
    ``filename`` is the upload's own name when ``predictions`` is a temporary copy (the site);
    ``run_by`` records who ran the model (``submitter``, or ``operator`` for the board's own
    baselines; issue #34): the caller's word, so the site's upload never sets it.
    """

    split: str
    predictions: Path
    model: str
    team: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    token: str | None = None
    filename: str | None = None
    card: ModelCard = field(default_factory=ModelCard)
    run_by: str = "submitter"

    @property
    def shown(self) -> str:
        """The file's name as the user gave it (the upload's own name, .gz included): what messages and failures rows name."""
        return self.filename if self.filename is not None else Path(self.predictions).name


class _StoredUnderAnotherModel(Exception):
    """The same file is already stored for this task, split and team, under another model name (issue #18)."""


def new_receipt() -> str:
    # secrets.token_hex(8), whose module (with random, base64 and hmac) a submit need not import (issue #31)
    return os.urandom(8).hex()


def register_spec(
    con: duckdb.DuckDBPyConnection,
    spec: TaskSpec | BoardSpec,
    split: str,
    fingerprint: str,
    labels: Mapping[str, Mapping[str, str]],
    *,
    runner: TaskRunner | None = None,
    data_root: Path | None = None,
    gold_items: int | None = None,
) -> None:
    """The task row for this spec, split and fingerprint (its item labels, and what the gold is), once; for a
    fingerprint already registered, its display fields (title, names, rank_partial, ...: the stored spec) follow this spec.

    With ``runner`` and ``data_root`` the row records the gold's provenance (``procbench.submissions.provenance``:
    real split, bundled sample or unverified data, item count, lock digest, scorer digest), computed
    only for a new fingerprint (the lock's files are hashed once per process).
    """
    board = board_of(spec)

    def known() -> provenance.DataProvenance | None:  # asked for by a new fingerprint only
        if runner is None or data_root is None:
            return None
        return provenance.of(
            board.whole(), split, data_root, gold_items=gold_items, scorer_digest=runner.spec_digest
        )

    store.register_task(
        con,
        task=board.name,
        split=split,
        fingerprint=fingerprint,
        title=board.title,
        benchmark=board.benchmark or board.name,
        version=board.version,
        primary_metric=board.primary,
        hidden=split in board.hidden,
        spec_json=board.spec_json,
        labels=labels,
        provenance=known,
    )


def refuse_unfit_data(
    spec: BoardSpec, runner: TaskRunner, data_root: Path, split: str, *, force: bool = False
) -> None:
    """What ``check --data`` refuses about the split (procbench.dsl.datacheck.refuse_unfit_data, in its words); nothing when the data fits.

    The split is read once, into the runner's cache, and scoring reuses it.  The data checks (and
    difflib, for their suggestions) are imported only when the split lacks something a check across
    splits looks for, or is unreadable, as ``score`` does (issue #31).
    """
    if not force:
        try:
            gold, _ = runner.gold(data_root, split)
        except GoldDataError:
            pass  # the check says what the read found, in its words
        else:
            if not lacks_something(runner, gold):
                return
    from procbench.dsl.datacheck import refuse_unfit_data as refuse

    refuse(spec.whole(), runner, data_root, split, force=force)


def _cut(text: str) -> str:
    """A request's string as a ``failures`` row keeps it: at most the name limit, saying how much was cut."""
    return clip(text, MAX_NAME_CHARS + 40)


@dataclass
class _Attempt:
    """The facts of one intake attempt, for its ``failures`` row."""

    db_path: Path
    receipt: str
    task: str
    split: str
    team: str
    model: str
    filename: str
    clock: Callable[[], datetime]
    content: str = ""
    unlogged: str = ""  # why the failures row could not be written, if it could not
    shown: str = ""  # the file's name as the user gave it (the CLI's file, the site's upload): what messages name (issue #29)
    reserved: bool = (
        False  # holds one of the team's max_attempts (a failures row at stage ``attempt``)
    )
    settled: bool = False  # the reservation was replaced by a failure or a stored submission

    def log(self, stage: str, reason: str) -> None:
        """Write the failures row (in place of this attempt's reservation); never masks the original error."""
        self.settled = (
            True  # issue #29: whatever happens below, release() must not run a second write
        )
        try:
            # issue #17: a refused request never creates a store (no store yet: nothing is logged), and
            # the request's own strings are stored cut to the name limit (a refused 10 MB name is not kept)
            with store.writer(self.db_path, create=False) as con, store.transaction(con):
                release_attempt(con, self.receipt)
                store.record_failure(
                    con,
                    receipt_id=self.receipt,
                    task=_cut(self.task),
                    split=_cut(self.split),
                    team=_cut(self.team),
                    model=_cut(self.model),
                    filename=_cut(self.filename),
                    content_sha256=self.content,
                    stage=stage,
                    reason=clip(reason, MAX_REASON_CHARS),
                    at=self.clock(),
                )
        except Exception as exc:  # noqa: BLE001 - the user's error matters more than the log's
            self.unlogged = f"{type(exc).__name__}: {exc}"
            self.release()

    def release(self) -> None:
        """issue #29: free this attempt's reservation if nothing else has (every exit path of intake ends here)."""
        if not self.reserved:
            return
        self.reserved = False
        try:
            with store.writer(self.db_path, create=False) as con, store.transaction(con):
                release_attempt(con, self.receipt)
        except Exception:  # noqa: BLE001, S110 - never masks the original error; a left reservation expires (quotas.STALE_ATTEMPT)
            pass

    def refuse(
        self, stage: str, message: str, next_slot: datetime | None = None
    ) -> SubmissionRefused:
        self.log(stage, message)
        return SubmissionRefused(message, receipt=self.receipt, stage=stage, next_slot=next_slot)

    def reject(self, stage: str, problems: list[Problem], source: str) -> RejectedPredictions:
        error = RejectedPredictions(problems, source, receipt=self.receipt, stage=stage)
        self.log(stage, error.render())
        return error


class OverTime(Exception):
    """Reading and scoring one file took longer than the intake's limit."""


class _ScoringClock:
    """One time budget for reading and scoring a staged file (``IntakeLimits.max_score_seconds``; 0 = none).

    Each stage runs in a daemon worker thread that the intake waits for until the budget is spent;
    past it the submission is refused and nothing is stored.  Python cannot stop a thread, so an
    overrunning scorer finishes (or not) in the background and its result is dropped: the limit
    bounds the submitter's wait and what is stored, not the CPU spent (a process ends it on exit).
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds if seconds > 0 else None

    def run(self, work: Callable[[], Any]) -> Any:
        if self.deadline is None:
            return work()
        outcome: dict[str, Any] = {}
        context = contextvars.copy_context()

        def target() -> None:
            try:
                outcome["value"] = context.run(work)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the waiting thread
                outcome["error"] = exc

        worker = threading.Thread(target=target, name="procbench-scoring", daemon=True)
        worker.start()
        worker.join(max(0.0, self.deadline - time.monotonic()))
        if worker.is_alive():
            raise OverTime(
                f"reading and scoring the file took longer than {self.seconds:g} seconds (the intake's scoring time limit, PROCBENCH_MAX_SCORE_SECONDS); "
                "nothing was stored"
            )
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]


@dataclass(frozen=True)
class _Gate:
    """Who may store this file, and under which submission id: auth and quota's question, asked before scoring and again under the store's lock."""

    task: str
    split: str
    team: str | None
    token: str | None
    sid_for: Callable[[str], str]


def _gate(con: duckdb.DuckDBPyConnection, gate: _Gate, now: datetime) -> tuple[str, bool]:
    """(the team to store under, whether this exact submission is already stored).

    Raises AuthError or QuotaExceeded.  An idempotent resubmission never hits the quota.
    """
    resolved = authenticate(con, team=gate.team, token=gate.token, now=now)
    if store.exists(con, gate.sid_for(resolved)):
        return resolved, True
    check_quota(con, task=gate.task, split=gate.split, team=resolved, now=now)
    return resolved, False


def release_attempt(con: duckdb.DuckDBPyConnection, receipt: str) -> None:
    """Drop the attempt reserved under ``receipt`` (replaced by its failure, or by the stored submission)."""
    con.execute(
        "DELETE FROM failures WHERE receipt_id = ? AND stage = ?", [receipt, RESERVED_STAGE]
    )


def _reserve(con: duckdb.DuckDBPyConnection, attempt: _Attempt, team: str, now: datetime) -> None:
    """issue #17: take one of the team's ``max_attempts`` before validating, under the store's lock.

    Checking the cap only before validating let concurrent failing uploads all pass the check
    (5 reached the validator with a cap of 3).  The reservation is a ``failures`` row at stage
    ``attempt``, counted like a failed attempt: a failure replaces it with its own row, a stored
    submission deletes it in its transaction.  A process killed while scoring leaves it behind,
    still counted: the file did reach the scorer.
    """
    store.record_failure(
        con,
        receipt_id=attempt.receipt,
        task=attempt.task,
        split=attempt.split,
        team=team,
        model=attempt.model,
        filename=attempt.filename,
        content_sha256=attempt.content,
        stage=RESERVED_STAGE,
        reason="attempt reserved: the file is being validated and scored",
        at=now,
    )
    attempt.reserved = True


def _precheck(attempt: _Attempt, gate: _Gate, now: datetime) -> str:
    """Auth and quota before any scoring work; with a ``max_attempts`` cap, the attempt is reserved under the lock."""
    token, team = gate.token, gate.team
    if not attempt.db_path.exists() and token:
        raise attempt.refuse(
            "auth", "the token is not valid (unknown or mistyped); nothing was stored"
        )
    if not attempt.db_path.exists() or (not token and not store.is_gated(attempt.db_path)):
        return team if team is not None else "anonymous"  # no tokens, no quotas: nothing to refuse
    try:
        with store.reader(attempt.db_path) as con:
            resolved, duplicate = _gate(con, gate, now)
            capped = not duplicate and _capped(con, attempt)
        if capped:  # re-checked and reserved in one transaction under the exclusive lock
            with store.writer(attempt.db_path) as con, store.transaction(con):
                resolved, duplicate = _gate(con, gate, now)
                if not duplicate and _capped(con, attempt):
                    _reserve(con, attempt, resolved, now)
    except AuthError as exc:
        raise attempt.refuse("auth", str(exc)) from None
    except QuotaExceeded as exc:
        raise attempt.refuse("quota", str(exc), exc.next_slot) from None
    return resolved


def _capped(con: duckdb.DuckDBPyConnection, attempt: _Attempt) -> bool:
    quota = quota_for(con, attempt.task, attempt.split)
    return quota is not None and quota.max_attempts is not None


def submit(
    request: SubmissionRequest,
    spec: TaskSpec | BoardSpec,
    runner: TaskRunner,
    *,
    data_root: Path,
    db_path: Path,
    limits: IntakeLimits | None = None,
    now: datetime | None = None,
    judge: judging.BoardJudge | None = None,
) -> SubmissionOutcome:
    """Validate, score and store the request's prediction file for ``spec``; the same file twice is stored once.

    ``spec`` is the checked spec, or its board fields (``procbench.dsl.tasks.load_board``: what the console passes,
    read from the cached plan).

    The rest is the board's, not the submitter's: its data (``data_root``), store (``db_path``), intake
    limits (default: ``IntakeLimits.from_env()``) and judge (default: ``BoardJudge.from_env()``, none
    when unconfigured); ``now`` fixes the clock.
    Raises RejectedPredictions (an InvalidPredictions), SubmissionRefused (a ValueError),
    MissingData (a FileNotFoundError) or ScoringFailed, each with a ``receipt``; nothing stored.
    """
    with engine_only():  # intake's SQL is execute() and fetch*: DuckDB's engine alone (issue #31)
        return _submit(
            request,
            board_of(spec),
            runner,
            data_root=data_root,
            db_path=db_path,
            limits=limits,
            now=now,
            judge=judge,
        )


def _submit(
    request: SubmissionRequest,
    spec: BoardSpec,
    runner: TaskRunner,
    *,
    data_root: Path,
    db_path: Path,
    limits: IntakeLimits | None = None,
    now: datetime | None = None,
    judge: judging.BoardJudge | None = None,
) -> SubmissionOutcome:
    """:func:`submit`'s work."""
    db_path = Path(db_path)
    split, predictions, filename, team = (
        request.split,
        Path(request.predictions),
        request.filename,
        request.team,
    )
    clock: Callable[[], datetime] = (lambda: now) if now is not None else store.now
    received = clock()
    attempt = _Attempt(
        db_path, new_receipt(), spec.name, split, team or "", request.model, request.shown, clock
    )
    attempt.shown = request.shown  # the upload's own name (.gz included), as failures rows keep it
    try:
        check_name("model", request.model)
        if team is not None:
            check_name("team", team)
        card = request.card.checked()
        if request.run_by not in RUN_BY or request.run_by in (
            "paper",
            "unknown",
        ):  # papers' rows come from specs; unknown is for rows stored before 009
            raise DetailError(f"run_by must be submitter or operator (got {request.run_by!r})")
        metadata = check_metadata(
            request.metadata
        )  # issue #29: size, depth, non-finite numbers; before anything is staged
    except DetailError as exc:
        raise attempt.refuse("request", str(exc)) from None
    if split not in spec.splits:
        raise attempt.refuse(
            "request",
            f"task {spec.name!r} has no split {split!r} (splits: {', '.join(spec.splits)})",
        )
    try:
        refuse_unfit_data(
            spec, runner, data_root, split
        )  # what check --data refuses about this split, in its words (reads it once, cached)
        gold, fingerprint = runner.gold(data_root, split)
    except FileNotFoundError as exc:
        message = f"missing data for {spec.name} / {split}: {exc}"
        attempt.log("data", message)
        raise MissingData(message, receipt=attempt.receipt) from exc
    except ValueError as exc:
        raise attempt.refuse("data", str(exc)) from exc

    limits = limits or IntakeLimits.from_env()
    if judge is None and spec.judged:
        try:
            judge = judging.BoardJudge.from_env()
        except JudgeError as exc:
            raise attempt.refuse(
                "judge", f"the board's judge is misconfigured: {exc}; nothing was stored"
            ) from None
    try:
        scratch = (
            blobs.scratch_root(db_path) if db_path.exists() else None
        )  # issue #17: no store yet, no folder beside it
        with stage(predictions, filename=filename, limits=limits, scratch=scratch) as staged:
            store.crash_point(
                "intake.staged"
            )  # tests: a process killed with its private copy on disk (admin check --fix removes it)
            return _score_and_store(
                spec,
                runner,
                attempt,
                staged,
                data_root=data_root,
                gold=gold,
                fingerprint=fingerprint,
                team=team,
                token=request.token,
                metadata=dict(metadata or {}),
                card=card,
                received=received,
                limits=limits,
                judge=judge,
                run_by=request.run_by,
            )
    except BadFileName as exc:
        raise attempt.refuse("request", str(exc)) from None
    except FileRefused as exc:
        raise attempt.reject("file", [exc.problem], attempt.filename) from None
    except StagingFailed as exc:  # issue #29: the board's disk, not the file: a receipt and one line, never a traceback or a temporary path
        message = f"the upload {attempt.filename!r} could not be copied to the board's disk ({exc.reason}); nothing was stored: try again later"
        attempt.log("store", message)
        raise ScoringFailed(message, receipt=attempt.receipt, stage="store") from None
    except (SubmissionRefused, RejectedPredictions, MissingData, ScoringFailed):
        raise
    except Exception as exc:  # issue #29: a crash anywhere still leaves a receipt and a failures row, and frees the attempt slot
        attempt.log(INTERNAL_STAGE, f"intake failed: {type(exc).__name__}: {clip(str(exc), 2000)}")
        raise ScoringFailed(
            f"intake failed ({type(exc).__name__}); nothing was stored",
            receipt=attempt.receipt,
            stage=INTERNAL_STAGE,
        ) from exc
    finally:
        if not attempt.settled:  # stored, or left by a BaseException (KeyboardInterrupt, a worker's SystemExit): the slot is freed
            attempt.release()


def _unstaged(text: str, staged: StagedFile, shown: str) -> str:
    """issue #29: ``text`` with the private staging copy's path written as the user's file (a reader names the path it read)."""
    return text.replace(str(staged.path), shown).replace(str(staged.path.parent.parent), "")


def _unstaged_problems(problems: list[Problem], staged: StagedFile, shown: str) -> list[Problem]:
    return [p.replace(message=_unstaged(p.message, staged, shown)) for p in problems]


def _stored_already(
    attempt: _Attempt, gate: _Gate, now: datetime
) -> tuple[str, str, tuple[Any, ...], str | None] | None:
    """(team, submission id, its ``(receipt_id, model)``, the board's fingerprint) when this exact submission is stored
    already, else None.

    A read (shared lock, no migration, no read-path sync): a resubmitted file, which stores nothing,
    costs no write (issue #31).  Anything this read cannot tell (no store yet, a team that needs a
    token, a store that cannot be read, a reserved attempt to release) is left to the storing
    transaction, which decides and says why as before.
    """
    if attempt.reserved or not attempt.db_path.exists():
        return None
    try:
        with store.reader(attempt.db_path) as con:
            resolved = authenticate(con, team=gate.team, token=gate.token, now=now)
            sid = gate.sid_for(resolved)
            stored = con.execute(
                "SELECT receipt_id, model FROM submissions WHERE submission_id = ?", [sid]
            ).fetchone()
            shown = boards.current(con, attempt.task, attempt.split) if stored else None
    except (AuthError, duckdb.Error, OSError, TimeoutError):
        return None
    return (resolved, sid, stored, shown) if stored is not None else None


def _duplicate(
    task: str,
    attempt: _Attempt,
    sid: str,
    stored: tuple[Any, ...] | None,
    evaluation: Evaluation,
    notes: list[str],
    team: str,
    shown: str | None,
) -> SubmissionOutcome:
    """The outcome of a file stored already (its stored receipt); _StoredUnderAnotherModel when stored under another model."""
    if (
        stored and stored[1] != attempt.model
    ):  # issue #18: never hand back another model's row as this one's
        raise _StoredUnderAnotherModel(
            f"this file is already stored for {task}/{attempt.split} as model {stored[1]!r} (submission {sid}); a file is stored once, "
            f"so it cannot also be {attempt.model!r}; nothing was stored\n  hint: submit {attempt.model!r}'s own predictions, or resubmit "
            f"under the name {stored[1]!r} to get the stored submission back"
        )
    return SubmissionOutcome(
        sid, False, evaluation, notes, stored[0] if stored else "", team, board_fingerprint=shown
    )


def _score_and_store(
    spec: BoardSpec,
    runner: TaskRunner,
    attempt: _Attempt,
    staged: StagedFile,
    *,
    data_root: Path,
    gold: Any,
    fingerprint: str,
    team: str | None,
    token: str | None,
    metadata: dict[str, Any],
    card: ModelCard,
    received: datetime,
    limits: IntakeLimits,
    judge: judging.BoardJudge | None = None,
    run_by: str = "submitter",
) -> SubmissionOutcome:
    attempt.content = staged.sha256
    attempt.filename = staged.filename
    split = attempt.split

    def sid_for(name: str) -> str:
        return store.submission_id(spec.name, split, name, staged.sha256, fingerprint)

    gate = _Gate(spec.name, split, team, token, sid_for)
    attempt.team = _precheck(attempt, gate, attempt.clock())

    clock = _ScoringClock(limits.max_score_seconds)
    try:
        records, notes = clock.run(lambda: runner.validate(staged.path, gold))
    except OverTime as exc:  # the scorer did not finish in time: ScoringFailed, exit 6 (docs/submissions.md's table)
        attempt.log("validate", str(exc))
        raise ScoringFailed(str(exc), receipt=attempt.receipt, stage="validate") from None
    except InvalidPredictions as exc:
        raise attempt.reject(
            "validate", _unstaged_problems(exc.problems, staged, attempt.shown), attempt.shown
        ) from None
    except Exception as exc:  # a reader bug must still leave a receipt
        reason = _unstaged(str(exc), staged, attempt.shown)
        attempt.log("validate", f"the task's reader failed: {type(exc).__name__}: {reason}")
        raise ScoringFailed(
            clip(f"the task's reader failed on this file: {reason}", MAX_REASON_CHARS),
            receipt=attempt.receipt,
            stage="validate",
        ) from exc
    notes = [_unstaged(note, staged, attempt.shown) for note in notes]
    validated = attempt.clock()
    if judge is not None and spec.judged:
        # issue #17: the board's own judge grades the answers; the verdicts the file carried are discarded.
        # Outside the scoring clock: each request is bounded by the judge's own deadline and retries.
        try:
            records = judge.grade(spec.whole(), gold, records, metadata, db_path=attempt.db_path)
        except (JudgeError, OSError) as exc:
            raise attempt.refuse(
                "judge",
                f"the board's judge ({judge.model}) could not grade this file: {exc}; nothing was stored",
            ) from None
        metadata = judging.mark(metadata, records, board_judge=judge.model)
    else:
        metadata = judging.mark(
            metadata, records
        )  # issue #17: verdicts read from the file are the submitter's; the `judge` key is intake's alone
    try:
        evaluation = clock.run(
            lambda: runner.evaluate_records(gold, fingerprint, split, records, notes, metadata)
        )
    except OverTime as exc:  # the scorer did not finish in time: ScoringFailed, exit 6 (docs/submissions.md's table)
        attempt.log("score", str(exc))
        raise ScoringFailed(str(exc), receipt=attempt.receipt, stage="score") from None
    except (
        InvalidPredictions
    ) as exc:  # a measure's missing/invalid = "refuse": the file's problems, as validation's are
        raise attempt.reject(
            "score", _unstaged_problems(exc.problems, staged, attempt.shown), attempt.shown
        ) from None
    except Exception as exc:
        if isinstance(
            exc, ValueError
        ):  # scoring stopped on the gold (a value outside a class set): say why as check --data does
            try:
                refuse_unfit_data(spec, runner, data_root, split, force=True)
            except ValueError as refused:
                raise attempt.refuse("data", str(refused)) from exc
        reason = _unstaged(str(exc), staged, attempt.shown)
        attempt.log("score", f"scoring failed: {type(exc).__name__}: {reason}")
        raise ScoringFailed(
            clip(f"scoring failed: {reason}", MAX_REASON_CHARS), receipt=attempt.receipt
        ) from exc
    scored = attempt.clock()

    # Everything but the inserts is prepared before taking the store's lock.
    items, aggregates = item_rows(evaluation), aggregate_rows(evaluation)
    frames = {
        attempt.team: (
            item_frame(sid_for(attempt.team), items),
            aggregate_frame(sid_for(attempt.team), aggregates),
        )
    }
    history = [
        store.StatusEvent("received", received),
        store.StatusEvent("validated", validated),
        store.StatusEvent("scored", scored),
    ]
    try:
        store.crash_point("intake.before_blob")
        # bytes the store has no blob of were never stored (a stored submission keeps its blob): straight to the write
        held = blobs.blob_path(attempt.db_path, blobs.location_of(staged.sha256)).is_file()
        blob = blobs.put(attempt.db_path, staged)
        store.crash_point("intake.before_store")
        known = _stored_already(attempt, gate, scored) if held else None
        if known is not None:  # the same file again: answered by a read, no write (issue #31)
            resolved, sid, stored, shown = known
            return _duplicate(spec.name, attempt, sid, stored, evaluation, notes, resolved, shown)
        with store.writer(attempt.db_path) as con, store.transaction(con):
            if (
                attempt.reserved
            ):  # stored or a duplicate, the reservation ends here (counted again if stored)
                release_attempt(con, attempt.receipt)
            resolved, duplicate = _gate(con, gate, scored)
            sid = sid_for(resolved)
            if duplicate:
                found = con.execute(
                    "SELECT receipt_id, model FROM submissions WHERE submission_id = ?", [sid]
                ).fetchone()
                shown = boards.current(con, spec.name, split)
                outcome = _duplicate(
                    spec.name, attempt, sid, found, evaluation, notes, resolved, shown
                )
                attempt.settled = True  # the reservation is released in this transaction
                return outcome
            if (
                resolved not in frames
            ):  # the team changed between the pre-check and now (a token revoked and reissued)
                frames[resolved] = (item_frame(sid, items), aggregate_frame(sid, aggregates))
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
            blob = blobs.put(
                attempt.db_path, staged
            )  # again under the lock (a stat when present): `admin check --fix` may have collected it as an orphan
            blobs.record(con, blob, scored)
            row = store.SubmissionRow(
                submission_id=sid,
                task=spec.name,
                split=split,
                fingerprint=fingerprint,
                team=resolved,
                model=attempt.model,
                content_sha256=staged.sha256,
                n_items=evaluation.n_items,
                n_answered=evaluation.answered,
                created_at=scored,
                metadata=metadata,
                receipt_id=attempt.receipt,
                filename=staged.filename,
                card=card,
                run_by=run_by,
                # '' unless a judge graded it (judging.board_prompt_digest), so a task no judge grades needs no whole spec
                judge_prompt_digest=judging.board_prompt_digest(spec.whole(), metadata)
                if spec.judged
                else "",
            )
            store.insert_submission(
                con, row, items=frames[resolved][0], aggregates=frames[resolved][1], history=history
            )
            shown = boards.current(con, spec.name, split)  # as committed with the row
            store.crash_point("store.before_commit")
    except _StoredUnderAnotherModel as exc:
        raise attempt.refuse("duplicate", str(exc)) from None
    except AuthError as exc:
        raise attempt.refuse("auth", str(exc)) from None
    except QuotaExceeded as exc:
        raise attempt.refuse("quota", str(exc), exc.next_slot) from None
    except (duckdb.Error, OSError, TimeoutError) as exc:
        reason = (
            exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        )  # issue #29: an OSError's text names temporary paths
        attempt.log("store", f"the store failed: {type(exc).__name__}: {reason}")
        raise ScoringFailed(
            f"the store failed: {reason}", receipt=attempt.receipt, stage="store"
        ) from exc
    attempt.settled = True  # the reservation was released in the storing transaction
    store.crash_point("store.after_commit")
    return SubmissionOutcome(
        sid, True, evaluation, notes, attempt.receipt, resolved, board_fingerprint=shown
    )


def load_reported(
    spec: TaskSpec, runner: TaskRunner, *, data_root: Path, db_path: Path
) -> list[str]:
    """Store the spec's ``reported`` rows (paper numbers) as reference entries; returns their ids.

    Each row declares the data it was reported on (``reported_on``: the lock digest of its split,
    ``procbench.submissions.provenance.lock_digest``); the board shows it only over that data, so a row
    loaded beside the bundled samples is stored but appears on no sample board.  Its table's ``url`` is the
    row's paper link (the card's paper) and its ``date`` the metadata's ``date`` (the progress chart's date
    of the row); the paper ran the model (``run_by``).  One write for all.
    """
    prepared = []
    for row in spec.reported:
        try:
            gold, fingerprint = runner.gold(data_root, row.split)
        except (FileNotFoundError, ValueError):
            continue  # that split's data is not here; the row is loaded where it is
        content = digests.sha256(
            json.dumps([row.system, row.source, row.values, row.slice], default=str).encode()
        ).hexdigest()
        sid = store.submission_id(spec.name, row.split, REFERENCE_TEAM, content, fingerprint)
        slice_name, slice_value = row.slice or ("", "")
        aggregates = aggregate_frame(
            sid,
            [(slice_name, slice_value, metric, float(value), 0) for metric, value in row.values],
        )
        prepared.append((row, gold, fingerprint, sid, content, aggregates))
    if not prepared:
        return []
    with store.writer(db_path) as con, store.transaction(con):
        for row, gold, fingerprint, sid, content, aggregates in prepared:
            if store.exists(con, sid):
                continue
            register_spec(
                con,
                spec,
                row.split,
                fingerprint,
                gold.labels,
                runner=runner,
                data_root=data_root,
                gold_items=len(gold.items),
            )
            stamp = store.now()
            stored = store.SubmissionRow(
                submission_id=sid,
                task=spec.name,
                split=row.split,
                fingerprint=fingerprint,
                team=REFERENCE_TEAM,
                model=row.system,
                content_sha256=content,
                n_items=0,
                created_at=stamp,
                metadata={
                    "source": row.source,
                    "note": row.note,
                    **({"date": row.date} if row.date else {}),
                },
                is_reference=True,
                reported_on=provenance.lock_digest(spec, row.split),
                card=ModelCard(paper_url=row.url),
                run_by="paper",
            )
            history = [store.StatusEvent("scored", stamp, "reported in the literature")]
            store.insert_submission(
                con, stored, items=item_frame(sid, []), aggregates=aggregates, history=history
            )
    return [sid for _, _, _, sid, _, _ in prepared]
