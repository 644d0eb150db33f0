"""Per-process precision and recall of the four leaderboard questions (docs/metrics.md §2A.5–2A.6)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from runners.propara import summaries
from runners.propara.action_file import ProcessTracks
from runners.propara.similarity import guarded, location_similarity, participant_similarity

QUESTIONS = ("inputs", "outputs", "conversions", "moves")
T = TypeVar("T")


@dataclass(frozen=True)
class PrecisionRecall:
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 0.0 if total == 0 else 2 * self.precision * self.recall / total


def precision_recall(answers: Sequence[T], predictions: Sequence[T], pair_score: Callable[[T, T], float]) -> PrecisionRecall:
    """2A.6, including the quirk that recall reuses the precision numerator when |P| = |A|."""
    if not answers and not predictions:
        return PrecisionRecall(1.0, 1.0)
    if not answers:
        return PrecisionRecall(0.0, 1.0)
    if not predictions:
        return PrecisionRecall(1.0, 0.0)
    matrix = [[pair_score(a, p) for p in predictions] for a in answers]
    precision_numerator = sum(max(0.0, max(row[j] for row in matrix)) for j in range(len(predictions)))
    if len(predictions) == len(answers):
        recall_numerator = precision_numerator
    else:
        recall_numerator = sum(max(0.0, max(row)) for row in matrix)
    precision = 0.0 if precision_numerator == 0 else precision_numerator / len(predictions)
    recall = 0.0 if recall_numerator == 0 else recall_numerator / len(answers)
    return PrecisionRecall(precision, recall)


@dataclass(frozen=True)
class PairScorer:
    """Item pair scores of 2A.5; ``on_zero_denominator`` replaces upstream's ZeroDivisionError."""

    on_zero_denominator: float = 1.0

    def participants(self, a: str, p: str) -> float:
        return guarded(participant_similarity, a, p, self.on_zero_denominator)

    def locations(self, a: str, p: str) -> float:
        return guarded(location_similarity, a, p, self.on_zero_denominator)

    def conversion(self, a: summaries.Conversion, p: summaries.Conversion) -> float:
        if a.step != p.step:
            return 0.0
        parts = (
            self.locations(a.locations, p.locations),
            self.participants(a.destroyed, p.destroyed),
            self.participants(a.created, p.created),
        )
        return sum(parts) / 3

    def move(self, a: summaries.Move, p: summaries.Move) -> float:
        if a.step != p.step:
            return 0.0
        parts = (
            self.participants(a.participant, p.participant),
            self.locations(a.before, p.before),
            self.locations(a.after, p.after),
        )
        return sum(parts) / 3


def score_process(
    answer: ProcessTracks, prediction: ProcessTracks, pairs: PairScorer = PairScorer()
) -> dict[str, PrecisionRecall]:
    """Precision and recall of each question for one process."""
    return {
        "inputs": precision_recall(summaries.inputs(answer), summaries.inputs(prediction), pairs.participants),
        "outputs": precision_recall(summaries.outputs(answer), summaries.outputs(prediction), pairs.participants),
        "conversions": precision_recall(summaries.conversions(answer), summaries.conversions(prediction), pairs.conversion),
        "moves": precision_recall(summaries.moves(answer), summaries.moves(prediction), pairs.move),
    }
