"""Generic aggregators and the declarative set-matching scorer built from ``match`` blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runners._types import GoldSet, ItemScore
from runners.filters import AnswerFilter
from runners.matching import PRF, Matcher, PairBatch, PairScorer
from runners.registry import component


def _rounded(values: dict[str, float], digits: int | None) -> dict[str, float]:
    return values if digits is None else {k: round(v, digits) for k, v in values.items()}


@component("aggregator", "mean")
def mean(items: Sequence[ItemScore], *, round_digits: int | None = None) -> dict[str, float]:
    """Plain mean over items of every per-item value (0.0 for no items); optionally Python-rounded."""
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    n = len(items)
    return _rounded({k: (sum(item.values.get(k, 0.0) for item in items) / n if n else 0.0) for k in keys}, round_digits)


@component("aggregator", "sum")
def total(items: Sequence[ItemScore], *, round_digits: int | None = None) -> dict[str, float]:
    """Sum over items of every per-item value; optionally Python-rounded."""
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    return _rounded({k: float(sum(item.values.get(k, 0.0) for item in items)) for k in keys}, round_digits)


@component("aggregator", "micro_prf")
def micro_prf(
    items: Sequence[ItemScore],
    *,
    correct: str = "correct",
    predicted: str = "predicted",
    gold: str = "gold",
    prefix: str = "",
    round_digits: int | None = None,
) -> dict[str, float]:
    """Micro-averaged P/R/F1 from summed per-item counts: P = Σcorrect/Σpredicted, R = Σcorrect/Σgold.

    Empty denominators give 0.  Outputs ``<prefix>p``, ``<prefix>r``, ``<prefix>f1``.
    """
    c = sum(item.values.get(correct, 0.0) for item in items)
    p_den = sum(item.values.get(predicted, 0.0) for item in items)
    r_den = sum(item.values.get(gold, 0.0) for item in items)
    p = c / p_den if p_den else 0.0
    r = c / r_den if r_den else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return _rounded({f"{prefix}p": p, f"{prefix}r": r, f"{prefix}f1": f1}, round_digits)


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
    """Scores every gold item with each match stage; a missing prediction is an empty answer list.

    Stages run one at a time over all items, so that a matcher with ``score_many`` can score the
    whole split in a few vectorised calls; the per-item values keep the stage order.  Consecutive
    stages that match the same answers with the same matcher and normalisers and differ only in
    their similarity (OpenPI's Exact, BLEU and ROUGE) are scored together: the answers are
    normalised, encoded and laid out once for all of them.
    """

    stages: tuple[MatchStage, ...]
    _batches: dict[tuple[int, ...], PairBatch] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __call__(self, gold: GoldSet, predictions: Mapping[str, Any]) -> list[ItemScore]:
        item_ids = list(gold.items)
        records = [gold.items[item_id] for item_id in item_ids]
        predicted = [predictions.get(item_id) or {} for item_id in item_ids]
        inputs = []
        for stage in self.stages:
            golds = [list(record.get(stage.gold_field) or []) for record in records]
            answers = []
            for prediction in predicted:
                listed = list(prediction.get(stage.prediction_field) or [])
                for f in stage.filters:
                    listed = f(listed)
                answers.append(listed)
            inputs.append((golds, answers))
        columns: list[list[PRF]] = []
        for group in self._groups(inputs):
            first = self.stages[group[0]]
            golds, answers = inputs[group[0]]
            if len(group) > 1:
                batch = self._batches.get(group)
                if batch is None:
                    batch = self._batches[group] = PairBatch([self.stages[i].pairs for i in group])
                columns.extend(first.matcher.score_shared(golds, answers, batch))  # type: ignore[attr-defined]
            elif hasattr(first.matcher, "score_many"):
                columns.append(first.matcher.score_many(golds, answers, first.pairs))  # type: ignore[attr-defined]
            else:
                columns.append([first.matcher(g, a, first.pairs) for g, a in zip(golds, answers)])
        out = []
        for position, item_id in enumerate(item_ids):
            values: dict[str, float] = {}
            for stage, column in zip(self.stages, columns):
                prf = column[position]
                p, r, f1 = stage.outputs
                values[p], values[r], values[f1] = prf.precision, prf.recall, prf.f1
            out.append(ItemScore(item_id, values))
        return out

    def _groups(self, inputs: list[tuple[list[list[str]], list[list[str]]]]) -> list[tuple[int, ...]]:
        """Runs of consecutive stages that can share one batch (the same answers, matcher and normalisers)."""
        groups: list[tuple[int, ...]] = []
        for i, stage in enumerate(self.stages):
            if groups and self._can_join(self.stages[groups[-1][0]], stage) and inputs[groups[-1][0]] == inputs[i]:
                groups[-1] = (*groups[-1], i)
            else:
                groups.append((i,))
        return groups

    @staticmethod
    def _can_join(first: MatchStage, stage: MatchStage) -> bool:
        return hasattr(first.matcher, "score_shared") and first.matcher == stage.matcher and PairBatch.shareable([first.pairs, stage.pairs])


@component("scorer", "field_match")
def field_match(gold: GoldSet, predictions: Mapping[str, Any], *, gold_field: str = "label", prediction_field: str = "label", output: str = "correct") -> list[ItemScore]:
    """1.0 where the prediction's field equals the gold field (compared as text), else 0.0; missing = 0."""
    out = []
    for item_id, record in gold.items.items():
        predicted = (predictions.get(item_id) or {}).get(prediction_field)
        expected = record.get(gold_field) if isinstance(record, Mapping) else None
        hit = predicted is not None and expected is not None and str(predicted).strip() == str(expected).strip()
        out.append(ItemScore(item_id, {output: 1.0 if hit else 0.0}))
    return out
