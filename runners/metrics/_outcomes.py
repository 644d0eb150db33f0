"""Question outcomes: true/false positives and negatives counted per item, pooled into one score.

Some benchmarks ask many small questions per item and score them together (ProPara NAACL'18 asks,
per paragraph, did each participant get created, at which step, where to: docs/metrics.md §2B.5).
A format component extracts each question's gold answer and the prediction's answer, as two aligned
lists of one field (the i-th prediction answers the i-th gold question); these metrics count the
outcomes of each pair and pool the counts over any set of items (``aggregate = "pooled"``, the only
one: the official scorers sum the counts over the whole split before dividing):

* ``binary_outcomes()``: yes/no questions; each pair is a TP, FP, TN or FN.
* ``answer_outcomes(match)``: questions with one answer; no answer (``None``) is a FN, a matching
  answer a TP, any other answer a FP (never a TN).  ``match = "contained"`` accepts an answer that
  is the gold's (normalised) tokens or a run of them, as upstream's location check does.
* ``set_outcomes()``: questions with several answers out of ``out_of`` candidates: TP = |P ∩ G|,
  FP = |P - G|, FN = |G - P|, TN = out_of - TP - FP - FN (upstream's formula, not clipped), with the
  prediction's ``out_of`` (the candidates it chose among; NAACL'18 takes the grid's step count), the
  gold's where nothing was predicted.

``score`` picks the pooled number: accuracy (TP + TN) / all, precision, recall or F1 (from the
pooled precision and recall, which are also reported as ``<measure>_p`` and ``<measure>_r``); a zero
denominator gives 0.  Each item stores its four counts
(``<measure>:tp`` ...), so a slice or a bootstrap resample is scored from its own items' counts.
No library defines these question counts: the formulas are the official scorer's (the tests check
them against the NAACL'18 evaluator's printed counts and against scikit-learn's confusion matrix
for the yes/no case).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from operator import add
from typing import Any, Literal

from procbench.runners.metrics._base import Metric, Stats, library_metric
from procbench.runners.metrics._counts import _ratio
from procbench.runners.metrics._derived import _f1
from procbench.runners.runtime.predictions import FieldType, member_of

OUTCOMES = ("tp", "fp", "tn", "fn")
Score = Literal["accuracy", "precision", "recall", "f1"]


def pooled_score(score: str, tp: float, fp: float, tn: float, fn: float) -> float:
    """The pooled number ``score`` of summed counts (F1 from the pooled precision and recall, 0 when both are 0)."""
    if score == "accuracy":
        return _ratio(tp + tn, tp + fp + tn + fn)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    if score == "precision":
        return precision
    if score == "recall":
        return recall
    return _f1(precision, recall)


class _Outcomes(Metric):
    """Per item the four outcome counts of its aligned (gold, prediction) question pairs."""

    aggregations = ("pooled",)
    percent = True
    library = ""

    def __init__(self, score: str = "accuracy"):
        self.score = score

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return tuple(f":{o}" for o in OUTCOMES)

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        return (name, f"{name}_p", f"{name}_r") if self.score == "f1" else (name,)

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        gold = list(gold)
        predicted = (
            [None] * len(gold) if prediction is None else list(prediction)
        )  # no prediction record: nothing answered
        if len(predicted) != len(gold):
            raise ValueError(
                f"{len(gold)} gold questions but {len(predicted)} predicted answers: the two lists must be aligned"
            )
        counts = dict.fromkeys(OUTCOMES, 0)
        for g, p in zip(gold, predicted):
            for outcome, n in self.outcomes(g, p):
                counts[outcome] += n
        return tuple(float(counts[o]) for o in OUTCOMES)

    def outcomes(self, gold: Any, predicted: Any) -> Sequence[tuple[str, int]]:
        raise NotImplementedError

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        # each count summed over the items left to right from 0, as the official scorers accumulate
        tp, fp, tn, fn = (reduce(add, column, 0) for column in zip(*rows)) if rows else (0, 0, 0, 0)
        if self.score == "f1":
            return (
                pooled_score("f1", tp, fp, tn, fn),
                pooled_score("precision", tp, fp, tn, fn),
                pooled_score("recall", tp, fp, tn, fn),
            )
        return (pooled_score(self.score, tp, fp, tn, fn),)


class BinaryOutcomes(_Outcomes):
    gold = (FieldType.parse("list(bool)"),)
    prediction = (FieldType.parse("list(optional(bool))"),)
    library = "scikit-learn confusion_matrix (labels [false, true]), pooled"

    def outcomes(self, gold: Any, predicted: Any) -> Sequence[tuple[str, int]]:
        if predicted:
            return (("tp" if gold else "fp", 1),)
        return (("fn" if gold else "tn", 1),)


class AnswerOutcomes(_Outcomes):
    gold = (FieldType.parse("list(any)"),)
    prediction = (FieldType.parse("list(optional(any))"),)
    text = True  # a measure's normaliser applies to text answers first

    def __init__(self, score: str = "accuracy", match: str = "equal"):
        super().__init__(score)
        self.match = match

    def outcomes(self, gold: Any, predicted: Any) -> Sequence[tuple[str, int]]:
        if predicted is None:
            return (("fn", 1),)
        return (("tp" if self.matches(predicted, gold) else "fp", 1),)

    def matches(self, predicted: Any, gold: Any) -> bool:
        if predicted == gold:
            return True
        if self.match == "contained" and isinstance(predicted, str) and isinstance(gold, str):
            # padded with one space each side: a run of whole tokens, not part of a word ("oil" is not in "soil")
            return f" {predicted} " in f" {gold} "
        return False


class SetOutcomes(_Outcomes):
    gold = (FieldType.parse("list(record(answers: list(any), out_of: int))"),)
    prediction = gold

    def outcomes(self, gold: Any, predicted: Any) -> Sequence[tuple[str, int]]:
        wanted = set(member_of(gold, "answers"))
        given = set(member_of(predicted, "answers")) if predicted is not None else set()
        out_of = member_of(predicted if predicted is not None else gold, "out_of")
        tp, fp, fn = len(given & wanted), len(given - wanted), len(wanted - given)
        return (("tp", tp), ("fp", fp), ("fn", fn), ("tn", out_of - tp - fp - fn))


@library_metric("binary_outcomes")
def binary_outcomes(*, score: Score = "accuracy") -> Metric:
    """Yes/no questions, aligned lists of booleans per item: TP, FP, TN, FN pooled over items into ``score``."""
    return BinaryOutcomes(score)


@library_metric("answer_outcomes")
def answer_outcomes(
    *, score: Score = "accuracy", match: Literal["equal", "contained"] = "equal"
) -> Metric:
    """One-answer questions, aligned lists per item (no answer: None): FN unanswered, TP matching, else FP; pooled into ``score``."""
    return AnswerOutcomes(score, match)


@library_metric("set_outcomes")
def set_outcomes(*, score: Score = "f1") -> Metric:
    """Several-answer questions, records (answers, out_of) per item: TP/FP/FN of the answer sets, TN the rest of out_of; pooled."""
    return SetOutcomes(score)
