"""What an exported ``evaluate`` module calls: score in-memory predictions exactly as ``procbench score``.

The predictions are written, in the task's own prediction-file format, to a temporary file that goes
through the task's validator and scorer — the very path ``procbench score`` takes — so the numbers
and the rejections are the same.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from procbench.api import load_task
from procbench.imports.mapping import MAPPINGS, ImportMapping
from procbench.paths import resolve_data_root
from procbench.runners.runtime.runner import Evaluation

SUFFIXES = {"jsonl": ".jsonl", "csv": ".csv", "tsv": ".tsv"}


def input_kind(task: str) -> str:
    """``choice`` (an option index per item), ``text_list`` (a list of texts per item) or ``lines`` (raw prediction-file lines)."""
    mapping = MAPPINGS.get(task)
    return mapping.kind if mapping else "lines"


def _typed_id(reference: Any, mapping: ImportMapping) -> Any:
    if mapping.id_type is int:
        return int(reference)
    return str(reference)


def prediction_lines(task: str, predictions: Sequence[Any], references: Sequence[Any]) -> list[str]:
    """The lines of the prediction file the in-memory predictions stand for."""
    if len(predictions) != len(references):
        raise ValueError(
            f"{len(predictions)} predictions but {len(references)} references (one item id per prediction)"
        )
    mapping = MAPPINGS.get(task)
    lines = []
    for prediction, reference in zip(predictions, references):
        if isinstance(prediction, Mapping):
            record = dict(prediction)
            record.setdefault("id", _typed_id(reference, mapping) if mapping else reference)
            lines.append(json.dumps(record, ensure_ascii=False))
        elif mapping is not None:
            value = list(prediction) if mapping.kind == "text_list" else prediction
            lines.append(
                json.dumps(
                    {"id": _typed_id(reference, mapping), mapping.prediction_field: value},
                    ensure_ascii=False,
                )
            )
        else:
            lines.append(str(prediction).rstrip("\n"))
    return lines


def evaluate_predictions(
    task: str,
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    split: str,
    data_dir: str | Path | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Score in-memory predictions of ``task`` on ``split``; raises what ``procbench score`` would report."""
    spec, runner = load_task(task)
    suffix = SUFFIXES.get(spec.predictions.format) or (
        spec.predictions.extensions[0] if spec.predictions.extensions else ".txt"
    )
    with tempfile.TemporaryDirectory(prefix="procbench-evaluate-") as folder:
        path = Path(folder) / f"predictions{suffix}"
        path.write_text(
            "".join(line + "\n" for line in prediction_lines(task, predictions, references)),
            encoding="utf-8",
        )
        return runner.evaluate(resolve_data_root(data_dir), split, path, dict(metadata or {}))


def compute(
    task: str,
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    split: str | None,
    data_dir: str | Path | None = None,
    metadata: Mapping[str, Any] | None = None,
    spec_digest: str | None = None,
) -> dict[str, Any]:
    """The dict an exported module's ``_compute`` returns: the metrics at top level, plus ``n_items``,
    ``slices`` (as ``procbench score --json`` prints them), ``fingerprint`` and the validator's ``warnings``."""
    spec, runner = load_task(task)
    if split is None:
        raise ValueError(f"pass split=... (one of {', '.join(runner.splits)})")
    if spec_digest and spec_digest != runner.spec_digest:
        warnings.warn(
            f"the spec of {task!r} changed since this module was exported: scores follow the current spec (re-export to silence this)",
            stacklevel=2,
        )
    evaluation = evaluate_predictions(
        task, predictions, references, split=split, data_dir=data_dir, metadata=metadata
    )
    as_json = evaluation.to_json()  # the shape of `procbench score --json`
    return {
        **evaluation.metrics,
        "n_items": evaluation.n_items,
        "slices": as_json["slices"],
        "fingerprint": evaluation.fingerprint,
        "warnings": list(evaluation.warnings),
    }
