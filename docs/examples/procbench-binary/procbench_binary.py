"""Binary classification for procbench: the Matthews correlation coefficient and a yes/no normaliser.

A plugin written against procbench's public API (``procbench.ext``) only; docs/plugins.md walks through it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from procbench.ext import ANY, Metric, Stats, component, label_text, library_metric

AFFIRMATIVE = frozenset({"y", "yes", "true", "1"})
NEGATIVE = frozenset({"n", "no", "false", "0"})


class MatthewsCorrelation(Metric):
    """MCC of one class against the rest, from the items' (gold is positive, prediction is positive) pairs."""

    gold = (ANY,)
    prediction = (ANY,)
    aggregations = ("corpus",)  # pooled over the items, never averaged per item
    one_value = (
        True  # one label per item: lists, orderings and sets are refused by `procbench check`
    )
    same_type = True
    text = True  # a spec's normaliser may apply to both sides first
    percent = False  # shown as -0.42, not -42%
    value_range = (-1.0, 1.0)
    library = "scikit-learn matthews_corrcoef"

    def __init__(self, positive: str) -> None:
        self.positive = positive

    def signature(self) -> str:
        return f"positive={self.positive}"  # part of the task's fingerprint

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (":gold", ":prediction")

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        """(1 if the gold value is the positive class, 1 if the prediction is); no prediction: negative."""
        predicted = prediction is not None and label_text(prediction) == self.positive
        return (float(label_text(gold) == self.positive), float(predicted))

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        tp = sum(1 for g, p in rows if g and p)
        fp = sum(1 for g, p in rows if not g and p)
        fn = sum(1 for g, p in rows if g and not p)
        tn = len(rows) - tp - fp - fn
        denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        return ((tp * tn - fp * fn) / denominator if denominator else 0.0,)  # scikit-learn's 0.0


@library_metric("mcc")
def mcc(*, positive: str = "yes") -> Metric:
    """Matthews correlation of the class ``positive`` against every other value (no prediction: another value)."""
    return MatthewsCorrelation(positive)


@component("normaliser", "yes_no", takes="str", gives="str")
def yes_no() -> Callable[[str], str]:
    """Answers as "yes" or "no": y, Yes., true, 1 as "yes"; n, No!, false, 0 as "no"; other texts unchanged."""

    def normalise(text: str) -> str:
        word = text.strip().strip(".!").strip().lower()
        if word in AFFIRMATIVE:
            return "yes"
        if word in NEGATIVE:
            return "no"
        return text

    return normalise
