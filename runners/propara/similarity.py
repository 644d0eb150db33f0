"""Pair similarity of the leaderboard evaluator (docs/metrics.md §2A.5).

A phrase is a list of `` AND ``-groups, each a set of `` OR ``-alternatives. Similarity is the
number of intersecting group pairs over ``|A| + |P| - overlap``, with a raw-equality shortcut. It is
not clamped (it can exceed 1 or be negative), exactly as upstream.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from runners._types import PredictionWarning


@lru_cache(maxsize=1)
def _porter() -> Any:
    """NLTK's Porter stemmer in its default mode (NLTK_EXTENSIONS), the variant upstream copied.

    runners.porter computes it without NLTK, whose package import pulls SciPy, scikit-learn and
    pandas (about 1.5 s); it is checked against NLTK on the ProPara vocabulary (tests/test_porter_oracle.py).
    """
    from runners.porter import PorterStemmer

    return PorterStemmer()
ARTICLES = ("a ", "an ", "the ", "your ", "his ", "their ", "my ", "another ", "other ", "this ", "that ")


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
        frozenset({""}) if any(not item.strip() for item in items) else frozenset(normalise_location(i) for i in items)
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


def _similarity(a: str, p: str, a_terms: list[frozenset[str]], p_terms: list[frozenset[str]]) -> float:
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


def guarded(similarity: Callable[[str, str], float], answer: str, prediction: str, on_zero_denominator: float) -> float:
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
                f"similarity of {answer!r} and {prediction!r} has a zero denominator (upstream crashes); "
                f"scored {on_zero_denominator}"
            ),
            stacklevel=2,
        )
        return on_zero_denominator
