"""Results of the Python API as data: JSON (``to_dict`` / ``to_json``) and per-item frames (``to_polars`` / ``to_pandas``).

    >>> import procbench
    >>> from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
    >>> result = procbench.score("paradise-tip", SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl", split="test", data_dir=SAMPLE_DATA_ROOT)
    >>> sorted(result.to_dict())                 # metrics, slices, coverage, provenance, per-item rows
    ['coverage', 'data_digest', 'data_kind', 'fingerprint', 'items', 'metrics', 'n_items', 'partial', 'scorer_digest', 'slices', 'split', 'task', 'warnings']
    >>> frame = result.to_polars()               # one row per item: id, slice labels, per-item values
    >>> frame.height, frame.columns[0], frame["accuracy"].to_list()
    (8, 'id', [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    >>> (result.coverage.scored, result.coverage.total, result.data_kind)
    (8, 8, 'sample')

``to_pandas()`` gives the same frame through polars and needs the ``frames`` extra (pandas); without
it, it raises ``procbench.MissingExtra`` naming ``pip install "procbench[frames]"``.

Per-item columns keep their types: integer item ids stay ints (PARADISE rows), class statistics
(``<measure>:gold`` / ``<measure>:prediction``) are the declared class labels (ints when the
classes are integers; null for a prediction outside the classes), other statistics are floats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from procbench.partial import Coverage
from runners.runner import Evaluation, SliceResult

if TYPE_CHECKING:
    import pandas
    import polars

    from runners.stats import Interval
    from submissions.provenance import DataProvenance

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
    """What ``procbench.score`` returns: the evaluation, its coverage, provenance and intervals, and typed per-item rows.

    The evaluation's fields are readable directly (``metrics``, ``slices``, ``items``, ``n_items``,
    ``fingerprint``, ``warnings``, ``task``, ``split``).  ``coverage``: the items of the split scored
    (all of them, unless ``partial``; ``answered``: those with a prediction record).  ``provenance``:
    what the gold was (``data_kind``: real / sample / unverified / unlocked, ``data_digest`` of the
    real split's locked files, the scorer's digest), as the store records it.  ``intervals``: the
    board's bootstrap interval of each metric (``submissions.intervals``), ``interval_reasons`` why a
    metric has none.
    """

    evaluation: Evaluation
    partial: bool = False
    coverage: Coverage | None = None
    int_ids: bool = False  # item ids are row indices: shown as ints
    classes: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    provenance: DataProvenance | None = None  # submissions.provenance.of: what the gold was

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

    # -- provenance and intervals ---------------------------------------------------------------
    @property
    def data_kind(self) -> str:
        """``real`` (the files match the spec's lock), ``sample`` (the bundled samples), ``unverified``, ``unlocked`` or ``unknown``."""
        return self.provenance.kind if self.provenance else "unknown"

    @property
    def data_digest(self) -> str:
        """The real split's identity: sha256 over its locked files' digests (``''`` unless ``data_kind`` is ``real``)."""
        return self.provenance.data_digest if self.provenance else ""

    @cached_property
    def _bootstrap(self) -> tuple[dict[str, Interval], dict[str, str]]:
        from submissions.intervals import whole_split_intervals

        metrics = list(self.evaluation.metrics)
        return whole_split_intervals(self.task, self.evaluation.items, self.evaluation.metrics, metrics, self.evaluation.item_labels)

    @property
    def intervals(self) -> dict[str, Interval]:
        """Metric -> the board's interval (``low``, ``high``, ``estimate``, ``confidence``, ``n_resamples``), computed on first use.

        The site's recipe (submissions/intervals.py): a percentile bootstrap over the scored items, each
        resample re-aggregated by the task's own aggregator, with the board's resamples, seed and floor
        of items; a metric without one is in :attr:`interval_reasons`.
        """
        return dict(self._bootstrap[0])

    @property
    def interval_reasons(self) -> dict[str, str]:
        """Metric -> why it has no interval (too few items, no spread, ...)."""
        return dict(self._bootstrap[1])

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

    def to_dict(self, *, intervals: bool = False) -> dict[str, Any]:
        """Plain JSON-ready data: what ``procbench score --json`` prints (coverage and ``data_kind`` included), plus partial,
        the data digest, warnings and per-item rows; ``intervals=True`` adds ``intervals`` (metric -> low, high, ...) and their reasons."""
        as_json = self.evaluation.to_json()
        out = {
            **as_json,
            "partial": self.partial,
            # a partial run's coverage is of the split (scored / total); a whole run's, answered / total (missing predictions counted by the spec's convention)
            "coverage": self.coverage.to_dict() if self.partial and self.coverage else as_json["coverage"],
            "data_kind": self.data_kind,
            "data_digest": self.data_digest,
            "scorer_digest": self.provenance.scorer_digest if self.provenance else "",
            "warnings": list(self.evaluation.warnings),
            "items": self.item_rows(),
        }
        if intervals:
            out["intervals"] = {
                name: {"low": i.low, "high": i.high, "estimate": i.estimate, "confidence": i.confidence, "n_items": i.n_items, "n_resamples": i.n_resamples}
                for name, i in self.intervals.items()
            }
            out["interval_reasons"] = self.interval_reasons
        return out

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
        """Per-item scores as a pandas DataFrame (through polars; pandas is imported only here: the ``frames`` extra)."""
        from runners.extras import require

        require("frames", "ScoreResult.to_pandas()")
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
