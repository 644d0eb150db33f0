"""PARADISE scoring: accuracy (the official metric) plus weighted precision, recall and F1.

Upstream prints these through Hugging Face ``evaluate``, i.e. scikit-learn with
``average="weighted"`` (metrics.md 3.2).  scikit-learn reproduces it but costs about 6 ms a call,
and the site's bootstrap calls the aggregator thousands of times, so the weighted average is
computed here in plain Python; scikit-learn is the oracle it is tested against.
"""

from __future__ import annotations

from collections import Counter
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
    """Support-weighted P/R/F1 over the labels seen in either list, as scikit-learn's ``average="weighted"``.

    A class never predicted has precision 0 and a class with P + R = 0 has F1 0 (``zero_division=0``).
    """
    if not gold:
        return WeightedPRF(0.0, 0.0, 0.0)
    support = Counter(gold)
    guessed = Counter(predicted)
    hits = Counter(g for g, p in zip(gold, predicted) if g == p)
    total = precision = recall = f1 = 0.0
    for label, weight in support.items():  # labels only predicted have weight 0
        p = hits[label] / guessed[label] if guessed[label] else 0.0
        r = hits[label] / weight
        precision += weight * p
        recall += weight * r
        f1 += weight * (2 * p * r / (p + r) if p + r else 0.0)
        total += weight
    return WeightedPRF(precision / total, recall / total, f1 / total)


@component("scorer", "paradise.accuracy", needs={"label": "int"}, emits=("correct", "predicted", "gold"))
def score_choices(gold: GoldSet, predictions: Mapping[str, int]) -> list[ItemScore]:
    """Per item: ``correct`` (1/0), ``predicted`` and ``gold`` (ending indices 0-3)."""
    scores = []
    for item_id, item in gold.items.items():
        assert isinstance(item, ParadiseItem)
        predicted = int(predictions[item_id])
        values = {"correct": float(predicted == item.label), "predicted": float(predicted), "gold": float(item.label)}
        scores.append(ItemScore(item_id, values))
    return scores


@component("aggregator", "paradise.accuracy", emits=("accuracy", "weighted_p", "weighted_r", "weighted_f1"))
def aggregate_accuracy(items: Sequence[ItemScore]) -> dict[str, float]:
    """``accuracy`` (fraction in [0, 1]) and ``weighted_p``/``weighted_r``/``weighted_f1``; zeros when empty."""
    if not items:
        return {"accuracy": 0.0, "weighted_p": 0.0, "weighted_r": 0.0, "weighted_f1": 0.0}
    accuracy = sum(item.values["correct"] for item in items) / len(items)
    prf = weighted_prf([int(i.values["gold"]) for i in items], [int(i.values["predicted"]) for i in items])
    return {"accuracy": accuracy, "weighted_p": prf.precision, "weighted_r": prf.recall, "weighted_f1": prf.f1}
