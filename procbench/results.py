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
classes are integers; null for a prediction outside the classes), other statistics are floats
(``ItemScore.values`` are floats; an int a runner returns is cast). The rule is decided by the spec
(``int_ids``, ``class_labels``: either the parsed spec or its ``to_dict()``, as the store keeps it),
never by a column's values, and is the one of the Hub dataset's per-item details
(procbench/export/hub_dataset.py), which build their rows with :func:`item_row` and :func:`item_frame`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from procbench.partial import Coverage
from procbench.runners.runtime.runner import Evaluation, SliceResult

if TYPE_CHECKING:
    import pandas
    import polars

    from procbench.runners.runtime.stats import Interval
    from procbench.submissions.provenance import DataProvenance

CLASS_SUFFIXES = (
    ":gold",
    ":prediction",
)  # the statistics of a measure over declared classes: class indices


def _typed_labels(labels: Sequence[Any]) -> tuple[Any, ...]:
    """Class labels as written in the spec (texts), as ints when every one is an integer literal."""
    texts = [str(v) for v in labels]
    if texts and all(t.lstrip("-").isdigit() for t in texts):
        return tuple(int(t) for t in texts)
    return tuple(texts)


def _field(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a parsed spec node or of its ``to_dict()`` form (the store's ``spec_json``)."""
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def int_ids(spec: Any) -> bool:
    """Whether the task's items are row indices (its ``import`` block says ``id_type = "int"``); ``spec``: parsed or ``to_dict()``."""
    return any(
        _field(block, "id_type", "str") == "int" for block in _field(spec, "imports", ()) or ()
    )


def class_labels(spec: Any) -> dict[str, tuple[Any, ...]]:
    """Measure name -> its declared classes (``prf(labels = [0, 1, 2, 3])``), for the measures that have them; ``spec``: parsed or ``to_dict()``."""
    out: dict[str, tuple[Any, ...]] = {}
    for measure in _field(_field(spec, "score"), "measures", ()) or ():
        metric = _field(measure, "metric")
        if metric is None:
            continue
        kwargs = (
            metric.kwargs_dict()
            if hasattr(metric, "kwargs_dict")
            else {k: v for k, v in metric.get("kwargs") or ()}
        )
        if "labels" in kwargs:
            out[_field(measure, "name")] = _typed_labels(kwargs["labels"])
    return out


def typed_value(name: str, value: Any, classes: Mapping[str, tuple[Any, ...]]) -> Any:
    """A per-item statistic as a frame shows it: a class statistic (``<measure>:gold`` / ``:prediction`` of a measure
    with declared classes) as its class label (null outside the classes), any other as a float (null stays null)."""
    if value is None:
        return None
    measure, _, _ = name.rpartition(":")
    if measure and name.endswith(CLASS_SUFFIXES) and measure in classes:
        labels = classes[measure]
        index = int(value)
        return labels[index] if 0 <= index < len(labels) and index == value else None
    return float(value)


def item_row(
    item_id: str,
    labels: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    int_ids: bool,
    classes: Mapping[str, tuple[Any, ...]],
    label_name: Any = None,
) -> dict[str, Any]:
    """One item's row: ``id`` (an int when the items are row indices), its slice labels (named by ``label_name(dimension)``,
    the bare dimension by default) and its per-item values (:func:`typed_value`)."""
    row: dict[str, Any] = {
        "id": int(item_id) if int_ids and item_id.lstrip("-").isdigit() else item_id
    }
    row.update({(label_name(k) if label_name else k): v for k, v in labels.items()})
    for name, value in values.items():
        row[name] = typed_value(name, value, classes)
    return row


def item_frame(rows: Sequence[Mapping[str, Any]], *, int_ids: bool) -> polars.DataFrame:
    """Rows of :func:`item_row` as a frame: ``id`` Int64 when the items are row indices (else String); every other column
    Boolean, Int64, Float64 or String by its (typed) values, String when it has none."""
    import polars as pl

    schema: dict[str, Any] = {"id": pl.Int64 if int_ids else pl.String}
    for name in dict.fromkeys(k for row in rows for k in row if k != "id"):
        present = [v for v in (row.get(name) for row in rows) if v is not None]
        if present and all(isinstance(v, bool) for v in present):
            schema[name] = pl.Boolean
        elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            schema[name] = pl.Int64
        elif present and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in present
        ):
            schema[name] = pl.Float64
        else:
            schema[name] = pl.String
    return (
        pl.DataFrame([dict(r) for r in rows], schema=schema, orient="row")
        if rows
        else pl.DataFrame(schema=schema)
    )


@dataclass(frozen=True)
class ScoreResult:
    """What ``procbench.score`` returns: the evaluation, its coverage, provenance and intervals, and typed per-item rows.

    The evaluation's fields are readable directly (``metrics``, ``slices``, ``items``, ``n_items``,
    ``fingerprint``, ``warnings``, ``task``, ``split``).  ``coverage``: the items of the split scored
    (all of them, unless ``partial``; ``answered``: those with a prediction record).  ``provenance``:
    what the gold was (``data_kind``: real / sample / unverified / unlocked, ``data_digest`` of the
    real split's locked files, the scorer's digest), as the store records it.  ``intervals``: the
    board's bootstrap interval of each metric (``procbench.submissions.intervals``), ``interval_reasons`` why a
    metric has none.
    """

    evaluation: Evaluation
    partial: bool = False
    coverage: Coverage | None = None
    int_ids: bool = False  # item ids are row indices: shown as ints
    classes: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    provenance: DataProvenance | None = (
        None  # procbench.submissions.provenance.of: what the gold was
    )

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
        from procbench.submissions.intervals import whole_split_intervals

        metrics = list(self.evaluation.metrics)
        return whole_split_intervals(
            self.task,
            self.evaluation.items,
            self.evaluation.metrics,
            metrics,
            self.evaluation.item_labels,
        )

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
        """One dict per item: ``id``, the item's slice labels, its per-item values (typed as the module says: :func:`item_row`)."""
        labels = self.evaluation.item_labels
        return [
            item_row(
                item.item_id,
                labels.get(item.item_id, {}),
                item.values,
                int_ids=self.int_ids,
                classes=self.classes,
            )
            for item in self.evaluation.items
        ]

    def to_dict(self, *, intervals: bool = False) -> dict[str, Any]:
        """Plain JSON-ready data: what ``procbench score --json`` prints (coverage and ``data_kind`` included), plus partial,
        the data digest, warnings and per-item rows; ``intervals=True`` adds ``intervals`` (metric -> low, high, ...) and their reasons."""
        as_json = self.evaluation.to_json()
        out = {
            **as_json,
            "partial": self.partial,
            # a partial run's coverage is of the split (scored / total); a whole run's, answered / total (missing predictions counted by the spec's convention)
            "coverage": self.coverage.to_dict()
            if self.partial and self.coverage
            else as_json["coverage"],
            "data_kind": self.data_kind,
            "data_digest": self.data_digest,
            "scorer_digest": self.provenance.scorer_digest if self.provenance else "",
            "warnings": list(self.evaluation.warnings),
            "items": self.item_rows(),
        }
        if intervals:
            out["intervals"] = {
                name: {
                    "low": i.low,
                    "high": i.high,
                    "estimate": i.estimate,
                    "confidence": i.confidence,
                    "n_items": i.n_items,
                    "n_resamples": i.n_resamples,
                }
                for name, i in self.intervals.items()
            }
            out["interval_reasons"] = self.interval_reasons
        return out

    def to_json(self, **dumps: Any) -> str:
        """``to_dict()`` as JSON text (keyword arguments go to ``json.dumps``, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **dumps)

    def to_polars(self) -> polars.DataFrame:
        """Per-item scores as a polars DataFrame (one row per scored item; :func:`item_frame`)."""
        return item_frame(self.item_rows(), int_ids=self.int_ids)

    def to_pandas(self) -> pandas.DataFrame:
        """Per-item scores as a pandas DataFrame (through polars; pandas is imported only here: the ``frames`` extra)."""
        from procbench.runners.runtime.extras import require

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
