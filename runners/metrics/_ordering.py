"""Ordering and grading metrics: Kendall's tau (b, c), Spearman, Pearson (scipy), exact order.

Two uses.  Per item (``aggregate = mean``): the gold and predicted fields are lists, either numbers
compared position by position, or an ordering of texts (step names): the correlation is then between
each gold element's position and its position in the prediction, an element the prediction leaves
out being ranked after everything it lists (tied with the other omissions).  Across items
(``aggregate = corpus``): the fields are numbers (a grade, a score) and the correlation is over the
(gold, prediction) pairs of all items, items without a prediction left out.  Where scipy gives NaN
(constant input, fewer than two values) the value is 0.0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from runners.metrics._base import NUMBER, NUMBERS, TEXTS, Metric, Stats, finite, library_metric


class Correlation(Metric):
    gold = (NUMBERS, TEXTS, NUMBER)
    prediction = (NUMBERS, TEXTS, NUMBER)
    aggregations = ("mean", "corpus")
    same_type = True

    def __init__(self, kind: str, variant: str = "b"):
        self.kind, self.variant = kind, variant
        self.library = {"kendall": f"scipy.stats.kendalltau (variant {variant})", "spearman": "scipy.stats.spearmanr", "pearson": "scipy.stats.pearsonr"}[kind]

    def accepts(self, aggregate: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return ((NUMBER,), (NUMBER,)) if aggregate == "corpus" else ((NUMBERS, TEXTS), (NUMBERS, TEXTS))

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (":gold", ":prediction") if aggregate == "corpus" else ("",)

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        if aggregate == "corpus":
            return (float(gold), math.nan if prediction is None else float(prediction))
        x, y = paired_positions(gold, prediction)
        return (self.correlate(x, y),)

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        if aggregate != "corpus":
            return super().reduce(rows, "mean")
        pairs = [r for r in rows if not math.isnan(r[1])]
        return (self.correlate([p[0] for p in pairs], [p[1] for p in pairs]),)

    def correlate(self, x: Sequence[float], y: Sequence[float]) -> float:
        if len(x) < 2:
            return 0.0
        import warnings

        from scipy import stats

        with warnings.catch_warnings():  # constant input: scipy warns and returns NaN, which becomes 0.0
            warnings.simplefilter("ignore")
            if self.kind == "kendall":
                return finite(stats.kendalltau(x, y, variant=self.variant).statistic)
            if self.kind == "spearman":
                return finite(stats.spearmanr(x, y).statistic)
            return finite(stats.pearsonr(x, y).statistic)


def paired_positions(gold: Sequence[Any], prediction: Sequence[Any] | None) -> tuple[list[float], list[float]]:
    """Number lists as they are (equal lengths required); text orderings as (gold position, predicted position)."""
    predicted = list(prediction or [])
    if gold and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in gold):
        if len(predicted) != len(gold):
            raise ValueError(f"the prediction has {len(predicted)} values for {len(gold)} gold values")
        return [float(v) for v in gold], [float(v) for v in predicted]
    where: dict[float, int] = {}
    for position, value in enumerate(predicted):
        where.setdefault(value, position)
    return [float(i) for i in range(len(gold))], [float(where.get(value, len(predicted))) for value in gold]


class ExactOrder(Metric):
    gold = (TEXTS, NUMBERS)
    prediction = (TEXTS, NUMBERS)
    same_type = True
    library = "list equality"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        return (1.0 if prediction is not None and list(prediction) == list(gold) else 0.0,)


# -- components ---------------------------------------------------------------------------------------


@library_metric("kendall_tau")
def kendall_tau(*, variant: Literal["b", "c"] = "b") -> Metric:
    """scipy's Kendall tau (variant b or c): per item over list fields (aggregate = mean), or across items over numbers (aggregate = corpus)."""
    return Correlation("kendall", variant)


@library_metric("spearman")
def spearman() -> Metric:
    """scipy's Spearman rho: per item over list fields (aggregate = mean), or across items over numbers (aggregate = corpus)."""
    return Correlation("spearman")


@library_metric("pearson")
def pearson() -> Metric:
    """scipy's Pearson r: per item over list fields (aggregate = mean), or across items over numbers (aggregate = corpus)."""
    return Correlation("pearson")


@library_metric("exact_order")
def exact_order() -> Metric:
    """1 where the predicted list equals the gold list element by element (same order), else 0; aggregate = mean."""
    return ExactOrder()
