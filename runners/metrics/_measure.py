"""The runtime of ``measure`` blocks: per-item statistics in, declared aggregates out.

A :class:`MeasureStage` is one compiled measure block; :class:`Measures` scores every item with each
stage (its statistics are stored as per-item values named ``<measure>`` or ``<measure>:<stat>``) and
reduces any set of scored items to the declared outputs.  :func:`combined` joins measures with a
task's other scorer (a component or match blocks) and its aggregator, so one task can mix per-item
and corpus-level metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from procbench.runners.runtime._types import (
    DataProblem,
    DataProblems,
    GoldSet,
    InvalidPredictions,
    ItemScore,
    Problem,
    ProblemList,
)
from procbench.runners.runtime.contracts import MISSING, describe, field_value
from procbench.runners.metrics._base import Metric
from procbench.runners.runtime.predictions import FieldType, line_of
from procbench.runners.runtime.records import Record


def _round(value: float, digits: int | None) -> float:
    return value if digits is None else round(value, digits)


class MeasureStage(Record, compare=False):
    """One ``measure`` block: a metric over one gold and one prediction field, aggregated one way."""

    __slots__ = (
        "name",
        "metric",
        "aggregate",
        "gold_field",
        "prediction_field",
        "gold_types",
        "prediction_types",
        "normalise",
        "round_digits",
        "bare_prediction",
        "value_name",
        "where",
        "scale",
        "divide_by",
        "reads",
        "missing",
        "invalid",
    )
    name: str
    metric: Metric
    aggregate: str
    gold_field: str
    prediction_field: str
    gold_types: tuple[FieldType, ...]
    prediction_types: tuple[FieldType, ...]
    normalise: Callable[[str], str] | None
    round_digits: int | None
    bare_prediction: bool  # the predictions reader gives each item's one field as a bare value (PARADISE's ending index)
    value_name: (
        str | None
    )  # a per-item value of the task's scorer, instead of gold and prediction fields
    where: tuple[tuple[str, str], ...]  # only items with these label values
    scale: float | None
    divide_by: float | None
    reads: tuple[
        str, ...
    ]  # a counts measure: the scorer's per-item values it pools (it stores none of its own)
    # what an item without a prediction record / with a prediction the metric cannot measure counts as:
    # ("empty",) | ("refuse",) | ("predict", value) | ("score", number); the defaults are what procbench always did
    missing: tuple[Any, ...]
    invalid: tuple[Any, ...]

    def __init__(
        self,
        name: str,
        metric: Metric,
        aggregate: str,
        gold_field: str,
        prediction_field: str,
        gold_types: tuple[FieldType, ...],
        prediction_types: tuple[FieldType, ...],
        normalise: Callable[[str], str] | None = None,
        round_digits: int | None = None,
        bare_prediction: bool = False,
        value_name: str | None = None,
        where: tuple[tuple[str, str], ...] = (),
        scale: float | None = None,
        divide_by: float | None = None,
        reads: tuple[str, ...] = (),
        missing: tuple[Any, ...] = ("empty",),
        invalid: tuple[Any, ...] = ("refuse",),
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "metric", metric)
        object.__setattr__(self, "aggregate", aggregate)
        object.__setattr__(self, "gold_field", gold_field)
        object.__setattr__(self, "prediction_field", prediction_field)
        object.__setattr__(self, "gold_types", gold_types)
        object.__setattr__(self, "prediction_types", prediction_types)
        object.__setattr__(self, "normalise", normalise)
        object.__setattr__(self, "round_digits", round_digits)
        object.__setattr__(self, "bare_prediction", bare_prediction)
        object.__setattr__(self, "value_name", value_name)
        object.__setattr__(self, "where", where)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "divide_by", divide_by)
        object.__setattr__(self, "reads", reads)
        object.__setattr__(self, "missing", missing)
        object.__setattr__(self, "invalid", invalid)

    @property
    def keys(self) -> tuple[str, ...]:
        """The per-item statistics this stage stores (none for a counts measure, which reads the scorer's)."""
        return (
            ()
            if self.reads
            else tuple(self.name + suffix for suffix in self.metric.stat_names(self.aggregate))
        )

    @property
    def outputs(self) -> tuple[str, ...]:
        return self.metric.outputs(self.name, self.aggregate)

    def rescale(self, value: float) -> float:
        if self.scale is not None:
            value = value * self.scale
        if (
            self.divide_by is not None
        ):  # a division, as upstream writes `sum / 10` (x * 0.1 differs in the last bit)
            value = value / self.divide_by
        return value

    def prepare(self, value: Any) -> Any:
        """The value as the metric sees it: texts through the normaliser."""
        if self.normalise is None or value is None:
            return value
        if isinstance(value, str):
            return self.normalise(value)
        return [self.normalise(v) if isinstance(v, str) else v for v in value]


class Measures(Record, compare=False):
    """The measure stages of a score block, scored together per item."""

    __slots__ = ("stages",)
    stages: tuple[MeasureStage, ...]

    def __init__(self, stages: tuple[MeasureStage, ...]) -> None:
        object.__setattr__(self, "stages", stages)

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(k for stage in self.stages for k in stage.keys)

    def score(
        self,
        gold: GoldSet,
        predictions: Mapping[str, Any],
        scored: Mapping[str, Mapping[str, float]] | None = None,
    ) -> dict[str, dict[str, float]]:
        """item id -> its statistics for every stage; a wrong value is an error naming the item (and its gold line).

        ``scored``: the per-item values of the task's scorer, which ``value`` measures aggregate.
        """
        out: dict[str, dict[str, float]] = {item_id: {} for item_id in gold.items}
        problems = DataProblems()
        bad_predictions: list[str] = []
        refused: dict[
            str, Problem
        ] = {}  # items a measure's missing/invalid = "refuse" turns away (once each, the first measure's reason)
        for stage in self.stages:
            keys = stage.keys
            checks = (
                type(stage.metric).invalid is not Metric.invalid
            )  # only then is an answer prepared twice (normalised texts)
            if not keys:
                continue  # a counts measure: the scorer's values are its statistics
            for item_id, record in gold.items.items():
                if stage.where:
                    labels = gold.labels.get(item_id, {})
                    if any(labels.get(label) != value for label, value in stage.where):
                        continue  # not in this measure's items: no statistics, so no row when it aggregates
                if stage.value_name is not None:
                    emitted = (scored or {}).get(item_id, {}).get(stage.value_name)
                    if (
                        emitted is None
                    ):  # the checker knows the scorer's contract; a component breaking it is named here
                        problems.add(
                            DataProblem.at(
                                gold.origins.get(item_id),
                                item_id,
                                f"measure {stage.name!r}: the scorer gave no value {stage.value_name!r} for this item",
                            )
                        )
                        continue
                    out[item_id].update(
                        zip(keys, stage.metric.item(None, emitted, stage.aggregate))
                    )
                    continue
                gold_value = field_value(
                    record, stage.gold_field
                )  # reader components build objects, tables build dicts
                if not _fits(gold_value, stage.gold_types):
                    what = "missing" if gold_value is MISSING else describe(gold_value)
                    problems.add(
                        DataProblem.at(
                            gold.origins.get(item_id),
                            item_id,
                            f"measure {stage.name!r}: gold field {stage.gold_field!r} must be {_spell(stage.gold_types)}, got {what}",
                        )
                    )
                    continue
                predicted = predictions.get(item_id)
                value = None
                convention: tuple[Any, ...] | None = None
                if predicted is None:
                    convention = stage.missing
                else:
                    value = field_value(predicted, stage.prediction_field)
                    if (
                        value is MISSING
                        and stage.bare_prediction
                        and not isinstance(predicted, Mapping)
                    ):
                        value = predicted
                    if not _fits(
                        value, stage.prediction_types
                    ):  # None passes only where the schema says optional(...)
                        bad_predictions.append(
                            f"item {item_id!r}: {stage.prediction_field!r} is {'missing' if value is MISSING else describe(value)}, not "
                            f"{_spell(stage.prediction_types)}"
                        )
                        continue
                    if (
                        checks
                        and value is not None
                        and (
                            why := stage.metric.invalid(
                                stage.prepare(gold_value), stage.prepare(value)
                            )
                        )
                        is not None
                    ):
                        convention = stage.invalid
                        if convention[0] == "refuse":
                            why = f'item {item_id!r}: measure {stage.name!r}: {why} (invalid = "refuse")'
                            refused.setdefault(
                                item_id, Problem(line_of(predictions, item_id), why, item_id)
                            )
                            continue
                if convention is not None:
                    form = convention[0]
                    if form == "refuse":
                        why = f'item {item_id!r} has no prediction; measure {stage.name!r} declares missing = "refuse"'
                        refused.setdefault(item_id, Problem(None, why, item_id))
                        continue
                    if (
                        form == "score"
                    ):  # the checker allows it only where the per-item statistic is one value
                        out[item_id].update(zip(keys, (float(convention[1]),)))
                        continue
                    value = _plain(convention[1]) if form == "predict" else None
                try:
                    stats = stage.metric.item(
                        stage.prepare(gold_value), stage.prepare(value), stage.aggregate
                    )
                except ValueError as exc:
                    problems.add(
                        DataProblem.at(
                            gold.origins.get(item_id), item_id, f"measure {stage.name!r}: {exc}"
                        )
                    )
                    continue
                out[item_id].update(zip(keys, stats))
        if refused:  # in the file's order, then the unanswered items in the split's (ProblemList caps what is kept)
            listed = sorted(refused.values(), key=lambda p: (p.line is None, p.line or 0))
            raise InvalidPredictions(ProblemList(listed), getattr(predictions, "source", ""))
        if bad_predictions:
            shown = "; ".join(bad_predictions[:5]) + (
                f"; ... and {len(bad_predictions) - 5} more" if len(bad_predictions) > 5 else ""
            )
            raise ValueError(
                f"{len(bad_predictions)} prediction value(s) cannot be measured: {shown}"
            )
        problems.raise_if_any()
        return out

    def aggregate(self, items: Sequence[ItemScore]) -> dict[str, float]:
        out: dict[str, float] = {}
        for stage in self.stages:
            if stage.reads:  # absent counts are 0, as the official scorers' `stats.get(key, 0)`
                rows = [tuple(item.values.get(k, 0) for k in stage.reads) for item in items]
            else:
                keys = stage.keys
                rows = [
                    tuple(item.values[k] for k in keys) for item in items if keys[0] in item.values
                ]
            values = stage.metric.reduce(rows, stage.aggregate)
            out.update(
                {
                    name: _round(stage.rescale(float(v)), stage.round_digits)
                    for name, v in zip(stage.outputs, values)
                }
            )
        return out


def _plain(value: Any) -> Any:
    """A declared prediction value as a reader gives one (spec lists arrive as tuples)."""
    return [_plain(v) for v in value] if isinstance(value, (tuple, list)) else value


def _fits(value: Any, types: tuple[FieldType, ...]) -> bool:
    return value is not MISSING and any(t.accepts(value) for t in types)


def _spell(types: tuple[FieldType, ...]) -> str:
    return " or ".join(t.spelling() for t in types)


Scorer = Callable[[GoldSet, Mapping[str, Any]], list[ItemScore]]
Aggregator = Callable[[Sequence[ItemScore]], dict[str, float]]


def combined(
    measures: Measures,
    scorer: Callable[[Mapping[str, Any]], Scorer] | None,
    aggregate: Aggregator | None,
) -> tuple[Callable[[Mapping[str, Any]], Scorer], Aggregator]:
    """A scorer factory and an aggregator for measures beside a task's own scorer and aggregator (either may be None)."""
    own_keys = measures.keys

    def make(metadata: Mapping[str, Any]) -> Scorer:
        base = scorer(metadata) if scorer is not None else None

        def score(gold: GoldSet, predictions: Mapping[str, Any]) -> list[ItemScore]:
            if base is None:
                return [
                    ItemScore(item_id, values)
                    for item_id, values in measures.score(gold, predictions).items()
                ]
            items = base(gold, predictions)
            extra = measures.score(gold, predictions, {item.item_id: item.values for item in items})
            return [
                ItemScore(item.item_id, {**item.values, **extra.get(item.item_id, {})})
                for item in items
            ]

        return score

    def combined_aggregate(items: Sequence[ItemScore]) -> dict[str, float]:
        out: dict[str, float] = {}
        if aggregate is not None:  # the task's own aggregator sees only its scorer's values
            out.update(
                aggregate(
                    [
                        ItemScore(
                            i.item_id, {k: v for k, v in i.values.items() if k not in own_keys}
                        )
                        for i in items
                    ]
                )
            )
        out.update(measures.aggregate(items))
        return out

    return make, combined_aggregate
