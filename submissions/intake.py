"""One intake path for the CLI and the site: validate → score → store, in one transaction.

Nothing reaches the database unless the file validated and scored completely; the rows of one
submission (submission, status trail, per-item scores, aggregates) commit together or not at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from dsl.model import TaskSpec
from runners.runner import Evaluation, TaskRunner
from submissions import store

REFERENCE_TEAM = "reference"


@dataclass(frozen=True)
class SubmissionOutcome:
    submission_id: str
    created: bool
    evaluation: Evaluation
    warnings: list[str] = field(default_factory=list)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def item_frame(sid: str, evaluation: Evaluation) -> pl.DataFrame:
    rows = [(sid, item.item_id, metric, float(value)) for item in evaluation.items for metric, value in item.values.items()]
    return pl.DataFrame(rows, schema={"submission_id": pl.String, "item_id": pl.String, "metric": pl.String, "value": pl.Float64}, orient="row")


def aggregate_frame(sid: str, evaluation: Evaluation) -> pl.DataFrame:
    rows = [(sid, "", "", metric, float(value), evaluation.n_items) for metric, value in evaluation.metrics.items()]
    for name, values in evaluation.slices.items():
        for value, result in values.items():
            rows += [(sid, name, value, metric, float(v), result.n_items) for metric, v in result.metrics.items()]
    return pl.DataFrame(
        rows,
        schema={"submission_id": pl.String, "slice": pl.String, "slice_value": pl.String, "metric": pl.String, "value": pl.Float64, "n_items": pl.Int64},
        orient="row",
    )


def _register(con: Any, spec: TaskSpec, split: str, evaluation_fingerprint: str, labels: Mapping[str, Mapping[str, str]]) -> None:
    store.register_task(
        con,
        task=spec.name,
        split=split,
        fingerprint=evaluation_fingerprint,
        title=spec.title,
        benchmark=spec.benchmark or spec.name,
        version=spec.version,
        primary_metric=spec.primary,
        hidden=split in spec.data.hidden,
        spec_json=json.dumps(spec.to_dict(), default=str),
        labels=labels,
    )


def submit(
    spec: TaskSpec,
    runner: TaskRunner,
    *,
    data_root: Path,
    split: str,
    predictions: Path,
    model: str,
    team: str,
    db_path: Path,
    metadata: Mapping[str, Any] | None = None,
) -> SubmissionOutcome:
    """Validate, score and store one prediction file.  Raises InvalidPredictions (nothing stored)."""
    metadata = dict(metadata or {})
    gold, fingerprint = runner.gold(data_root, split)
    records, notes = runner.validate(predictions, gold)  # raises before anything is written
    evaluation = runner.evaluate_records(gold, fingerprint, split, records, notes, metadata)
    content = file_sha256(predictions)
    sid = store.submission_id(spec.name, split, team, content, fingerprint)
    items, aggregates = item_frame(sid, evaluation), aggregate_frame(sid, evaluation)
    with store.writer(db_path) as con:
        if con.execute("SELECT 1 FROM submissions WHERE submission_id = ?", [sid]).fetchone():
            return SubmissionOutcome(sid, False, evaluation, notes)
        con.execute("BEGIN TRANSACTION")
        try:
            _register(con, spec, split, fingerprint, gold.labels)
            store.insert_scored(
                con, sid=sid, task=spec.name, split=split, fingerprint=fingerprint, team=team, model=model,
                content_sha256=content, metadata=metadata, is_reference=False, item_values=items,
                aggregates=aggregates, n_items=evaluation.n_items,
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return SubmissionOutcome(sid, True, evaluation, notes)


def load_reported(spec: TaskSpec, runner: TaskRunner, *, data_root: Path, db_path: Path) -> list[str]:
    """Store the spec's ``reported`` rows (paper numbers) as reference entries; returns their ids."""
    ids = []
    for row in spec.reported:
        try:
            gold, fingerprint = runner.gold(data_root, row.split)
        except (FileNotFoundError, ValueError):
            continue  # that split's data is not here; the row is loaded where it is
        content = hashlib.sha256(json.dumps([row.system, row.source, row.values, row.slice], default=str).encode()).hexdigest()
        sid = store.submission_id(spec.name, row.split, REFERENCE_TEAM, content, fingerprint)
        slice_name, slice_value = row.slice or ("", "")
        frame = pl.DataFrame(
            [(sid, slice_name, slice_value, metric, value, 0) for metric, value in row.values],
            schema={"submission_id": pl.String, "slice": pl.String, "slice_value": pl.String, "metric": pl.String, "value": pl.Float64, "n_items": pl.Int64},
            orient="row",
        )
        with store.writer(db_path) as con:
            if con.execute("SELECT 1 FROM submissions WHERE submission_id = ?", [sid]).fetchone():
                ids.append(sid)
                continue
            con.execute("BEGIN TRANSACTION")
            try:
                _register(con, spec, row.split, fingerprint, gold.labels)
                store.insert_scored(
                    con, sid=sid, task=spec.name, split=row.split, fingerprint=fingerprint, team=REFERENCE_TEAM,
                    model=row.system, content_sha256=content, metadata={"source": row.source, "note": row.note},
                    is_reference=True, item_values=pl.DataFrame(), aggregates=frame, n_items=0,
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        ids.append(sid)
    return ids
