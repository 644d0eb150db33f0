"""The site's side of an upload: a live validation report, then the one intake path (``submissions.submit``).

The site never writes to the store itself: it validates the upload exactly as intake does (the same
``procbench.submissions.staging.stage`` with the same limits, gzip expansion and name checks, then the task's own
reader on the staged copy), so the live report and *Submit* agree on every file, and hands the file
to ``submit`` as a ``SubmissionRequest`` (with the team token, the upload's own file name and the
model card), exactly as the CLI does.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from procbench.leaderboard import boardview, evidence, queries
from procbench.leaderboard.model import TaskInfo
from procbench.api import load_task
from procbench.paths import resolve_data_root
from procbench.runners.runtime._types import InvalidPredictions, Problem
from procbench.submissions import SubmissionRequest, submit
from procbench.submissions.details import ModelCard
from procbench.submissions.judging import SELF
from procbench.submissions.staging import BadFileName, FileRefused, IntakeLimits, stage


@dataclass(frozen=True)
class ValidationReport:
    ok: bool
    n_records: int = 0
    problems: tuple[Problem, ...] = ()
    warnings: tuple[str, ...] = ()
    error: str = ""  # a failure that is not about the file (missing data, unknown split)

    def problem_table(self) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "Line": [p.line for p in self.problems],
                "Item": [p.item_id or "" for p in self.problems],
                "Problem": [p.message for p in self.problems],
            },
            schema={"Line": pl.Int64, "Item": pl.String, "Problem": pl.String},
        )


@dataclass(frozen=True)
class Placed:
    """Where a stored submission landed on its board."""

    submission_id: str
    created: bool
    rank: int | None
    n_rows: int
    primary_value: float | None
    warnings: tuple[str, ...] = ()
    receipt: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


def safe_name(name: str) -> str:
    """The upload's base name with anything unusual replaced (extensions kept: readers look at them)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).name)[:120]
    # "." and ".." (or a name of dots only) would name the scratch folder or its parent, not a file in it;
    # the upload's own name still goes to intake, which refuses it with its message
    return cleaned if cleaned.strip(".") else "predictions"


def stage_upload(content: bytes, filename: str, folder: Path) -> Path:
    path = folder / safe_name(filename)
    path.write_bytes(content)
    return path


def data_root(db: Path, task: str, split: str) -> Path:
    """Score against the gold the board already uses (same fingerprint), else the configured data root."""
    row = queries.task_row(db, task, split) if db.exists() else None
    if row is not None:
        root = evidence.matching_root(task, split, row["fingerprint"])
        if root is not None:
            return root
    return resolve_data_root(None)


def validate(
    db: Path,
    task: str,
    split: str,
    path: Path,
    *,
    filename: str | None = None,
    limits: IntakeLimits | None = None,
) -> ValidationReport:
    """The live report: every problem with its line, or the number of records and the warnings.

    issue #17: the upload goes through intake's own staging (``stage``: name check, size and line
    limits, gzip expansion, a private copy) with intake's limits (``IntakeLimits.from_env()``), and
    the task's reader reads the staged copy, as ``submit`` does; so a file *Submit* refuses is never
    shown as valid, and a gzip upload intake accepts is not shown as invalid.  ``filename`` is the
    upload's own name (``path`` may be a scratch copy), as passed to ``submit``.
    """
    _, runner = load_task(task)
    try:
        gold, _ = runner.gold(data_root(db, task, split), split)
    except (FileNotFoundError, ValueError) as exc:
        return ValidationReport(False, error=str(exc))
    try:
        with stage(
            path, filename=filename, limits=limits or IntakeLimits.from_env(), scratch=path.parent
        ) as staged:
            try:
                records, notes = runner.validate(staged.path, gold)
            except InvalidPredictions as exc:
                return ValidationReport(False, problems=tuple(exc.problems))
            except Exception as exc:  # noqa: BLE001 - intake refuses a reader failure too (ScoringFailed); say so, never raise at the visitor
                return ValidationReport(
                    False,
                    problems=(Problem(None, f"the task's reader failed on this file: {exc}"),),
                )
    except BadFileName as exc:
        return ValidationReport(False, error=str(exc))
    except FileRefused as exc:
        return ValidationReport(False, problems=(exc.problem,))
    return ValidationReport(True, n_records=len(records), warnings=tuple(notes))


def parse_metadata(text: str) -> dict[str, Any]:
    """Extra metadata typed by the submitter: a JSON object (empty text is an empty object)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (
        RecursionError
    ):  # issue #29: a deeply nested text is the visitor's mistake, shown as one, never a traceback
        raise ValueError("metadata is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError('metadata must be a JSON object, e.g. {"open": true}')
    from procbench.submissions.metadata_checks import check_metadata

    return check_metadata(
        value
    )  # intake's own limits (size, depth, finite numbers), said before the upload is sent


def send(
    db: Path,
    *,
    task: str,
    split: str,
    path: Path,
    filename: str,
    model: str,
    team: str,
    token: str = "",
    metadata: Mapping[str, Any] | None = None,
    card: Mapping[str, str] | None = None,
) -> Placed:
    """Submit through intake and find the new row's rank.  Raises whatever ``submit`` raises."""
    spec, runner = load_task(task)
    request = SubmissionRequest(
        split=split,
        predictions=path,
        model=model,
        team=team or (None if token else "anonymous"),
        metadata=dict(metadata or {}),
        token=token or None,
        filename=filename,
        card=ModelCard(**card) if card else ModelCard(),
    )
    outcome = submit(request, spec, runner, data_root=data_root(db, task, split), db_path=db)
    return place(
        db,
        task,
        split,
        outcome.submission_id,
        outcome.created,
        tuple(outcome.warnings),
        getattr(outcome, "receipt", ""),
    )


def place(
    db: Path,
    task: str,
    split: str,
    submission_id: str,
    created: bool = True,
    warnings: tuple[str, ...] = (),
    receipt: str = "",
) -> Placed:
    row = queries.task_row(db, task, split)
    if row is None:
        return Placed(submission_id, created, None, 0, None, warnings, receipt)
    info = TaskInfo.from_row(row)
    view = boardview.build(db, info, interval_rows=0)
    ids = view.export["submission_id"].to_list() if view.n_rows else []
    if submission_id not in ids:
        return Placed(submission_id, created, None, len(ids), None, warnings, receipt)
    row = view.export.row(ids.index(submission_id), named=True)
    # issue #17: a self-judged row is ranked within its own group (procbench.leaderboard.boardview), counted among its peers
    judge = row.get("judge") or ""
    peers = (
        [(j == SELF) == (judge == SELF) for j in view.export["judge"]]
        if "judge" in view.export.columns
        else [True] * len(ids)
    )
    extra = {"judge": judge} if judge else {}
    return Placed(
        submission_id,
        created,
        row["rank"],
        sum(peers),
        row.get(info.primary),
        warnings,
        receipt,
        extra,
    )


def scratch() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="procbench-upload-")
