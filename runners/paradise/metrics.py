"""PARADISE scoring: accuracy (the official metric) plus weighted precision, recall and F1.

Upstream prints these through Hugging Face ``evaluate``, i.e. scikit-learn with
``average="weighted"`` (metrics.md 3.2); scikit-learn reproduces it, so it is used here directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runners._types import GoldSet, ItemScore
from runners.paradise.data import ParadiseItem
from runners.registry import component


@dataclass(frozen=True)
class WeightedPRF:
    precision: float
    recall: float
    f1: float


def weighted_prf(gold: Sequence[int], predicted: Sequence[int]) -> WeightedPRF:
    """Support-weighted P/R/F1; a class never predicted has precision 0 (scikit-learn's default value)."""
    if not gold:
        return WeightedPRF(0.0, 0.0, 0.0)
    from sklearn.metrics import precision_recall_fscore_support  # slow import: only when scoring

    p, r, f, _ = precision_recall_fscore_support(list(gold), list(predicted), average="weighted", zero_division=0)
    return WeightedPRF(float(p), float(r), float(f))


@component("scorer", "paradise.accuracy")
def score_choices(gold: GoldSet, predictions: Mapping[str, int]) -> list[ItemScore]:
    """Per item: ``correct`` (1/0), ``predicted`` and ``gold`` (ending indices 0-3)."""
    scores = []
    for item_id, item in gold.items.items():
        assert isinstance(item, ParadiseItem)
        predicted = int(predictions[item_id])
        values = {"correct": float(predicted == item.label), "predicted": float(predicted), "gold": float(item.label)}
        scores.append(ItemScore(item_id, values))
    return scores


@component("aggregator", "paradise.accuracy")
def aggregate_accuracy(items: Sequence[ItemScore]) -> dict[str, float]:
    """``accuracy`` (fraction in [0, 1]) and ``weighted_p``/``weighted_r``/``weighted_f1``; zeros when empty."""
    if not items:
        return {"accuracy": 0.0, "weighted_p": 0.0, "weighted_r": 0.0, "weighted_f1": 0.0}
    accuracy = sum(item.values["correct"] for item in items) / len(items)
    prf = weighted_prf([int(i.values["gold"]) for i in items], [int(i.values["predicted"]) for i in items])
    return {"accuracy": accuracy, "weighted_p": prf.precision, "weighted_r": prf.recall, "weighted_f1": prf.f1}
