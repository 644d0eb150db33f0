"""The ProPara leaderboard evaluator's matching as first written in Python: the oracle of the declared spec.

specs/propara.spec declares this matching with library components (phrase_overlap, record similarity
blocks, best_match with the recall quirk).  This module keeps the direct, independent transcription of
docs/metrics.md §2A.5–2A.6 it replaced, so that tests can compare the two on real and generated grids.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from procbench.runners.runtime._types import PredictionWarning
from procbench.runners.propara import summaries
from procbench.runners.propara.action_file import ProcessTracks

QUESTIONS = ("inputs", "outputs", "conversions", "moves")
T = TypeVar("T")


@lru_cache(maxsize=1)
def _porter() -> Any:
    """NLTK's Porter stemmer in its default mode (NLTK_EXTENSIONS), the variant upstream copied.

    procbench.runners.library.porter computes it without NLTK, whose package import pulls SciPy, scikit-learn and
    pandas (about 1.5 s); it is checked against NLTK on the ProPara vocabulary (tests/test_porter_oracle.py).
    """
    from procbench.runners.library.porter import PorterStemmer

    return PorterStemmer()


ARTICLES = (
    "a ",
    "an ",
    "the ",
    "your ",
    "his ",
    "their ",
    "my ",
    "another ",
    "other ",
    "this ",
    "that ",
)


class ZeroDenominator(ArithmeticError):
    """Both phrases' groups all intersect pairwise so that ``|A| + |P| - overlap`` is 0."""


def _groups(phrase: str) -> list[list[str]]:
    return [group.strip().split(" OR ") for group in phrase.split(" AND ")]


def participant_terms(phrase: str) -> list[frozenset[str]]:
    """Participants keep their alternatives as written (no folding, items not stripped)."""
    return [frozenset(items) for items in _groups(phrase)]


def location_terms(phrase: str) -> list[frozenset[str]]:
    """Locations: a group with an empty item becomes {""}; else each item is normalised."""
    return [
        frozenset({""})
        if any(not item.strip() for item in items)
        else frozenset(normalise_location(i) for i in items)
        for items in _groups(phrase)
    ]


@lru_cache(maxsize=65536)
def normalise_location(item: str) -> str:
    """Lower-case, drop one leading article, Porter-stem the whole string as one word, strip."""
    text = item.lower()
    for article in ARTICLES:
        if text.startswith(article):
            text = text.replace(article, "", 1)
            break
    return _porter().stem(text).strip()


def _similarity(
    a: str, p: str, a_terms: list[frozenset[str]], p_terms: list[frozenset[str]]
) -> float:
    if a == p:
        return 1.0
    overlap = sum(1 for ga in a_terms for gp in p_terms if ga & gp)
    denominator = len(a_terms) + len(p_terms) - overlap
    if denominator == 0:
        raise ZeroDenominator(f"{a!r} vs {p!r}")
    return overlap / denominator


def participant_similarity(answer: str, prediction: str) -> float:
    return _similarity(answer, prediction, participant_terms(answer), participant_terms(prediction))


def location_similarity(answer: str, prediction: str) -> float:
    return _similarity(answer, prediction, location_terms(answer), location_terms(prediction))


def guarded(
    similarity: Callable[[str, str], float],
    answer: str,
    prediction: str,
    on_zero_denominator: float,
) -> float:
    """``similarity(answer, prediction)``; upstream's ZeroDivisionError becomes a warned value.

    A zero denominator means every group of one phrase meets every group of the other (e.g.
    "soil AND Soil" vs "Soil AND soil"); upstream crashes, we score it ``on_zero_denominator``
    (1.0 by default: the two phrases name the same things) and say so.
    """
    try:
        return similarity(answer, prediction)
    except ZeroDenominator:
        warnings.warn(
            PredictionWarning(
                f"similarity of {answer!r} and {prediction!r} has a zero denominator (upstream crashes); scored {on_zero_denominator}"
            ),
            stacklevel=2,
        )
        return on_zero_denominator


@dataclass(frozen=True)
class PrecisionRecall:
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 0.0 if total == 0 else 2 * self.precision * self.recall / total


def precision_recall(
    answers: Sequence[T], predictions: Sequence[T], pair_score: Callable[[T, T], float]
) -> PrecisionRecall:
    """2A.6, including the quirk that recall reuses the precision numerator when |P| = |A|."""
    if not answers and not predictions:
        return PrecisionRecall(1.0, 1.0)
    if not answers:
        return PrecisionRecall(0.0, 1.0)
    if not predictions:
        return PrecisionRecall(1.0, 0.0)
    matrix = [[pair_score(a, p) for p in predictions] for a in answers]
    precision_numerator = sum(
        max(0.0, max(row[j] for row in matrix)) for j in range(len(predictions))
    )
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
        "inputs": precision_recall(
            summaries.inputs(answer), summaries.inputs(prediction), pairs.participants
        ),
        "outputs": precision_recall(
            summaries.outputs(answer), summaries.outputs(prediction), pairs.participants
        ),
        "conversions": precision_recall(
            summaries.conversions(answer), summaries.conversions(prediction), pairs.conversion
        ),
        "moves": precision_recall(summaries.moves(answer), summaries.moves(prediction), pairs.move),
    }
