"""``procbench export eee``: the public board as Every Eval Ever (EEE, schema 0.3.0) records.

Layout (EEE's datastore layout, ``data/<collection>/<developer>/<model>/<uuid>.json``)::

    data/<task>/<team>/<model>/<uuid>.json           one aggregate record per visible submission and split
    data/<task>/<team>/<model>/<uuid>_samples.jsonl  its per-instance lines (public splits only)

One record per row of the ``board`` view (current fingerprint, not hidden, not deleted): every metric
and slice value the board shows, as an ``evaluation_results`` entry with the number of items, and on
the whole split the board's bootstrap interval and its method (``procbench.submissions.intervals``: only where
the board shows one).  A submitted row is an ``evaluation_run`` scored by the board
(``third_party``); a reported (paper) row is ``documentation`` (``other``: the paper's authors may
or may not have made the model).  The provenance (task, split, fingerprint, data kind, data digest,
scorer digest, submission id) is in ``eval_library.additional_details``.

Per-instance lines come from the ``public_item_scores`` view, so a hidden split has none (and its
record no ``detailed_evaluation_results``); each carries the item's primary-metric value, its stored
statistics and labels, and the prediction file's line(s) for the item when the stored file is JSON
lines with a top-level ``id`` (then ``procbench import eee`` can re-score it: ``rescorable`` = "true").
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl

import procbench
from procbench.export.hub_dataset import _task_info
from procbench.imports.eee import result_id
from procbench.runners.runtime._types import ItemScore
from procbench.submissions import blobs, intervals, store
from procbench.submissions.store import reader

SCHEMA_VERSION = "0.3.0"
SOURCE_NAME = "procbench leaderboard"
LIBRARY = "procbench"
MAX_RAW_LINE_CHARS = 1_000_000  # a prediction line longer than this is left out of the instance line (the record says so)
_WEIGHTS = {"open": "open_weights", "closed": "closed_weights"}


@dataclass(frozen=True)
class EeeFolder:
    """What was written: the aggregate records and the per-instance files."""

    root: Path
    records: tuple[Path, ...] = ()
    instances: tuple[Path, ...] = ()
    instance_lines: int = 0
    skipped: tuple[str, ...] = field(
        default_factory=tuple
    )  # why a board row was not exported, one line each


def _frame(con: Any, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())  # type: ignore[return-value]


def slug(text: str, limit: int = 64) -> str:
    """A safe path component for a stored name (team, model): letters, digits, ``._-`` only, never ``.``/``..`` or empty."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:limit].strip("-.")
    return cleaned or "_"


def record_uuid(submission_id: str) -> str:
    """A version-4-shaped UUID derived from the submission id (EEE's file names require one): the same row, the same name."""
    raw = bytearray(hashlib.sha256(f"procbench-eee:{submission_id}".encode()).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def _strings(values: dict[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in values.items() if v is not None and v != ""}


def _source_data(info: dict[str, Any], row: dict[str, Any], split: str) -> dict[str, Any]:
    details = _strings(
        {
            "task": row["task"],
            "split": split,
            "data_kind": row.get("data_kind"),
            "data_digest": row.get("data_digest"),
        }
    )
    if info["url"]:
        return {
            "dataset_name": info["benchmark"],
            "source_type": "url",
            "url": [info["url"]],
            "additional_details": details,
        }
    return {
        "dataset_name": info["benchmark"],
        "source_type": "other",
        "additional_details": details,
    }


def _metric_config(info: dict[str, Any], metric: str) -> dict[str, Any]:
    spec_metric: dict[str, Any] = next((m for m in info["metrics"] if m["name"] == metric), {})
    config: dict[str, Any] = {
        "metric_id": f"{info['task']}.{metric}",
        "metric_name": spec_metric.get("display") or metric,
        "lower_is_better": not spec_metric.get("higher_is_better", True),
        "score_type": "continuous",
        "min_score": None,  # not declared by the spec (PAGED's official scores exceed 100 %)
        "max_score": None,
        "metric_unit": "proportion" if spec_metric.get("percent") else "points",
    }
    if spec_metric.get("description"):
        config["evaluation_description"] = str(spec_metric["description"])
    return config


def _item_scores(frame: pl.DataFrame) -> list[ItemScore]:
    grouped: dict[str, dict[str, float]] = {}
    for item_id, metric, value in zip(
        frame["item_id"].to_list(), frame["metric"].to_list(), frame["value"].to_list()
    ):
        grouped.setdefault(str(item_id), {})[metric] = float(value)
    return [ItemScore(item_id, values) for item_id, values in sorted(grouped.items())]


def _prediction_lines(db_path: Path, con: Any, content_sha256: str) -> dict[str, list[str]] | None:
    """Item id -> the stored prediction file's lines for it, when the file is JSON lines with a top-level ``id``; else None."""
    row = next(
        iter(
            con.execute(
                "SELECT location FROM raw_files WHERE content_sha256 = ?", [content_sha256]
            ).fetchall()
        ),
        None,
    )
    if not row:
        return None
    path = blobs.blob_path(db_path, row[0])
    by_item: dict[str, list[str]] = {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                text = line.rstrip("\r\n")
                if not text.strip():
                    continue
                value = json.loads(text)
                if (
                    not isinstance(value, dict)
                    or not isinstance(value.get("id"), (str, int))
                    or isinstance(value.get("id"), bool)
                ):
                    return None
                by_item.setdefault(str(value["id"]), []).append(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError, RecursionError):
        return None
    return by_item


def _is_correct(score: float, percent: bool) -> bool:
    """Full marks: 1.0 on a proportion metric, above 0 on any other."""
    return score >= 1.0 if percent else score > 0.0


def export_eee(
    db_path: Path,
    directory: Path,
    *,
    task: str | None = None,
    organization: str = "procbench",
    now: datetime | None = None,
) -> EeeFolder:
    """Write the board of ``db_path`` (one task, or every task) as EEE records under ``directory``/data."""
    root = Path(directory)
    stamp = now or datetime.now(timezone.utc)
    records: list[Path] = []
    instance_files: list[Path] = []
    n_lines = 0
    with reader(db_path) as con:
        current = _frame(
            con,
            "SELECT task, split, fingerprint, title, benchmark, primary_metric, hidden, spec_json, data_kind, data_digest, scorer_digest, gold_items "
            "FROM current_tasks " + ("WHERE task = ? " if task else "") + "ORDER BY task, split",
            [task] if task else None,
        )
        if task and current.is_empty():
            raise LookupError(f"the store has no board of task {task!r}")
        for board in current.iter_rows(named=True):
            long = _frame(
                con,
                "SELECT * FROM board WHERE task = ? AND split = ? ORDER BY created_at, submission_id",
                [board["task"], board["split"]],
            )
            if long.is_empty():
                continue
            info = _task_info(board)
            items = (
                _frame(
                    con,
                    "SELECT submission_id, item_id, metric, value FROM public_item_scores WHERE task = ? AND split = ?",
                    [board["task"], board["split"]],
                )
                if not board["hidden"]
                else pl.DataFrame()
            )
            labels = _frame(
                con,
                "SELECT item_id, dimension, value FROM item_labels WHERE task = ? AND split = ? AND fingerprint = ?",
                [board["task"], board["split"], board["fingerprint"]],
            )
            label_of: dict[str, dict[str, str]] = {}
            for item_id, dimension, value in labels.iter_rows():
                label_of.setdefault(str(item_id), {})[dimension] = str(value)
            for (sid,), rows in long.partition_by(
                "submission_id", as_dict=True, maintain_order=True
            ).items():
                sub = next(
                    iter(
                        con.execute(
                            "SELECT content_sha256, n_answered FROM submissions WHERE submission_id = ?",
                            [sid],
                        ).fetchall()
                    ),
                    None,
                )
                public = (
                    _item_scores(items.filter(pl.col("submission_id") == sid))
                    if not items.is_empty()
                    else []
                )
                # the board's intervals resample every stored item, on a hidden split too (published over >= the interval floor only)
                stored = (
                    store.submission_rows(con, "item_scores", [str(sid)])[str(sid)]
                    if not rows["is_reference"][0]
                    else None
                )
                every = (
                    public
                    if not board["hidden"]
                    else (_item_scores(pl.from_arrow(stored)) if stored is not None else [])  # type: ignore[arg-type]
                )
                record, lines = _record(
                    db_path,
                    con,
                    board,
                    info,
                    str(sid),
                    rows,
                    sub,
                    every,
                    public,
                    label_of,
                    organization,
                    stamp,
                )
                folder = (
                    root
                    / "data"
                    / slug(board["task"])
                    / slug(str(rows["team"][0]))
                    / slug(str(rows["model"][0]))
                )
                folder.mkdir(parents=True, exist_ok=True)
                name = record_uuid(str(sid))
                if lines:
                    body = "".join(
                        json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"
                        for line in lines
                    ).encode("utf-8")
                    samples = folder / f"{name}_samples.jsonl"
                    samples.write_bytes(body)
                    instance_files.append(samples)
                    n_lines += len(lines)
                    record["detailed_evaluation_results"]["checksum"] = hashlib.sha256(
                        body
                    ).hexdigest()
                path = folder / f"{name}.json"
                path.write_text(
                    json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
                    encoding="utf-8",
                )
                records.append(path)
    return EeeFolder(root, tuple(records), tuple(instance_files), n_lines)


def _record(
    db_path: Path,
    con: Any,
    board: dict[str, Any],
    info: dict[str, Any],
    sid: str,
    rows: pl.DataFrame,
    sub: tuple[Any, ...] | None,
    stored_items: list[ItemScore],
    public_items: list[ItemScore],
    label_of: dict[str, dict[str, str]],
    organization: str,
    stamp: datetime,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    task, split, primary = board["task"], board["split"], board["primary_metric"]
    first = rows.row(0, named=True)
    reference = bool(first["is_reference"])
    content, n_answered = sub or ("", None)
    metadata = _metadata(first["metadata_json"])
    weights = first["weights"]
    evaluation_id = f"{LIBRARY}/{task}/{split}/{sid}"
    whole = {
        m: float(v)
        for m, v, s in zip(
            rows["metric"].to_list(), rows["value"].to_list(), rows["slice"].to_list()
        )
        if s == "" and v is not None
    }
    metrics = [m["name"] for m in info["metrics"] if m["name"] in whole] + sorted(
        m for m in whole if m not in {x["name"] for x in info["metrics"]}
    )
    if reference:
        found: dict[str, Any] = {}
        why: dict[str, str] = dict.fromkeys(
            metrics, "reported in the literature: no per-item scores to resample"
        )
    elif not stored_items:
        found, why = {}, dict.fromkeys(metrics, "no per-item scores stored")
    else:
        found, why = intervals.whole_split_intervals(task, stored_items, whole, metrics, label_of)
    results = []
    ordered = rows.sort(["slice", "slice_value"], maintain_order=True)
    for row in ordered.iter_rows(named=True):
        if row["value"] is None or not math.isfinite(float(row["value"])):
            continue
        n = int(row["slice_n_items"] or 0)
        score: dict[str, Any] = {"score": float(row["value"])}
        details = _strings(
            {
                "slice": row["slice"],
                "slice_value": row["slice_value"],
                "n_items": n if not reference else None,
            }
        )
        if not reference:
            uncertainty: dict[str, Any] = {"num_samples": n}
            ci = found.get(row["metric"]) if row["slice"] == "" else None
            if ci is not None:
                uncertainty["confidence_interval"] = {
                    "lower": ci.low,
                    "upper": ci.high,
                    "confidence_level": ci.confidence,
                    "method": intervals.method_text(ci.n_resamples),
                }
                uncertainty["num_bootstrap_samples"] = ci.n_resamples
            else:
                details["no_interval"] = (
                    why.get(row["metric"], "no interval")
                    if row["slice"] == ""
                    else "this export carries the board's intervals of the whole split only"
                )
            score["uncertainty"] = uncertainty
        if details:
            score["details"] = details
        name = f"{task} {split}" + (
            f" [{row['slice']}={row['slice_value']}]" if row["slice"] else ""
        )
        results.append(
            {
                "evaluation_result_id": result_id(
                    task, split, row["metric"], row["slice"], row["slice_value"]
                ),
                "evaluation_name": name,
                "source_data": _source_data(info, board, split),
                "evaluation_timestamp": row["created_at"].isoformat()
                if row.get("created_at")
                else "",
                "metric_config": _metric_config(info, row["metric"]),
                "score_details": score,
            }
        )
    provenance = _strings(
        {
            "task": task,
            "split": split,
            "fingerprint": board["fingerprint"],
            "submission_id": sid,
            "data_kind": board.get("data_kind") or "unknown",
            "data_digest": board.get("data_digest") or "",
            "scorer_digest": board.get("scorer_digest"),
            "team": first["team"],
            "items_in_split": board.get("gold_items"),
            "answered": n_answered,
            "board_version": procbench.__version__,
        }
    )
    provenance["data_digest"] = (
        board.get("data_digest") or ""
    )  # always present, '' when the data is not the locked split (samples, other files)
    model_details = _strings(
        {
            "deployment_type": "unknown",
            "model_availability": _WEIGHTS.get(weights or "", "unknown"),
            **{key: first[key] for key in ("size_class", "method_family", "paper_url", "code_url")},
        }
    )
    source = {
        "source_name": SOURCE_NAME,
        "source_type": "documentation" if reference else "evaluation_run",
        "source_organization_name": organization,
        "evaluator_relationship": "other" if reference else "third_party",
        "additional_details": _strings(
            {
                "how": "reported in the literature, loaded from the task's spec"
                if reference
                else "predictions submitted to the board, scored by procbench",
                "source": metadata.get("source") if reference else None,
                "note": metadata.get("note") if reference else None,
            }
        ),
    }
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": first["created_at"].isoformat() if first.get("created_at") else "",
        "retrieved_timestamp": str(int(stamp.timestamp())),
        "source_metadata": source,
        "model_info": {
            "name": str(first["model"]),
            "id": str(first["model"]),
            "additional_details": model_details,
        },
        "eval_library": {
            "name": LIBRARY,
            "version": procbench.__version__,
            "additional_details": provenance,
        },
        "evaluation_results": results,
    }
    lines: list[dict[str, Any]] = []
    if (
        public_items and not board["hidden"]
    ):  # public_item_scores has no rows of a hidden split: this is a second lock
        lines = _instances(
            db_path,
            con,
            task,
            split,
            primary,
            info,
            evaluation_id,
            str(first["model"]),
            content,
            public_items,
            label_of,
        )
    if lines:
        name = record_uuid(sid)
        folder = f"data/{slug(task)}/{slug(str(first['team']))}/{slug(str(first['model']))}"
        rescorable = all(line["output"]["raw"] for line in lines)
        record["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": f"{folder}/{name}_samples.jsonl",
            "hash_algorithm": "sha256",
            "total_rows": len(lines),
            "additional_details": {
                "rescorable": "true" if rescorable else "false",
                "metric": primary,
            },
        }
    return record, lines


def _metadata(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _instances(
    db_path: Path,
    con: Any,
    task: str,
    split: str,
    primary: str,
    info: dict[str, Any],
    evaluation_id: str,
    model: str,
    content: str,
    stored_items: list[ItemScore],
    label_of: dict[str, dict[str, str]],
) -> list[dict[str, Any]]:
    """One instance line per item (public splits only): the item's primary-metric value, statistics, labels and prediction line(s)."""
    agg = intervals.aggregator(task)
    predictions = _prediction_lines(db_path, con, content) if content else None
    percent = bool(next((m.get("percent") for m in info["metrics"] if m["name"] == primary), False))
    lines = []
    for item in stored_items:
        value = agg.aggregate([item]).get(primary) if agg is not None else None
        score = float(value) if value is not None and math.isfinite(float(value)) else 0.0
        raw = [
            line
            for line in (predictions or {}).get(item.item_id, [])
            if len(line) <= MAX_RAW_LINE_CHARS
        ]
        extra = {
            f"stat:{k}": repr(v) if isinstance(v, float) else str(v) for k, v in item.values.items()
        }
        extra.update({f"label:{k}": v for k, v in label_of.get(item.item_id, {}).items()})
        lines.append(
            {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": model,
                "evaluation_name": f"{task} {split}",
                "evaluation_result_id": result_id(task, split, primary),
                "sample_id": item.item_id,
                "interaction_type": "single_turn",
                "input": {
                    "raw": item.item_id,
                    "reference": [],
                },  # the store keeps scores, not the benchmark's text
                "output": {"raw": raw},
                "answer_attribution": [
                    {
                        "turn_idx": 0,
                        "source": "output.raw",
                        "extracted_value": raw[0]
                        if len(raw) == 1
                        else json.dumps(raw, ensure_ascii=False),
                        "extraction_method": f"procbench: the {task} task's prediction reader",
                        "is_terminal": True,
                    }
                ],
                "evaluation": {"score": score, "is_correct": _is_correct(score, percent)},
                "metadata": extra,
            }
        )
    return lines
