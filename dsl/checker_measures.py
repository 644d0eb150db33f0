"""Measure blocks checked: each metric built from its registration, its aggregation, the field types it compares, its class set."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from procbench.dsl import model as m
from procbench.dsl.checker_state import CheckerState
from procbench.runners.runtime import registry
from procbench.runners.runtime.predictions import FieldType

# A measure as checked (its outputs filled in) and the metric that computes it.
Built = tuple[m.MeasureSpec, Any]


@dataclass(frozen=True)
class _Declared:
    """What the measures may name: the compared fields, the item labels' values, the scorer's per-item values."""

    gold: Mapping[str, FieldType]
    pred: Mapping[str, FieldType]
    label_values: Mapping[str, tuple[str, ...] | None]
    scorer_emits: Sequence[str]
    quiet: set[
        str
    ]  # count prefixes already reported (or settled upstream): one misspelt block, one error


def check_measures(
    ck: CheckerState,
    measures: tuple[m.MeasureSpec, ...],
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
    label_values: Mapping[str, tuple[str, ...] | None],
    scorer_emits: Sequence[str] = (),
    unsettled: Collection[str] = (),
) -> tuple[tuple[m.MeasureSpec, ...], list[Built]]:
    """Each measure's metric built and checked: aggregation, field types, class set; its outputs filled in.

    ``unsettled`` names count blocks with an error already reported: values under them are not reported again.
    """
    out: list[m.MeasureSpec] = []
    built: list[Built] = []
    names: dict[str, m.MeasureSpec] = {}
    declared = _Declared(gold, pred, label_values, scorer_emits, set(unsettled))
    for ms in measures:
        if ms.name in names:
            ck.error(
                m.span_of(ms, "<label>"),
                f"measure {ms.name!r} is declared twice",
                f"first on line {m.span_of(names[ms.name], '<label>').line}",
            )
            continue
        names[ms.name] = ms
        if ms.divide_by == 0:
            ck.error(m.span_of(ms, "divide_by"), f"measure {ms.name!r}: divide_by cannot be 0")
        _check_where(ck, ms, label_values)
        entry, ok = _check_measure(ck, ms, declared)
        built.append(entry)  # its name is known even if a check failed: no second error
        if ok:
            out.append(entry[0])
    return tuple(out), built


def _check_where(
    ck: CheckerState, ms: m.MeasureSpec, label_values: Mapping[str, tuple[str, ...] | None]
) -> None:
    """The values of ``where``; its label names are resolved with the other references."""
    for label, value in ms.where:
        values = label_values.get(label)
        if values is not None and value not in values:
            ck.unknown(
                m.span_of(ms, "where"),
                f"value of label {label!r} in where",
                value,
                list(values),
            )


def _check_measure(ck: CheckerState, ms: m.MeasureSpec, declared: _Declared) -> tuple[Built, bool]:
    if ms.formula is not None:
        return _formula_measure(ck, ms)
    if ms.counts or ms.stats:
        return _counts_measure(ck, ms, declared)
    if ms.value is not None:
        return _value_measure(ck, ms)
    return _metric_measure(ck, ms, declared)


def _placeholder(ms: m.MeasureSpec) -> Built:
    """A measure that failed a check: its name is still known (what refers to it gets no second error)."""
    from procbench.runners.metrics._base import Value

    return replace(ms, outputs=(ms.name,)), Value()


def _formula_measure(ck: CheckerState, ms: m.MeasureSpec) -> tuple[Built, bool]:
    """``from = ...``: computed from other metrics, nothing else."""
    if (
        ms.metric is not None
        or ms.gold is not None
        or ms.prediction is not None
        or ms.value is not None
        or ms.normaliser
        or ms.where
        or ms.aggregate
        or ms.counts
        or ms.stats
    ):
        ck.error(
            m.span_of(ms, "formula"),
            f"measure {ms.name!r}: `from = ...` computes it from other metrics: "
            "no metric, value, gold, prediction, counts, stats, normaliser, where or aggregate",
        )
        return _placeholder(ms), False
    return _placeholder(ms), True


def _counts_measure(ck: CheckerState, ms: m.MeasureSpec, declared: _Declared) -> tuple[Built, bool]:
    """``counts = [...]  stats = [...]``: the scorer's count values pooled over the items."""
    from procbench.runners.metrics._base import Value
    from procbench.runners.metrics._counts import MicroCounts

    if not _counts_form(ck, ms):
        return _placeholder(ms), False
    counted = MicroCounts(ms.counts, ms.stats)
    unknown = [name for name in counted.reads if name not in declared.scorer_emits]
    if unknown:
        reported = [name for name in unknown if name.split(".", 1)[0] not in declared.quiet]
        if reported:
            ck.unknown(
                m.span_of(ms, "counts"),
                f"per-item value of measure {ms.name!r}",
                reported[0],
                list(declared.scorer_emits),
            )
        declared.quiet.update(name.split(".", 1)[0] for name in unknown)
        # its outputs are known: no error for each
        return (replace(ms, outputs=counted.outputs(ms.name, "micro")), Value()), False
    checked = replace(ms, aggregate="micro", outputs=counted.outputs(ms.name, "micro"))
    return (checked, counted), True


def _counts_form(ck: CheckerState, ms: m.MeasureSpec) -> bool:
    """Counts and stats alone, two or four stats, pooled ("micro")."""
    if (
        ms.metric is not None
        or ms.gold is not None
        or ms.prediction is not None
        or ms.value is not None
        or ms.normaliser
        or ms.where
    ):
        ck.error(
            m.span_of(ms, "counts"),
            f"measure {ms.name!r}: `counts = [...]` pools the scorer's count values: no metric, value, gold, prediction, normaliser or where",
        )
        return False
    if len(ms.stats) not in (2, 4):
        ck.error(
            m.span_of(ms, "stats" if ms.stats else "<label>"),
            f"measure {ms.name!r} needs stats = [numerator, denominator] or [p_num, p_den, r_num, r_den] (under counts = [<prefix>, ...] if given)",
            "e.g. measure exclusive { counts = [node.XOR]  stats = [p_correct, p_total, r_correct, r_total] }",
        )
        return False
    if ms.aggregate not in ("", "micro"):
        ck.error(
            m.span_of(ms, "aggregate"),
            f'measure {ms.name!r}: counts are pooled over the items ("micro"), not {ms.aggregate!r}',
        )
        return False
    return True


def _value_measure(ck: CheckerState, ms: m.MeasureSpec) -> tuple[Built, bool]:
    """``value = ...``: the scorer's per-item value as it is, as a mean or a sum."""
    from procbench.runners.metrics._base import Value

    if ms.metric is not None or ms.gold is not None or ms.prediction is not None or ms.normaliser:
        ck.error(
            m.span_of(ms, "value"),
            f"measure {ms.name!r}: `value = ...` takes the scorer's per-item value as it is: no metric, gold, prediction or normaliser",
        )
        return _placeholder(ms), False
    value_metric = Value()
    aggregate = ms.aggregate or value_metric.aggregations[0]
    if aggregate not in value_metric.aggregations:
        ck.error(
            m.span_of(ms, "aggregate"),
            f'measure {ms.name!r}: a per-item value aggregates as "mean" or "sum", not {aggregate!r}',
        )
        return _placeholder(ms), False
    return (replace(ms, aggregate=aggregate, outputs=(ms.name,)), value_metric), True


def _metric_measure(ck: CheckerState, ms: m.MeasureSpec, declared: _Declared) -> tuple[Built, bool]:
    """``metric = f()  gold = ...  prediction = ...``: a library metric over two fields."""
    from procbench.runners.metrics import AGGREGATION_DOCS, CLASS_AGGREGATIONS

    call, gold_name, prediction_name = ms.metric, ms.gold, ms.prediction
    if call is None or gold_name is None or prediction_name is None:
        missing = [part for part in ("metric", "gold", "prediction") if getattr(ms, part) is None]
        ck.error(
            m.span_of(ms),
            f"measure {ms.name!r} needs {', '.join(missing)}",
            "e.g. measure accuracy { metric = accuracy()  gold = label  prediction = label }, or value = <per-item value> for a scorer's values",
        )
        return _placeholder(ms), False
    registered = registry.get("metric", call.name)
    metric = registered.build(**call.kwargs_dict())
    aggregate = ms.aggregate or metric.aggregations[0]
    entry: Built = (
        replace(
            ms,
            outputs=metric.outputs(
                ms.name,
                aggregate if aggregate in metric.aggregations else metric.aggregations[0],
            ),
        ),
        metric,
    )
    if aggregate not in metric.aggregations:
        allowed = ", ".join(f'"{a}" ({AGGREGATION_DOCS[a]})' for a in metric.aggregations)
        ck.error(
            m.span_of(ms, "aggregate"),
            f"measure {ms.name!r}: {call.name}() cannot aggregate as {aggregate!r}; it aggregates as {allowed}",
            registered.contract.aggregation_hint,
        )
        return entry, False
    gtype, ptype = declared.gold.get(gold_name), declared.pred.get(prediction_name)
    refusal = metric.refuses(
        gtype, ptype, aggregate
    )  # a combination whose meaning would be ambiguous: the hint names the right form
    if refusal is not None:
        ck.error(m.span_of(ms, refusal[0]), f"measure {ms.name!r}: {refusal[1]}", refusal[2])
        return entry, False
    metric = metric.declared(gtype, ptype, aggregate)
    ok = _compares(ck, ms, call, metric, aggregate, gtype, ptype)
    if "class_set" in registered.contract.requires or aggregate in CLASS_AGGREGATIONS:
        classes = _classes(ck, ms, call, metric, gtype)
        if classes is None:
            return entry, False
        call = replace(
            call,
            kwargs=tuple(kv for kv in call.kwargs if kv[0] != "labels")
            + (("labels", tuple(classes)),),
        )
        metric = registered.build(**call.kwargs_dict())
    if not ok:
        return entry, False
    checked = replace(
        ms, metric=call, aggregate=aggregate, outputs=metric.outputs(ms.name, aggregate)
    )
    return (checked, metric), True


def _compares(
    ck: CheckerState,
    ms: m.MeasureSpec,
    call: m.ComponentCall,
    metric: Any,
    aggregate: str,
    gtype: FieldType | None,
    ptype: FieldType | None,
) -> bool:
    """The metric compares the fields' declared types (one type on both sides where it compares labels), as text
    where a normaliser applies."""
    gold_types, pred_types = metric.accepts(aggregate)
    ok = True
    for side, name, ftype, wanted, part in (
        ("gold", ms.gold, gtype, gold_types, "gold"),
        ("prediction", ms.prediction, ptype, pred_types, "prediction"),
    ):
        if ftype is not None and not any(ftype.fits(w) for w in wanted):
            spelled = " or ".join(w.spelling() for w in wanted)
            ck.error(
                m.span_of(ms, part),
                f"measure {ms.name!r}: {side} field {name!r} is {ftype.spelling()}, but {call.name}() with aggregate = {aggregate!r} compares {spelled}",
                f"{call.name}(): {metric.library}"
                if metric.library
                else f"declare the {side} field {spelled}",
            )
            ok = False
    if (
        ok
        and metric.same_type
        and gtype is not None
        and ptype is not None
        and not (gtype.fits(ptype) or ptype.fits(gtype))
        and "any" not in (gtype.kind, ptype.kind)
    ):
        ck.error(
            m.span_of(ms, "prediction"),
            f"measure {ms.name!r}: gold field {ms.gold!r} is {gtype.spelling()} but prediction field {ms.prediction!r} is {ptype.spelling()}; "
            f"{call.name}() compares values of one type",
            "declare both fields with the same type (e.g. both enum(...) or both int)",
        )
        ok = False
    if ms.normaliser and not metric.text:
        ck.error(
            m.span_of(ms, "normaliser"),
            f"measure {ms.name!r}: {call.name}() does not compare text; a normaliser does not apply",
            "normalisers belong to text metrics (exact_match, bleu, chrf, ter, rouge)",
        )
        ok = False
    return ok


def _classes(
    ck: CheckerState,
    ms: m.MeasureSpec,
    call: m.ComponentCall,
    metric: Any,
    gtype: FieldType | None,
) -> list[str] | None:
    """The class set of a class aggregation: the metric's ``labels``, else the gold field's enum values."""
    enum = [str(v) for v in gtype.values] if gtype is not None and gtype.kind == "enum" else None
    declared = list(metric.labels)
    if not declared and enum is None:
        ck.error(
            m.span_of(ms, "metric"),
            f"measure {ms.name!r}: {call.name}() needs the class set",
            f'give labels = ["a", "b", ...] to {call.name}(), or type the gold field {ms.gold!r} as enum(a, b, ...)',
        )
        return None
    if declared and enum is not None and gtype is not None:
        stray = [c for c in declared if c not in enum]
        if stray:
            ck.error(
                m.span_of(ms, "metric"),
                f"measure {ms.name!r}: class {stray[0]!r} is not a value of gold field {ms.gold!r} ({gtype.spelling()})",
                "the class set must be values the data can have",
            )
            return None
    if len(set(declared or enum or [])) != len(declared or enum or []):
        ck.error(m.span_of(ms, "metric"), f"measure {ms.name!r}: a class is listed twice")
        return None
    return declared or enum
