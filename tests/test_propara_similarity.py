"""Pair similarity and per-process precision/recall of the leaderboard evaluator: docs/metrics.md §2A.5–2A.6."""

from __future__ import annotations

import warnings

import pytest

from runners import PredictionWarning
from runners.propara.process_score import PairScorer, precision_recall
from runners.propara.similarity import (
    ZeroDenominator,
    location_similarity,
    normalise_location,
    participant_similarity,
)
from runners.propara.summaries import Move

# Upstream unit-test values quoted in docs/metrics.md §2A.5.
LOCATION_CASES = [
    ("", "", 1.0),
    ("", "-", 0.0),
    ("?", "?", 1.0),
    ("plant OR leaf", "leaf", 1.0),
    ("plant  OR leaf", "leaf", 1.0),
    ("dew OR rain", "water OR dew", 1.0),
    ("dew", "dew AND sun", 0.5),
    ("dew AND sun", "dew AND blah1 AND blah2", 0.25),
    ("dew AND rain", "water OR dew", 0.5),
    ("water OR dew AND sun", "dew OR rain", 0.5),
]
PARTICIPANT_CASES = [("plant OR leaf", "leaf", 1.0), ("plant OR leaf", "plants OR leaf", 1.0), ("", "-", 0.0)]


@pytest.mark.parametrize(("answer", "prediction", "value"), LOCATION_CASES)
def test_location_similarity_unit_values(answer: str, prediction: str, value: float) -> None:
    assert location_similarity(answer, prediction) == value


@pytest.mark.parametrize(("answer", "prediction", "value"), PARTICIPANT_CASES)
def test_participant_similarity_unit_values(answer: str, prediction: str, value: float) -> None:
    assert participant_similarity(answer, prediction) == value


@pytest.mark.parametrize(
    ("item", "normalised"),
    [
        ("raining cats and dogs", "raining cats and dog"),
        ("raining", "rain"),
        ("the Raining", "rain"),
        ("DANCING", "danc"),
        ("experimenting", "experi"),
        ("droplets", "droplet"),
    ],
)
def test_whole_string_porter_normalisation(item: str, normalised: str) -> None:
    assert normalise_location(item) == normalised


def test_inner_whitespace_blocks_article_removal_and_stemming() -> None:
    assert location_similarity("plants  OR leaf", "plant") == 0.0
    assert location_similarity("dew OR  the soil", "soil") == 0.0


def test_similarity_is_not_clamped() -> None:
    assert location_similarity("x", "x OR y AND x") == 2.0
    assert location_similarity("a AND a AND a", "A AND a AND a") == -3.0


def test_zero_denominator_raises_and_is_guarded_with_a_warning() -> None:
    with pytest.raises(ZeroDenominator):
        location_similarity("soil AND Soil", "Soil AND soil")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert PairScorer(on_zero_denominator=1.0).locations("soil AND Soil", "Soil AND soil") == 1.0
    assert any(issubclass(w.category, PredictionWarning) for w in caught)


# docs/metrics.md §2A.6 worked example of the recall-reuse quirk (moves of one process, step 2).
ANSWERS = [Move("plant OR leaf", "root", "earth", 2), Move("leaf", "soil", "mud", 2)]
PREDICTIONS = [Move("plants OR leaf", "root", "earth", 2), Move("plant", "mud OR plant", "room OR earth", 2)]


def test_pair_matrix_of_the_worked_example() -> None:
    pairs = PairScorer()
    matrix = [pairs.move(a, p) for a in ANSWERS for p in PREDICTIONS]
    assert matrix == pytest.approx([1.0, 0.6667, 0.3333, 0.0], abs=1e-4)


def test_recall_reuses_the_precision_numerator_when_counts_are_equal() -> None:
    result = precision_recall(ANSWERS, PREDICTIONS, PairScorer().move)
    assert (result.precision, result.recall, result.f1) == pytest.approx((0.8333, 0.8333, 0.8333), abs=1e-4)


def test_worked_example_variants() -> None:
    one = precision_recall(ANSWERS, PREDICTIONS[:1], PairScorer().move)
    assert (one.precision, one.recall, one.f1) == pytest.approx((1.0, 0.6667, 0.8), abs=1e-4)
    three = precision_recall(ANSWERS, [*PREDICTIONS, Move("tree", "monkey", "earth", 2)], PairScorer().move)
    assert (three.precision, three.recall, three.f1) == pytest.approx((0.6667, 0.6667, 0.6667), abs=1e-4)


def test_empty_lists() -> None:
    score = PairScorer().move
    assert precision_recall(ANSWERS, [], score).f1 == 0.0
    assert precision_recall([], PREDICTIONS, score).f1 == 0.0
    assert precision_recall([], [], score).f1 == 1.0
