"""Results of the Python API as data: JSON (``to_dict`` / ``to_json``) and per-item frames (``to_polars`` / ``to_pandas``).

    >>> result = procbench.score("paradise-tip", "preds.jsonl", split="test")
    >>> json.dumps(result.to_dict())           # metrics, slices, coverage, per-item rows
    >>> result.to_polars()                       # one row per item: id, slice labels, per-item values
    >>> result.to_pandas()                       # the same through polars (pandas imported only then)

Per-item columns keep their types: integer item ids stay ints (PARADISE rows), class statistics
(``<measure>:gold`` / ``<measure>:prediction``) are the declared class labels (ints when the
classes are integers; null for a prediction outside the classes), other statistics are floats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from procbench.partial import Coverage
from runners.runner import Evaluation, SliceResult

if TYPE_CHECKING:
    import pandas
    import polars

CLASS_SUFFIXES = (":gold", ":prediction")  # the statistics of a measure over declared classes: class indices


def _typed_labels(labels: Sequence[Any]) -> tuple[Any, ...]:
    """Class labels as written in the spec (texts), as ints when every one is an integer literal."""
    texts = [str(v) for v in labels]
    if texts and all(t.lstrip("-").isdigit() for t in texts):
        return tuple(int(t) for t in texts)
    return tuple(texts)


def int_ids(spec: Any) -> bool:
    """Whether the task's items are row indices (its ``import`` block says ``id_type = "int"``)."""
    return any(getattr(block, "id_type", "str") == "int" for block in getattr(spec, "imports", ()) or ())


def class_labels(spec: Any) -> dict[str, tuple[Any, ...]]:
    """Measure name -> its declared classes (``prf(labels = [0, 1, 2, 3])``), for the measures that have them."""
    out: dict[str, tuple[Any, ...]] = {}
    score = getattr(spec, "score", None)
    for measure in getattr(score, "measures", ()) or ():
        if measure.metric is not None and "labels" in measure.metric.kwargs_dict():
            out[measure.name] = _typed_labels(measure.metric.kwargs_dict()["labels"])
    return out


@dataclass(frozen=True)
class ScoreResult:
    """What ``procbench.score`` returns: the evaluation, its coverage (partial runs) and typed per-item rows.

    The evaluation's fields are readable directly (``metrics``, ``slices``, ``items``, ``n_items``,
    ``fingerprint``, ``warnings``, ``task``, ``split``).
    """

    evaluation: Evaluation
    partial: bool = False
    coverage: Coverage | None = None
    int_ids: bool = False  # item ids are row indices: shown as ints
    classes: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    # -- the evaluation's fields ------------------------------------------------------------------
    @property
    def task(self) -> str:
        return self.evaluation.task

    @property
    def split(self) -> str:
        return self.evaluation.split

    @property
    def metrics(self) -> dict[str, float]:
        return self.evaluation.metrics

    @property
    def slices(self) -> dict[str, dict[str, SliceResult]]:
        return self.evaluation.slices

    @property
    def items(self) -> list[Any]:
        return self.evaluation.items

    @property
    def n_items(self) -> int:
        return self.evaluation.n_items

    @property
    def answered(self) -> int | None:
        """Items with a prediction record (coverage: answered / ``n_items``)."""
        return self.evaluation.answered

    @property
    def fingerprint(self) -> str:
        return self.evaluation.fingerprint

    @property
    def warnings(self) -> list[str]:
        return self.evaluation.warnings

    # -- as data ------------------------------------------------------------------------------------
    def item_rows(self) -> list[dict[str, Any]]:
        """One dict per item: ``id``, the item's slice labels, its per-item values (typed as the module says)."""
        rows = []
        for item in self.evaluation.items:
            row: dict[str, Any] = {"id": int(item.item_id) if self.int_ids and item.item_id.lstrip("-").isdigit() else item.item_id}
            row.update(self.evaluation.item_labels.get(item.item_id, {}))
            for name, value in item.values.items():
                row[name] = self._typed(name, value)
            rows.append(row)
        return rows

    def _typed(self, name: str, value: float) -> Any:
        measure, _, _ = name.rpartition(":")
        if measure and name.endswith(CLASS_SUFFIXES) and measure in self.classes:
            labels = self.classes[measure]
            index = int(value)
            return labels[index] if 0 <= index < len(labels) and index == value else None
        return value

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: what ``procbench score --json`` prints (coverage included), plus partial, warnings and per-item rows."""
        as_json = self.evaluation.to_json()
        return {
            **as_json,
            "partial": self.partial,
            # a partial run's coverage is of the split (scored / total); a whole run's, answered / total (missing predictions counted by the spec's convention)
            "coverage": self.coverage.to_dict() if self.coverage else as_json["coverage"],
            "warnings": list(self.evaluation.warnings),
            "items": self.item_rows(),
        }

    def to_json(self, **dumps: Any) -> str:
        """``to_dict()`` as JSON text (keyword arguments go to ``json.dumps``, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **dumps)

    def to_polars(self) -> polars.DataFrame:
        """Per-item scores as a polars DataFrame (one row per scored item)."""
        import polars as pl

        rows = self.item_rows()
        schema: dict[str, Any] = {"id": pl.Int64 if self.int_ids else pl.String}
        for name in dict.fromkeys(k for row in rows for k in row if k != "id"):
            values = [row.get(name) for row in rows]
            present = [v for v in values if v is not None]
            if present and all(isinstance(v, bool) for v in present):
                schema[name] = pl.Boolean
            elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
                schema[name] = pl.Int64
            elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
                schema[name] = pl.Float64
            else:
                schema[name] = pl.String
        return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)

    def to_pandas(self) -> pandas.DataFrame:
        """Per-item scores as a pandas DataFrame (through polars; pandas is imported only here)."""
        return self.to_polars().to_pandas()


@dataclass(frozen=True)
class SubmitResult:
    """What ``procbench.submit`` returns: the stored submission's id, whether it was new, and its scores."""

    submission_id: str
    created: bool
    score: ScoreResult
    team: str = ""
    receipt: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def evaluation(self) -> Evaluation:
        return self.score.evaluation

    def to_dict(self) -> dict[str, Any]:
        return {
            "submission_id": self.submission_id,
            "created": self.created,
            "team": self.team,
            "receipt": self.receipt,
            "warnings": list(self.warnings),
            "score": self.score.to_dict(),
        }

    def to_json(self, **dumps: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **dumps)

    def to_polars(self) -> polars.DataFrame:
        return self.score.to_polars()

    def to_pandas(self) -> pandas.DataFrame:
        return self.score.to_pandas()
