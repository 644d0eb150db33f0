"""``missing = ...`` and ``invalid = ...``: how a measure counts predictions it cannot compare as they are.

A measure block (or the score block, for all of its measures) declares what an item without a
prediction record counts as (``missing``) and what a prediction the metric cannot measure counts as
(``invalid``: :meth:`procbench.runners.metrics._base.Metric.invalid` says why, e.g. not a permutation of the
gold).  The forms, documented in docs/language.md (measure blocks):

* ``"empty"``: scored as an unanswered item (the metric's ``item(gold, None)``);
* ``"refuse"``: the prediction file is refused, every such item listed;
* ``predict(<value>)``: scored as if that value had been predicted (checked against the prediction field's type);
* ``score(<number>)``: the item's per-item score is that number (metrics with one per-item value, averaged or summed).

Undeclared, a measure keeps what procbench always did: missing = "empty", invalid = "refuse".  Defaults
are never written into the checked spec, so the fingerprints of specs that declare nothing stay as they were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import Binder, describe, literal
from procbench.runners.metrics._base import Metric
from procbench.runners.runtime.predictions import FieldType

FORMS = '"empty", "refuse", predict(<value>) or score(<number>)'
_WORDS = ("empty", "refuse")


def parse(ck: Binder, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
    """One convention as the model keeps it: ("empty",), ("refuse",), ("predict", value) or ("score", number)."""
    hint = f'{where} is one of {FORMS}, e.g. predict("equally likely") or score(-1)'
    if isinstance(expr, s.Str):
        if expr.value in _WORDS:
            return (expr.value,)
        ck.unknown(expr.span, f"value for {where}", expr.value, _WORDS)
        return None
    if isinstance(expr, s.Ref) and expr.dotted in _WORDS:
        ck.error(
            expr.span,
            f"{where}: {expr.dotted} is written in double quotes",
            f'write "{expr.dotted}"',
        )
        return None
    if isinstance(expr, s.Call) and expr.callee.dotted in ("predict", "score"):
        form = expr.callee.dotted
        if len(expr.args) != 1 or expr.kwargs:
            ck.error(expr.span, f"{where}: {form}(...) takes one value", hint)
            return None
        (arg,) = expr.args
        if form == "score":
            if not isinstance(arg, s.Num) or isinstance(arg.value, bool):
                ck.error(
                    arg.span,
                    f"{where}: score(...) takes a number, got {describe(arg)}",
                    "e.g. score(-1) or score(0)",
                )
                return None
            return ("score", float(arg.value))
        if not isinstance(arg, (s.Str, s.Num, s.Bool, s.ListExpr)):
            ck.error(
                arg.span,
                f"{where}: predict(...) takes a value of the prediction field, got {describe(arg)}",
                'e.g. predict("equally likely")',
            )
            return None
        return ("predict", literal(arg))
    ck.error(expr.span, f"{where} is {FORMS}, got {describe(expr)}", hint)
    return None


def declared(
    ms: m.MeasureSpec, score: m.ScoreSpec, part: str
) -> tuple[tuple[Any, ...] | None, Any]:
    """The convention a measure follows for ``part`` as written (its own, else the score block's; None: the default) and whose it is."""
    own = getattr(ms, part)
    if own is not None:
        return own, ms
    return getattr(score, part), score


def check(
    ck: Binder,
    score: m.ScoreSpec,
    checked: Sequence[m.MeasureSpec],
    measured: Sequence[tuple[m.MeasureSpec, Any]],
    pred: Mapping[str, FieldType],
) -> None:
    """Each declared convention fits its measure: a value of the prediction field's type, a score only over one per-item value.

    ``score``: the score block as written; ``checked``: its measures that passed their checks; ``measured``: (measure, metric) of each.
    """
    metrics = {ms.name: metric for ms, metric in measured}
    compared = [
        (ms, metrics[ms.name])
        for ms in checked
        if ms.metric is not None and ms.gold is not None and ms.prediction is not None
    ]
    for ms in score.measures:
        if ms.metric is None and (ms.missing is not None or ms.invalid is not None):
            part = "missing" if ms.missing is not None else "invalid"
            ck.error(
                m.span_of(ms, part),
                f"measure {ms.name!r}: {part} = ... says how a prediction counts; this measure compares no prediction field",
                "declare it on a measure with metric, gold and prediction",
            )
    for part in ("missing", "invalid"):
        if getattr(score, part) is not None and not any(
            ms.metric is not None for ms in score.measures
        ):
            ck.error(
                m.span_of(score, part),
                f"score: {part} = ... is the default of the measure blocks that compare a prediction field, and this task has none",
                "remove it: match blocks and scorer components decide for themselves how an absent prediction counts",
            )
    reported: set[str] = (
        set()
    )  # a score-level convention that fits no measure is one mistake: one error
    for ms, metric in compared:
        for part in ("missing", "invalid"):
            convention, owner = declared(ms, score, part)
            if convention is None or (owner is score and part in reported):
                continue
            errors = len(ck.errors)
            _fits(
                ck,
                ms,
                metric,
                convention,
                m.span_of(owner, part),
                part,
                pred.get(ms.prediction or ""),
            )
            if owner is score and len(ck.errors) > errors:
                reported.add(part)


def _fits(
    ck: Binder,
    ms: m.MeasureSpec,
    metric: Any,
    convention: tuple[Any, ...],
    span: s.Span,
    part: str,
    ptype: FieldType | None,
) -> None:
    form = convention[0]
    if form == "predict" and type(metric).invalid is not Metric.invalid:
        assert ms.metric is not None  # only measures that compare a prediction field get here
        ck.error(
            span,
            f"measure {ms.name!r}: {part} = predict(...): {ms.metric.name}() checks each prediction against its item's gold "
            "(an ordering must be a permutation of the gold's items), so one declared prediction does not fit every item",
            'use score(<number>) (e.g. score(-1)), "empty" or "refuse"',
        )
        return
    if form == "predict":
        value = m.thaw(convention[1])
        _, accepted = metric.accepts(ms.aggregate)
        types = (ptype,) if ptype is not None else tuple(accepted)
        if not any(t.accepts(value) for t in types):
            spelled = " or ".join(t.spelling() for t in types)
            example = f"predict({_example(types[0])})" if types else "predict(...)"
            ck.error(
                span,
                f"measure {ms.name!r}: {part} = predict({_shown(value)}): prediction field {ms.prediction!r} is {spelled}, which {_shown(value)} is not",
                f"predict a value of that type, e.g. {example}",
            )
    elif form == "score":
        assert ms.metric is not None  # only measures that compare a prediction field get here
        stats = metric.stat_names(ms.aggregate)
        if len(stats) != 1 or ms.aggregate not in ("mean", "sum"):
            ck.error(
                span,
                f"measure {ms.name!r}: {part} = score(...) sets an item's per-item score, but {ms.metric.name}() with aggregate = {ms.aggregate!r} "
                f"keeps {len(stats)} statistic(s) per item{'' if ms.aggregate in ('mean', 'sum') else ' and aggregates them together'}",
                'use predict(<value>) (counted as that prediction), "empty" or "refuse"',
            )


def _shown(value: Any) -> str:
    import json

    return json.dumps(value)


def _example(ftype: FieldType) -> str:
    if ftype.kind == "enum" and ftype.values:
        return _shown(ftype.values[0])
    return {
        "str": '"text"',
        "int": "0",
        "float": "0.0",
        "bool": "false",
        "list": "[]",
        "optional": "...",
    }.get(ftype.kind, "...")
