"""Question-outcome metrics (runners/metrics/_outcomes.py) and NAACL'18's counting declared with them.

* binary_outcomes against scikit-learn's confusion matrix, accuracy and F1 (the library oracle);
  answer_outcomes and set_outcomes against their definitions;
* the spec's per-paragraph counts against the independent transcription of docs/metrics.md §2B.5 it
  replaced (tests/naacl18_reference.py), count for count: the real ProGlobal run, randomly perturbed
  copies of it, and generated grids over the bundled sample paragraphs;
* the mistakes the checker catches with these metrics.
"""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    f1_score,
    precision_score,
    recall_score,
)

from procbench.dsl import SpecError, check_text
from procbench.dsl.compiler import build_component
from procbench.api import load_task
from procbench.paths import SPECS_DIR
from procbench.runners import GoldSet
from procbench.runners.metrics._outcomes import AnswerOutcomes, BinaryOutcomes, SetOutcomes
from procbench.runners.propara.naacl18 import read_naacl18, read_naacl18_grid, score_naacl18
from tests import naacl18_reference as reference
from tests.naacl18_samples import SAMPLE_GOLD, random_grids

QUESTIONS = tuple(f"q{n}" for n in range(1, 11))
OUTCOMES = ("tp", "fp", "tn", "fn")
SPEC, RUNNER = load_task("propara-naacl18")
Q3 = next(
    ms for ms in SPEC.score.measures if ms.name == "q3"
)  # the create-location question, as checked


# -- the metrics against scikit-learn and their definitions --------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=6), min_size=1, max_size=8)
)
def test_binary_outcomes_pool_to_scikit_learns_numbers(
    items: list[list[tuple[bool, bool]]],
) -> None:
    metric = BinaryOutcomes()
    rows = [metric.item([g for g, _ in pairs], [p for _, p in pairs], "pooled") for pairs in items]
    gold = [g for pairs in items for g, _ in pairs]
    predicted = [p for pairs in items for _, p in pairs]
    if not gold:
        return
    (tn, fp), (fn, tp) = confusion_matrix(gold, predicted, labels=[False, True]).tolist()
    assert [sum(column) for column in zip(*rows)] == [tp, fp, tn, fn]
    assert BinaryOutcomes("accuracy").reduce(rows, "pooled") == (
        pytest.approx(accuracy_score(gold, predicted), abs=1e-12),
    )
    f1, precision, recall = BinaryOutcomes("f1").reduce(rows, "pooled")
    assert f1 == pytest.approx(f1_score(gold, predicted, zero_division=0), abs=1e-12)
    assert precision == pytest.approx(precision_score(gold, predicted, zero_division=0), abs=1e-12)
    assert recall == pytest.approx(recall_score(gold, predicted, zero_division=0), abs=1e-12)


@given(st.lists(st.tuples(st.integers(1, 4), st.none() | st.integers(1, 4)), max_size=12))
def test_answer_outcomes_unanswered_is_a_miss_and_never_a_true_negative(
    pairs: list[tuple[int, int | None]],
) -> None:
    tp, fp, tn, fn = AnswerOutcomes().item([g for g, _ in pairs], [p for _, p in pairs], "pooled")
    assert tn == 0
    assert fn == sum(p is None for _, p in pairs)
    assert tp == sum(p == g for g, p in pairs)
    assert tp + fp + fn == len(pairs)


def test_contained_answers_are_runs_of_whole_tokens() -> None:
    contained = AnswerOutcomes(match="contained")
    assert contained.matches("root system", "the root system")
    assert not contained.matches("the root", "root system")
    assert not contained.matches("oil", "soil")
    assert not contained.matches("", "soil") and contained.matches("", "")
    assert not AnswerOutcomes().matches("root", "the root")  # equal: whole answers only


@given(
    st.lists(
        st.tuples(st.sets(st.integers(1, 6)), st.sets(st.integers(1, 6)), st.integers(0, 8)),
        max_size=6,
    )
)
def test_set_outcomes_count_the_answer_sets_out_of_the_predictions_candidates(
    cases: list[tuple[set[int], set[int], int]],
) -> None:
    gold = [
        {"answers": sorted(g), "out_of": 99} for g, _, _ in cases
    ]  # the gold's out_of is read only when nothing is predicted
    predicted = [{"answers": sorted(p), "out_of": k} for _, p, k in cases]
    tp, fp, tn, fn = SetOutcomes().item(gold, predicted, "pooled")
    assert (tp, fp, fn) == (
        sum(len(g & p) for g, p, _ in cases),
        sum(len(p - g) for g, p, _ in cases),
        sum(len(g - p) for g, p, _ in cases),
    )
    assert tn == sum(
        k - len(g | p) for g, p, k in cases
    )  # upstream's K - tp - fp - fn, negative where the grid is uneven
    assert SetOutcomes().item(gold, None, "pooled") == (
        0,
        0,
        sum(99 - len(g) for g, _, _ in cases),
        sum(len(g) for g, _, _ in cases),
    )


def test_unaligned_lists_are_refused() -> None:
    with pytest.raises(ValueError, match="2 gold questions but 1 predicted answers"):
        BinaryOutcomes().item([True, False], [True], "pooled")


# -- the declared counting against the transcription it replaced ---------------------------------------------


def _declared(gold: GoldSet, predictions: dict) -> dict[str, dict[str, float]]:
    items = RUNNER.score(gold, predictions)
    return {
        i.item_id: {f"{q}_{o}": i.values[f"{q}:{o}"] for q in QUESTIONS for o in OUTCOMES}
        for i in items
    }


def _oracle(gold: GoldSet, predictions: dict) -> dict[str, dict[str, float]]:
    return {
        item_id: reference.count_paragraph(paragraph, predictions.get(item_id)).flat()
        for item_id, paragraph in gold.items.items()
    }


def _grids(tmp_path: Path, text: str, gold: GoldSet) -> dict:
    path = tmp_path / "grid.tsv"
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_naacl18_grid(path, gold)


def _perturbed(lines: list[str], rng: random.Random, states: list[str]) -> str:
    """Each location cell replaced with probability 0.2 by null, unk, another location or a near miss."""
    out = []
    for line in lines:
        fields = line.rstrip("\n").split("\t")
        for column in (3, 4):
            if rng.random() < 0.2:
                fields[column] = rng.choice(states)
        out.append("\t".join(fields) + "\n")
    return "".join(out)


def test_declared_counts_equal_the_reference_on_the_real_run_and_perturbed_copies(
    tmp_path: Path, data_root: Path, parity_dir: Path
) -> None:
    gold = read_naacl18(data_root, "test")
    lines = (
        (parity_dir / "propara" / "naacl18" / "proglobal.untuned.test.output.tsv")
        .read_text()
        .splitlines(keepends=True)
    )
    states = ["null", "unk", "soil", "the soil", "Roots", '"leaf"', "air OR water", "?"]
    rng = random.Random(2018)
    for run in range(4):
        text = "".join(lines) if run == 0 else _perturbed(lines, rng, states)
        predictions = _grids(tmp_path, text, gold)
        declared, oracle = _declared(gold, predictions), _oracle(gold, predictions)
        assert declared == oracle
        assert {
            i.item_id: i.values for i in score_naacl18(gold, predictions)
        } == oracle  # the Python API, built from the same metrics
        assert (
            sum(v for counts in declared.values() for v in counts.values()) > 1000
        )  # the split's questions were counted


@settings(max_examples=100, deadline=None)
@given(random_grids(extra_locations=("mud", "the leaf", '"Air"')))
def test_declared_counts_equal_the_reference_on_generated_grids(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    predictions = _grids(tmp_path_factory.mktemp("g"), text, SAMPLE_GOLD)
    assert _declared(SAMPLE_GOLD, predictions) == _oracle(SAMPLE_GOLD, predictions)


def test_the_deriver_aligns_a_grids_answers_with_the_golds_questions(
    data_root: Path, parity_dir: Path
) -> None:
    from procbench.runners.propara.naacl18_questions import QUESTION_FIELDS, naacl18_questions

    gold = read_naacl18(data_root, "test")
    predictions = read_naacl18_grid(
        parity_dir / "propara" / "naacl18" / "proglobal.untuned.test.output.tsv", gold
    )
    for item_id, paragraph in gold.items.items():
        asked, answered = (
            naacl18_questions(paragraph, None),
            naacl18_questions(predictions[item_id], paragraph),
        )
        assert set(asked) == set(answered) == set(QUESTION_FIELDS)
        assert all(len(asked[name]) == len(answered[name]) for name in QUESTION_FIELDS), item_id


# -- mistakes the checker catches ------------------------------------------------------------------------------


def _refused(old: str, new: str) -> str:
    text = (SPECS_DIR / "propara-naacl18.spec").read_text(encoding="utf-8")
    assert old in text
    with pytest.raises(SpecError) as refused:
        check_text(text.replace(old, new), "propara-naacl18.spec", search=[SPECS_DIR])
    return str(refused.value)


def test_a_yes_no_metric_over_locations_is_refused_at_its_field() -> None:
    message = _refused(
        "gold = created  prediction = created", "gold = create_location  prediction = created"
    )
    assert "propara-naacl18.spec:" in message and "^" in message
    assert (
        "gold field 'create_location' is list(optional(str)), but binary_outcomes() with aggregate = 'pooled' compares list(bool)"
        in message
    )


def test_an_aggregation_the_outcome_metrics_do_not_support_is_refused() -> None:
    message = _refused(
        "gold = destroyed  prediction = destroyed",
        'gold = destroyed  prediction = destroyed  aggregate = "mean"',
    )
    assert "binary_outcomes() cannot aggregate as 'mean'; it aggregates as \"pooled\"" in message


def test_a_normaliser_on_yes_no_questions_is_refused() -> None:
    message = _refused(
        "gold = moved  prediction = moved", "gold = moved  prediction = moved  normaliser = place"
    )
    assert "binary_outcomes() does not compare text; a normaliser does not apply" in message


def test_the_python_apis_count_names_follow_the_metrics_order() -> None:
    from procbench.runners.metrics import _outcomes
    from procbench.runners.propara import naacl18

    assert naacl18.OUTCOMES == _outcomes.OUTCOMES


LOCATION_WORDS = st.sampled_from(
    [
        "soil",
        "the",
        "Roots",
        "root",
        "''s",
        "'",
        '"leaf"',
        "g-rated",
        "Leaves",
        "air",
        "x",
        "ß",
        "İ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(LOCATION_WORDS, max_size=4).map(" ".join),
    st.lists(LOCATION_WORDS, max_size=5).map(" ".join),
)
def test_the_declared_location_check_is_upstreams_even_where_a_stem_is_empty(
    predicted: str, gold: str
) -> None:
    """docs/metrics.md §2B.4 as the spec declares it (its place normaliser, match = "contained") equals the transcription,
    including tokens Porter2 stems to nothing ("''s"), which upstream keeps as an empty word between spaces."""
    steps = [build_component(step) for step in Q3.normaliser]

    def place(text: str) -> str:
        for step in steps:
            text = step(text)
        return text

    tp, fp, _, fn = build_component(Q3.metric).item([place(gold)], [place(predicted)], "pooled")
    assert fn == 0 and (tp == 1) == reference.location_match(predicted, gold) != (fp == 1)


def test_a_stem_that_is_empty_is_kept_only_where_asked() -> None:
    from procbench.runners.library.text import stem

    assert stem("porter2")("x ''s y") == "x y"
    assert stem("porter2", keep_empty=True)("x ''s y") == "x  y"
