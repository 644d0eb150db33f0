"""Re-scoring stored raw files when a spec's fingerprint changes.

Old results stay under their fingerprint; the new ones are stored as new rows (``origin_id`` = the
original submission) under the current fingerprint, which the board then shows.  The engine only
computes; this module plans the jobs and is the single writer of their results.  Re-running is
safe: a submission that already has a row under the current fingerprint is not planned again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path

from dsl.tasks import load_task, spec_path
from submissions import blobs, store
from submissions.details import ModelCard
from submissions.engines import RescoreJob, RescoreResult, get_engine
from submissions.intake import load_reported, register_spec
from submissions.rows import aggregate_frame, item_frame


@dataclass(frozen=True)
class RescoreReport:
    task: str
    fingerprints: dict[str, str]  # split -> current fingerprint
    rescored: list[str] = field(default_factory=list)  # new submission ids
    failed: list[tuple[str, str]] = field(default_factory=list)  # (origin id, reason)
    up_to_date: int = 0  # submissions that already had a row under the current fingerprint
    skipped_splits: list[str] = field(default_factory=list)  # splits whose data is missing


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
_COPIED = ("model", "metadata_json", "is_reference", "hidden", "deleted", "n_items", "created_at", "origin_id", "receipt_id", "filename", *CARD_FIELDS)


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


def plan(
    db_path: Path, spec_file: Path, *, data_root: Path, splits: Sequence[str] | None = None, inline: bool = False
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
            _, fingerprint = runner.gold(data_root, split)
        except (FileNotFoundError, ValueError):
            skipped.append(split)
            continue
        fingerprints[split] = fingerprint
        todo, done = _origins(db_path, spec.name, split, fingerprint)
        up_to_date += done
        for origin in todo:
            if origin.fingerprint == fingerprint:
                continue
            if origin.location is None:
                unplannable.append((origin.submission_id, "no raw file is stored for it (submitted before raw files were kept)"))
                continue
            path = blobs.blob_path(db_path, origin.location)
            jobs.append(
                RescoreJob(
                    job_id=origin.submission_id, task=spec.name, spec_path=str(spec_file.resolve()), split=split,
                    data_root=str(data_root), filename=origin.filename or f"predictions.{spec.predictions.format}",
                    content_sha256=origin.content_sha256, raw_path=None if inline else str(path),
                    raw_gzip=path.read_bytes() if inline else None, metadata_json=origin.metadata_json,
                    expected_fingerprint=fingerprint,
                )
            )
    return jobs, unplannable, fingerprints, skipped, up_to_date


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
) -> RescoreReport:
    """Re-score every stored submission of a task whose fingerprint is no longer current."""
    db_path = Path(db_path)
    spec_file = spec_path(task)
    spec, runner = load_task(spec_file)
    run = get_engine(engine)
    jobs, unplannable, fingerprints, skipped, up_to_date = plan(db_path, spec_file, data_root=data_root, splits=splits, inline=inline)
    results = run(jobs) if jobs else []
    by_id = {r.job_id: r for r in results}
    stamp = now or store.now()
    report = RescoreReport(spec.name, fingerprints, up_to_date=up_to_date, skipped_splits=skipped)
    with store.writer(db_path) as con, store.transaction(con):
        for split, fingerprint in fingerprints.items():
            gold, _ = runner.gold(data_root, split)
            register_spec(con, spec, split, fingerprint, gold.labels, runner=runner, data_root=data_root, gold_items=len(gold.items))
        for job in jobs:
            result = by_id.get(job.job_id) or RescoreResult(job.job_id, False, reason=f"the {engine} engine returned no result")
            if result.ok and result.fingerprint != fingerprints[job.split]:
                result = RescoreResult(
                    job.job_id, False, result.fingerprint, f"engine scored under fingerprint {result.fingerprint[:12]}, expected {fingerprints[job.split][:12]}"
                )
            if not result.ok:
                reason = f"re-scoring under fingerprint {fingerprints[job.split][:12]} failed: {result.reason}"
                store.add_status(con, job.job_id, store.StatusEvent("failed", stamp, reason, actor))
                report.failed.append((job.job_id, result.reason))
                continue
            report.rescored.append(_store_result(con, job, result, engine=engine, actor=actor, at=stamp))
        for origin_id, reason in unplannable:
            store.add_status(con, origin_id, store.StatusEvent("failed", stamp, f"cannot re-score: {reason}", actor))
            report.failed.append((origin_id, reason))
    load_reported(spec, runner, data_root=data_root, db_path=db_path)
    return report


def _store_result(con, job: RescoreJob, result: RescoreResult, *, engine: str, actor: str, at: datetime) -> str:
    origin = con.execute(f"SELECT {', '.join(_COPIED)}, team, content_sha256, fingerprint FROM submissions WHERE submission_id = ?", [job.job_id]).fetchone()
    values = dict(zip((*_COPIED, "team", "content_sha256", "fingerprint"), origin))
    sid = store.submission_id(job.task, job.split, values["team"], job.content_sha256, result.fingerprint)
    if store.exists(con, sid):
        return sid
    row = store.SubmissionRow(
        submission_id=sid, task=job.task, split=job.split, fingerprint=result.fingerprint, team=values["team"],
        model=values["model"], content_sha256=job.content_sha256, n_items=result.n_items, n_answered=result.n_answered, created_at=values["created_at"],
        metadata=json.loads(values["metadata_json"]), is_reference=values["is_reference"], origin_id=job.job_id,
        receipt_id=values["receipt_id"], filename=values["filename"], card=ModelCard(**{f: values[f] for f in CARD_FIELDS}),
        hidden=values["hidden"], deleted=values["deleted"],
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
