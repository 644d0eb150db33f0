"""PARADISE scoring as functions: accuracy (the official metric) plus weighted precision, recall and F1.

The PARADISE specs declare this scoring with the metric library (``measure`` blocks: accuracy()
and prf(aggregate = "weighted"), the numbers of scikit-learn, which upstream prints through Hugging
Face ``evaluate``).  These functions compute the same with the same library code, for callers that
score PARADISE from Python (the parity tests) and for submissions stored under the old components.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from procbench.runners.runtime._types import GoldSet, ItemScore
from procbench.runners.metrics._classification import ClassMetric
from procbench.runners.paradise.data import ParadiseItem
from procbench.runners.runtime.registry import component


@dataclass(frozen=True)
class WeightedPRF:
    precision: float
    recall: float
    f1: float


def weighted_prf(gold: Sequence[int], predicted: Sequence[int]) -> WeightedPRF:
    """Support-weighted P/R/F1 over the labels seen in either list, as scikit-learn's ``average="weighted"``.

    The metric library's ``prf`` over those labels (a class never predicted has precision 0, P + R = 0
    gives F1 0: ``zero_division=0``); kept as a function for the parity tests' direct use.
    """
    classes = sorted(set(gold) | set(predicted))
    metric = ClassMetric("prf", classes)
    rows = [metric.item(g, p, "weighted") for g, p in zip(gold, predicted)]
    return WeightedPRF(*metric.reduce(rows, "weighted"))


@component(
    "scorer", "paradise.accuracy", needs={"label": "int"}, emits=("correct", "predicted", "gold")
)
def score_choices(gold: GoldSet, predictions: Mapping[str, int]) -> list[ItemScore]:
    """Per item: ``correct`` (1/0), ``predicted`` and ``gold`` (ending indices 0-3)."""
    scores = []
    for item_id, item in gold.items.items():
        assert isinstance(item, ParadiseItem)
        predicted = int(predictions[item_id])
        values = {
            "correct": float(predicted == item.label),
            "predicted": float(predicted),
            "gold": float(item.label),
        }
        scores.append(ItemScore(item_id, values))
    return scores


@component(
    "aggregator", "paradise.accuracy", emits=("accuracy", "weighted_p", "weighted_r", "weighted_f1")
)
def aggregate_accuracy(items: Sequence[ItemScore]) -> dict[str, float]:
    """``accuracy`` (fraction in [0, 1]) and ``weighted_p``/``weighted_r``/``weighted_f1``; zeros when empty."""
    if not items:
        return {"accuracy": 0.0, "weighted_p": 0.0, "weighted_r": 0.0, "weighted_f1": 0.0}
    accuracy = sum(item.values["correct"] for item in items) / len(items)
    prf = weighted_prf(
        [int(i.values["gold"]) for i in items], [int(i.values["predicted"]) for i in items]
    )
    return {
        "accuracy": accuracy,
        "weighted_p": prf.precision,
        "weighted_r": prf.recall,
        "weighted_f1": prf.f1,
    }
