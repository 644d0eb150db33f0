"""Generic aggregators and the declarative set-matching scorer built from ``match`` blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runners._types import GoldSet, ItemScore
from runners.filters import AnswerFilter
from runners.matching import Matcher, PairScorer
from runners.registry import component


@component("aggregator", "mean")
def mean(items: Sequence[ItemScore]) -> dict[str, float]:
    """Plain mean over items of every per-item value (0.0 for an empty set of items)."""
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    n = len(items)
    return {k: (sum(item.values.get(k, 0.0) for item in items) / n if n else 0.0) for k in keys}


@component("aggregator", "sum")
def total(items: Sequence[ItemScore]) -> dict[str, float]:
    """Sum over items of every per-item value."""
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    return {k: float(sum(item.values.get(k, 0.0) for item in items)) for k in keys}


@dataclass(frozen=True)
class MatchStage:
    """One ``match`` block: filters, a pair scorer and a matcher, writing three per-item values."""

    gold_field: str
    prediction_field: str
    filters: tuple[AnswerFilter, ...]
    pairs: PairScorer
    matcher: Matcher
    outputs: tuple[str, str, str]


@dataclass(frozen=True)
class MatchScorer:
    """Scores every gold item with each match stage; a missing prediction is an empty answer list."""

    stages: tuple[MatchStage, ...]

    def __call__(self, gold: GoldSet, predictions: Mapping[str, Any]) -> list[ItemScore]:
        out = []
        for item_id, record in gold.items.items():
            prediction = predictions.get(item_id) or {}
            values: dict[str, float] = {}
            for stage in self.stages:
                answers = list(prediction.get(stage.prediction_field) or [])
                for f in stage.filters:
                    answers = f(answers)
                prf = stage.matcher(list(record.get(stage.gold_field) or []), answers, stage.pairs)
                p, r, f1 = stage.outputs
                values[p], values[r], values[f1] = prf.precision, prf.recall, prf.f1
            out.append(ItemScore(item_id, values))
        return out
