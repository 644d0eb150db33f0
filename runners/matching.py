"""Matchers: compare a gold answer set with a predicted answer set and return (P, R, F1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runners.registry import component
from runners.similarity import Similarity
from runners.text import IDENTITY, Pipeline


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def f1_of(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass
class PairScorer:
    """Scores raw answer strings: ``content`` normaliser, an empty-string guard, then the similarity.

    The guard is the OpenPI one: two empty contents score 1, exactly one empty content scores 0,
    whatever the similarity would say.  Prepared forms are cached per raw string.
    """

    similarity: Similarity
    content: Pipeline = IDENTITY
    similarity_input: Pipeline = IDENTITY
    guard_empty: bool = True
    _prepared: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def prepare(self, raw: str) -> tuple[str, Any]:
        hit = self._prepared.get(raw)
        if hit is None:
            content = self.content(raw)
            hit = (content, self.similarity.prepare(self.similarity_input(content)))
            self._prepared[raw] = hit
        return hit

    def score(self, gold: tuple[str, Any], prediction: tuple[str, Any]) -> float:
        if self.guard_empty and (not gold[0] or not prediction[0]):
            return 1.0 if not gold[0] and not prediction[0] else 0.0
        return self.similarity.score(gold[1], prediction[1])


class Matcher(Protocol):
    def __call__(self, gold: Sequence[str], predictions: Sequence[str], pairs: PairScorer) -> PRF: ...


@dataclass(frozen=True)
class BestMatch:
    """Soft set P/R/F1 without alignment: each prediction takes its best gold score and vice versa.

    ``dedup`` removes repeated predictions by raw string identity before scoring (gold is never
    de-duplicated).  Empty sides follow the OpenPI conventions, configurable per spec.
    """

    dedup: bool = False
    both_empty: tuple[float, float, float] = (1.0, 1.0, 1.0)
    gold_empty: tuple[float, float, float] = (0.0, 1.0, 0.0)
    prediction_empty: tuple[float, float, float] = (1.0, 0.0, 0.0)
    threshold: float = 0.0

    def __call__(self, gold: Sequence[str], predictions: Sequence[str], pairs: PairScorer) -> PRF:
        if not gold and not predictions:
            return PRF(*self.both_empty)
        if not gold:
            return PRF(*self.gold_empty)
        if not predictions:
            return PRF(*self.prediction_empty)
        if self.dedup:
            predictions = list(dict.fromkeys(predictions))
        gold_prepared = [pairs.prepare(g) for g in gold]
        distinct = list(dict.fromkeys(predictions))
        matrix = {p: [pairs.score(g, pairs.prepare(p)) for g in gold_prepared] for p in distinct}
        precision = sum(self._best(matrix[p]) for p in predictions) / len(predictions)
        recall = sum(self._best([matrix[p][j] for p in distinct]) for j in range(len(gold))) / len(gold)
        return PRF(precision, recall, f1_of(precision, recall))

    def _best(self, values: Sequence[float]) -> float:
        best = 0.0
        for value in values:
            if value > best:
                best = value
        return best if best >= self.threshold else 0.0


@component("matcher", "best_match")
def best_match(dedup: bool = False, *, threshold: float = 0.0) -> Matcher:
    """Best-match soft P/R/F1 (OpenPI); ``dedup`` drops repeated predictions, ``threshold`` zeroes weak best scores."""
    return BestMatch(dedup=dedup, threshold=threshold)


@dataclass(frozen=True)
class OneToOne:
    """Soft P/R/F1 under a one-to-one alignment that maximises the summed similarity.

    Each gold answer is paired with at most one prediction (Hungarian algorithm, scipy's
    ``linear_sum_assignment``); pairs scoring below ``threshold`` count as unmatched.
    """

    threshold: float = 0.0
    both_empty: tuple[float, float, float] = (1.0, 1.0, 1.0)
    gold_empty: tuple[float, float, float] = (0.0, 1.0, 0.0)
    prediction_empty: tuple[float, float, float] = (1.0, 0.0, 0.0)

    def __call__(self, gold: Sequence[str], predictions: Sequence[str], pairs: PairScorer) -> PRF:
        import numpy as np
        from scipy.optimize import linear_sum_assignment

        if not gold and not predictions:
            return PRF(*self.both_empty)
        if not gold:
            return PRF(*self.gold_empty)
        if not predictions:
            return PRF(*self.prediction_empty)
        gold_prepared = [pairs.prepare(g) for g in gold]
        matrix = np.array([[pairs.score(g, pairs.prepare(p)) for g in gold_prepared] for p in predictions])
        rows, cols = linear_sum_assignment(matrix, maximize=True)
        total = float(sum(v for v in matrix[rows, cols] if v >= self.threshold))
        precision, recall = total / len(predictions), total / len(gold)
        return PRF(precision, recall, f1_of(precision, recall))


@component("matcher", "one_to_one")
def one_to_one(threshold: float = 0.0) -> Matcher:
    """One-to-one alignment maximising total similarity (each answer used once); weak pairs below ``threshold`` score 0."""
    return OneToOne(threshold=threshold)
