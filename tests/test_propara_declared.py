"""ProPara's leaderboard matching as declared in specs/propara.spec (docs/metrics.md §2A.4–2A.6).

The spec's similarity blocks, normaliser and matcher are checked against upstream's unit values and
worked example, and the whole declared scorer against the independent Python transcription it
replaced (tests/propara_reference.py), value for value, on every real process and on generated grids.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl import model as m
from procbench.dsl.compiler import build_component
from procbench.dsl.tasks import load_task
from procbench.runners import GoldSet, PredictionWarning
from procbench.runners.propara.action_file import ParticipantTrack, ProcessTracks
from procbench.runners.propara.leaderboard import read_answers, score_leaderboard
from procbench.runners.propara.summaries import Move
from tests import propara_reference as reference

SPEC, RUNNER = load_task("propara")
MATCHES = {match.name: match for match in SPEC.score.matches}


def _parts(call: m.ComponentCall) -> dict[str, m.ComponentCall]:
    return dict(dict(call.kwargs)["parts"])


PARTICIPANT = build_component(MATCHES["inputs"].similarity)
LOCATION = build_component(_parts(MATCHES["moves"].similarity)["before"])
MOVE = build_component(MATCHES["moves"].similarity)
MATCHER = build_component(MATCHES["moves"].matcher)


def similarity(sim: Any, a: Any, p: Any) -> float:
    return sim.score(sim.prepare(a), sim.prepare(p))


# Upstream's unit-test values (docs/metrics.md §2A.5).
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
PARTICIPANT_CASES = [
    ("plant OR leaf", "leaf", 1.0),
    ("plant OR leaf", "plants OR leaf", 1.0),
    ("", "-", 0.0),
]


@pytest.mark.parametrize(("answer", "prediction", "value"), LOCATION_CASES)
def test_declared_location_similarity_gives_upstream_unit_values(
    answer: str, prediction: str, value: float
) -> None:
    assert similarity(LOCATION, answer, prediction) == value


@pytest.mark.parametrize(("answer", "prediction", "value"), PARTICIPANT_CASES)
def test_declared_participant_similarity_gives_upstream_unit_values(
    answer: str, prediction: str, value: float
) -> None:
    assert similarity(PARTICIPANT, answer, prediction) == value


@pytest.mark.parametrize(
    ("item", "normalised"),
    [
        ("raining cats and dogs", "raining cats and dog"),
        ("the Raining", "rain"),
        ("DANCING", "danc"),
        ("droplets", "droplet"),
    ],
)
def test_declared_place_normaliser_stems_the_whole_alternative(item: str, normalised: str) -> None:
    assert LOCATION.alternatives(item) == normalised


def test_inner_whitespace_blocks_article_removal_and_stemming() -> None:
    assert similarity(LOCATION, "plants  OR leaf", "plant") == 0.0
    assert similarity(LOCATION, "dew OR  the soil", "soil") == 0.0


def test_upstream_similarity_is_not_clamped_and_the_bounded_variant_is() -> None:
    assert similarity(LOCATION, "x", "x OR y AND x") == 2.0
    assert similarity(LOCATION, "a AND a AND a", "A AND a AND a") == -3.0
    bounded = LOCATION.replace(groups="one_to_one")
    assert (
        similarity(bounded, "x", "x OR y AND x") == 0.5
    )  # one pair of groups meets: 1 / (1 + 2 - 1)
    assert (
        similarity(bounded, "a AND a AND a", "A AND a AND a") == 1.0
    )  # three pairs, each group once: 3 / (3 + 3 - 3)


def test_zero_denominator_scores_one_with_a_warning() -> None:
    with pytest.warns(PredictionWarning, match="zero denominator"):
        assert similarity(LOCATION, "soil AND Soil", "Soil AND soil") == 1.0


# docs/metrics.md §2A.6 worked example of the recall-reuse quirk (moves of one process, step 2).
ANSWERS = [Move("plant OR leaf", "root", "earth", 2), Move("leaf", "soil", "mud", 2)]
PREDICTIONS = [
    Move("plants OR leaf", "root", "earth", 2),
    Move("plant", "mud OR plant", "room OR earth", 2),
]


def _pairs() -> Any:
    from procbench.runners.library.matching import PairScorer

    return PairScorer(MOVE, guard_empty=False)


def test_pair_matrix_of_the_worked_example() -> None:
    assert [similarity(MOVE, a, p) for a in ANSWERS for p in PREDICTIONS] == pytest.approx(
        [1.0, 0.6667, 0.3333, 0.0], abs=1e-4
    )
    assert similarity(MOVE, ANSWERS[0], PREDICTIONS[0].replace(step=3)) == 0.0  # another step


def test_recall_reuses_the_precision_numerator_when_counts_are_equal() -> None:
    result = MATCHER(ANSWERS, PREDICTIONS, _pairs())
    assert (result.precision, result.recall, result.f1) == pytest.approx(
        (0.8333, 0.8333, 0.8333), abs=1e-4
    )


def test_worked_example_variants() -> None:
    one = MATCHER(ANSWERS, PREDICTIONS[:1], _pairs())
    assert (one.precision, one.recall, one.f1) == pytest.approx((1.0, 0.6667, 0.8), abs=1e-4)
    three = MATCHER(ANSWERS, [*PREDICTIONS, Move("tree", "monkey", "earth", 2)], _pairs())
    assert (three.precision, three.recall, three.f1) == pytest.approx(
        (0.6667, 0.6667, 0.6667), abs=1e-4
    )


def test_empty_lists() -> None:
    assert MATCHER(ANSWERS, [], _pairs()).f1 == 0.0
    assert MATCHER([], PREDICTIONS, _pairs()).f1 == 0.0
    assert (MATCHER([], [], _pairs()).precision, MATCHER([], [], _pairs()).recall) == (1.0, 1.0)


# -- the declared scorer against the reference transcription ------------------------------------

LOCATIONS = [
    "-",
    "?",
    "soil",
    "the soil",
    "Soil",
    "root OR leaf",
    "water AND air",
    "plant  OR leaf",
    "a leaf",
    "leaves",
]
ACTIONS = ["NONE", "CREATE", "MOVE", "DESTROY"]


def _reference_values(
    gold: GoldSet, predictions: dict[str, ProcessTracks]
) -> dict[str, dict[str, float]]:
    out = {}
    for item_id, answer in gold.items.items():
        per_question = reference.score_process(answer, predictions[item_id])
        out[item_id] = {}
        for question, pr in per_question.items():
            out[item_id].update(
                {f"{question}_p": pr.precision, f"{question}_r": pr.recall, f"{question}_f1": pr.f1}
            )
    return out


def _assert_same_values(gold: GoldSet, predictions: dict[str, ProcessTracks]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PredictionWarning)
        expected = _reference_values(gold, predictions)
        # the runner's items also carry the bounded variant and its measures' own values (`inputs_p:value`)
        official = {f"{q}_{part}" for q in reference.QUESTIONS for part in ("p", "r", "f1")}
        declared = {
            item.item_id: {k: v for k, v in item.values.items() if k in official}
            for item in RUNNER.score(gold, predictions)
        }
        api = {item.item_id: dict(item.values) for item in score_leaderboard(gold, predictions)}
    assert declared == expected  # exact: the same floats, summed in the same order
    assert api == expected


def _perturbed(process: ProcessTracks, rng: random.Random) -> ProcessTracks:
    tracks = []
    for t in process.participants:
        locations = tuple(
            loc if rng.random() < 0.6 else rng.choice(LOCATIONS) for loc in t.locations
        )
        actions = tuple(act if rng.random() < 0.6 else rng.choice(ACTIONS) for act in t.actions)
        tracks.append(t.replace(locations=locations, actions=actions))
    return process.replace(participants=tuple(tracks))


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_declared_scorer_equals_the_reference_on_every_real_process(
    data_root: Path, split: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gold = read_answers(data_root, split)
    rng = random.Random(split)
    _assert_same_values(gold, dict(gold.items))
    for _ in range(2):
        _assert_same_values(
            gold, {item_id: _perturbed(p, rng) for item_id, p in gold.items.items()}
        )


PHRASES = st.sampled_from(
    [
        "-",
        "?",
        "soil",
        "Soil",
        "the soil",
        "soil AND Soil",
        "x OR y AND x",
        "a AND a",
        "leaf OR plant",
        "",
        "plants  OR leaf",
    ]
)


@st.composite
def processes(draw: Any) -> tuple[ProcessTracks, ProcessTracks]:
    sentences = draw(st.integers(1, 5))
    names = draw(
        st.lists(
            st.sampled_from(["water", "vapor", "sugar;glucose", "Water", "light"]),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )

    def grid() -> ProcessTracks:
        tracks = []
        for name in names:
            locations = tuple(
                draw(st.lists(PHRASES, min_size=sentences + 1, max_size=sentences + 1))
            )
            actions = tuple(
                draw(st.lists(st.sampled_from(ACTIONS), min_size=sentences, max_size=sentences))
            )
            tracks.append(ParticipantTrack(name, locations, actions))
        return ProcessTracks(1, sentences, tuple(tracks))

    return grid(), grid()


@settings(max_examples=150, deadline=None)
@given(processes())
def test_declared_scorer_equals_the_reference_on_generated_grids(
    pair: tuple[ProcessTracks, ProcessTracks],
) -> None:
    answer, prediction = pair
    _assert_same_values(GoldSet(items={"1": answer}), {"1": prediction})


@settings(max_examples=150, deadline=None)
@given(processes())
def test_bounded_variant_stays_within_0_and_1(pair: tuple[ProcessTracks, ProcessTracks]) -> None:
    answer, prediction = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PredictionWarning)
        (item,) = RUNNER.score(GoldSet(items={"1": answer}), {"1": prediction})
    bounded = {k: v for k, v in item.values.items() if "_bounded_" in k and ":" not in k}
    assert len(bounded) == 12
    assert all(0.0 <= v <= 1.0 for v in bounded.values()), bounded


SINGLE_GROUPS = st.sampled_from(
    ["-", "?", "soil", "sky", "leaf", "root", "cloud"]
)  # one group each, distinct stems


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_bounded_variant_equals_the_official_where_no_group_meets_two(data: st.DataObject) -> None:
    sentences = data.draw(st.integers(1, 4))
    names = data.draw(
        st.lists(
            st.sampled_from(["water", "vapor", "sugar", "light"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )

    def grid() -> ProcessTracks:
        return ProcessTracks(
            1,
            sentences,
            tuple(
                ParticipantTrack(
                    name,
                    tuple(
                        data.draw(
                            st.lists(SINGLE_GROUPS, min_size=sentences + 1, max_size=sentences + 1)
                        )
                    ),
                    tuple(
                        data.draw(
                            st.lists(
                                st.sampled_from(ACTIONS), min_size=sentences, max_size=sentences
                            )
                        )
                    ),
                )
                for name in names
            ),
        )

    (item,) = RUNNER.score(GoldSet(items={"1": grid()}), {"1": grid()})
    for question in ("inputs", "outputs", "conversions", "moves"):
        for part in ("p", "r"):
            assert item.values[f"{question}_bounded_{part}"] == item.values[f"{question}_{part}"]


def test_the_deriver_gives_what_its_contract_declares(data_root: Path) -> None:
    from procbench.runners.runtime import registry
    from procbench.runners.propara.summaries import derive_summaries

    contract = registry.get("deriver", "propara.summaries").contract
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gold = read_answers(data_root, "test")
    kinds = set()
    for process in gold.items.values():
        fields = derive_summaries(process)
        assert set(fields) == set(contract.fields)
        for name, value in fields.items():
            assert contract.fields[name].accepts(value), (name, value)
            kinds |= {name} if value else set()
    assert kinds == set(contract.fields)  # every field is non-empty somewhere in the test split


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3), max_size=7),
    st.lists(st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3), max_size=7),
)
def test_one_to_one_group_overlap_is_scipys_maximum_matching(
    gold: list[set[str]], predicted: list[set[str]]
) -> None:
    from scipy.optimize import linear_sum_assignment

    from procbench.runners.library.structured import _one_to_one

    a, p = [frozenset(g) for g in gold], [frozenset(g) for g in predicted]
    meets = np.array([[1 if ga & gp else 0 for gp in p] for ga in a]).reshape(len(a), len(p))
    rows, columns = linear_sum_assignment(meets, maximize=True)
    assert _one_to_one(a, p) == int(meets[rows, columns].sum())


def test_a_phrase_of_thousands_of_groups_is_matched_without_deep_recursion() -> None:
    bounded = LOCATION.replace(groups="one_to_one")
    # gold group i meets predicted groups i and i + 1, the last gold group only predicted group 0: matching it
    # needs an augmenting path through all 3000 earlier groups (deeper than Python's recursion limit)
    gold = " AND ".join([*(f"t{i} OR t{i + 1}" for i in range(3000)), "t0"])
    predicted = " AND ".join(f"t{j}" for j in range(3001))
    assert (
        similarity(bounded, gold, predicted) == 1.0
    )  # 3001 one-to-one pairs: 3001 / (3001 + 3001 - 3001)
