"""Ranking metrics: a predicted ranking (``ordering(T)``) against the gold's relevant items (``set(T)``).

Relevance is binary: an item is relevant when the gold set holds it.  Per item:

- ``mrr()``: 1 / the rank of the first relevant item of the ranking (0 when none is);
- ``ndcg(k)``: DCG of the first ``k`` ranks (gain 1 for a relevant item at rank r, discounted by
  log2(r + 1)) over the DCG of an ideal ranking of the gold set cut at ``k``, as scikit-learn's
  ``ndcg_score`` computes it (docs/metrics.md, "Rankings", for how a relevant item the ranking leaves
  out is placed); ``k = 0`` ranks the whole list;
- ``recall_at(k)``: the share of the gold's relevant items among the first ``k`` ranks.

A gold set with no relevant item gives 0.0 (scikit-learn's value for an all-zero relevance).  A
ranking that lists an item twice is invalid (:meth:`Metric.invalid`); an unanswered item (None,
"scored as empty") ranks nothing and gives 0.0.  Every per-item value is averaged over the items.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from procbench.runners.metrics._base import Metric, Stats, library_metric
from procbench.runners.metrics._ordering import ORDERING, _named, bare, element
from procbench.runners.runtime.predictions import COLLECTION_KINDS, FieldType

RELEVANT = FieldType("set")


class Ranking(Metric):
    gold = (RELEVANT,)
    prediction = (ORDERING,)
    aggregations = ("mean",)

    def __init__(self, name: str, k: int = 0):
        if k < 0:
            raise ValueError(f"k is a number of ranks, 0 for all of them; got {k}")
        self.name, self.k = name, k

    def signature(self) -> str:
        return f"k={self.k}" if self.k else ""

    def refuses(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> tuple[str, str, str] | None:
        g, p = bare(gold), bare(prediction)
        if g is None or g.kind != "set":
            spelled = g.spelling() if g is not None else "undeclared"
            return (
                "gold",
                f"{self.name}() reads the gold as the set of relevant items (set(T)), but the gold field is {spelled}",
                f"declare the gold field set({element(g) if g is not None and g.kind in COLLECTION_KINDS else 'T'}): order and repeats do not matter",
            )
        if p is None or p.kind != "ordering":
            spelled = p.spelling() if p is not None else "undeclared"
            return (
                "prediction",
                f"{self.name}() reads the prediction as a ranking (ordering(T), best first), but the prediction field is {spelled}",
                f"declare the prediction field ordering({element(p) if p is not None and p.kind in COLLECTION_KINDS else 'T'})",
            )
        if (
            g.item is not None
            and p.item is not None
            and not (g.item.fits(p.item) or p.item.fits(g.item))
        ):
            return (
                "prediction",
                f"the gold set holds {g.item.spelling()} but the ranking {p.item.spelling()}",
                "declare both with one item type",
            )
        return None

    def invalid(self, gold: Any, prediction: Any) -> str | None:
        repeated = [v for v, n in Counter(prediction).items() if n > 1]
        return f"a ranking lists each item once; repeated {_named(repeated)}" if repeated else None

    def ranked(self, prediction: Sequence[Any] | None) -> list[Any]:
        """The ranks that count: the first k (all with k = 0); an invalid ranking reaching here is an error."""
        ranking = list(prediction or [])
        if (
            why := self.invalid(None, ranking)
        ) is not None:  # only a declared `invalid = predict(...)` value gets here
            raise ValueError(f"the prediction is not a ranking: {why}")
        return ranking[: self.k] if self.k else ranking


class ReciprocalRank(Ranking):
    library = "reciprocal rank of the first relevant item (docs/metrics.md, rankings)"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        relevant = set(gold)
        return (
            next(
                (
                    1.0 / rank
                    for rank, value in enumerate(self.ranked(prediction), 1)
                    if value in relevant
                ),
                0.0,
            ),
        )


class NDCG(Ranking):
    library = "scikit-learn ndcg_score (binary relevance)"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        relevant = set(gold)
        gains = [1.0 if value in relevant else 0.0 for value in self.ranked(prediction)]
        ideal = [1.0] * (min(len(relevant), self.k) if self.k else len(relevant))
        best = _dcg(ideal)
        return (_dcg(gains) / best if best > 0 else 0.0,)


class RecallAt(Ranking):
    library = "the share of relevant items ranked in the first k (docs/metrics.md, rankings)"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        relevant = set(gold)
        found = len(relevant & set(self.ranked(prediction)))
        return (found / len(relevant) if relevant else 0.0,)


def _dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain: the gain at rank r divided by log2(r + 1), as scikit-learn's ``_dcg_sample_scores``."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, 1))


# -- components ---------------------------------------------------------------------------------------


@library_metric("mrr")
def mrr() -> Metric:
    """Mean reciprocal rank: 1 / the rank of the first relevant item (gold set(T)) in the predicted ordering(T), 0 if none; averaged."""
    return ReciprocalRank("mrr")


@library_metric("ndcg")
def ndcg(*, k: int = 0) -> Metric:
    """NDCG@k with binary relevance (gold set(T) of relevant items, predicted ordering(T)), as scikit-learn's ndcg_score; k = 0: every rank."""
    return NDCG("ndcg", k)


@library_metric("recall_at")
def recall_at(*, k: int = 10) -> Metric:
    """The share of the gold's relevant items (set(T)) among the first k of the predicted ordering(T), averaged over items."""
    return RecallAt("recall_at", k)
