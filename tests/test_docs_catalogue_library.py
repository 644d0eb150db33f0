"""docs/pure-spec-tasks.md, four more kinds in spec alone: extractive QA (SQuAD), correlation with human
ratings, set matching and pairwise preference.

Each number ``procbench score`` prints is compared with its oracle computed here from the guide's own files:
SQuAD v1.1's evaluation functions transcribed below, scipy's correlations, scikit-learn's
``precision_recall_fscore_support`` over ``MultiLabelBinarizer`` sets, and the win-rate definition written
out.  Hypothesis then checks each metric against the same oracle on generated inputs.
"""

from __future__ import annotations

import json
import re
import string
import warnings
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from sklearn.metrics import precision_recall_fscore_support
from sklearn.preprocessing import MultiLabelBinarizer

from procbench.runners.runtime import registry
from procbench.runners.metrics._measure import MeasureStage, Measures
from procbench.runners.library.text import Pipeline
from tests import catalogue

TASKS = ("howtoqa", "clarity", "ingredients", "tipduel")


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> catalogue.Guide:
    return catalogue.extracted(tmp_path_factory, "catalogue-library")


def _score(root: Path, task: str) -> dict:
    return catalogue.scored(root, task)


def _pairs(root: Path, task: str, gold_key: str, prediction_key: str) -> tuple[list, list]:
    gold = catalogue.rows(root / "data" / task / "test.jsonl")
    predicted = {
        r["id"]: r[prediction_key] for r in catalogue.rows(root / "predictions" / f"{task}.jsonl")
    }
    return [g[gold_key] for g in gold], [predicted[g["id"]] for g in gold]


@pytest.mark.parametrize("task", TASKS)
def test_each_spec_checks_against_its_data_and_is_formatted(
    guide: catalogue.Guide, task: str
) -> None:
    catalogue.assert_checks_and_is_formatted(guide[0], task)


# -- SQuAD v1.1's evaluation functions, transcribed (normalize_answer, f1_score, exact_match_score) -----------


def squad_normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = squad_normalize(prediction).split()
    ground_truth_tokens = squad_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_exact(prediction: str, ground_truth: str) -> float:
    return float(squad_normalize(prediction) == squad_normalize(ground_truth))


def best(fn, prediction: str, ground_truths: list[str]) -> float:
    return max(fn(prediction, g) for g in ground_truths)


def test_extractive_answers_equal_squads_script(guide: catalogue.Guide) -> None:
    root, expected = guide
    references, answers = _pairs(root, "howtoqa", "answers", "answer")
    want = {
        "exact": sum(best(squad_exact, a, r) for a, r in zip(answers, references)) / len(answers),
        "f1": sum(best(squad_f1, a, r) for a, r in zip(answers, references)) / len(answers),
    }
    got = _score(root, "howtoqa")["metrics"]
    assert got == pytest.approx(want, abs=1e-12)
    assert got == pytest.approx(json.loads(expected["howtoqa"]), abs=1e-6)


def _scipy(fn, xs, ys) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = fn(xs, ys).statistic
    return (
        0.0 if value != value else float(value)
    )  # NaN (constant input) is 0.0, the library's documented rule


def test_correlation_with_human_ratings_equals_scipy_with_ties(guide: catalogue.Guide) -> None:
    root, expected = guide
    ratings, predicted = _pairs(root, "clarity", "rating", "rating")
    assert len(set(ratings)) < len(ratings) and len(set(predicted)) < len(
        predicted
    )  # the example has ties on both sides
    want = {
        "pearson": _scipy(scipy_stats.pearsonr, ratings, predicted),
        "spearman": _scipy(scipy_stats.spearmanr, ratings, predicted),
        "kendall": _scipy(scipy_stats.kendalltau, ratings, predicted),
    }
    got = _score(root, "clarity")["metrics"]
    assert got == pytest.approx(want, abs=1e-12)
    assert got == pytest.approx(json.loads(expected["clarity"]), abs=1e-6)


def sklearn_sets(
    gold: list[list[str]], predicted: list[list[str]], average: str, zero_division: int
) -> tuple[float, float, float]:
    # two columns at least: scikit-learn reads a one-column indicator matrix as binary, not multilabel
    binariser = MultiLabelBinarizer(
        classes=sorted({x for row in gold + predicted for x in row} | {"\0unused-a", "\0unused-b"})
    )
    y_true, y_pred = binariser.fit_transform(gold), binariser.transform(predicted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, _ = precision_recall_fscore_support(
            y_true, y_pred, average=average, zero_division=zero_division
        )
    return float(p), float(r), float(f)


def test_set_matching_equals_scikit_learn_samples_and_micro(guide: catalogue.Guide) -> None:
    root, expected = guide
    gold, predicted = _pairs(root, "ingredients", "ingredients", "ingredients")
    predicted = [
        [x.strip().lower() for x in row] for row in predicted
    ]  # the spec's `word` normaliser, written out
    got = _score(root, "ingredients")["metrics"]
    samples = sklearn_sets(gold, predicted, "samples", 1)
    micro = sklearn_sets(gold, predicted, "micro", 0)
    assert [got["per_step_p"], got["per_step_r"], got["per_step_f1"]] == pytest.approx(
        samples, abs=1e-12
    )
    assert [got["pooled_p"], got["pooled_r"], got["pooled_f1"]] == pytest.approx(micro, abs=1e-12)
    assert got == pytest.approx(json.loads(expected["ingredients"]), abs=1e-6)


def win_rate_oracle(
    reference: list[float], system: list[float], tie_credit: float = 0.5
) -> tuple[float, float]:
    wins = sum(1 for r, s in zip(reference, system) if s > r)
    ties = sum(1 for r, s in zip(reference, system) if s == r)
    return (wins + tie_credit * ties) / len(reference), ties / len(reference)


def test_win_rate_with_ties_equals_its_definition(guide: catalogue.Guide) -> None:
    root, expected = guide
    reference, system = _pairs(root, "tipduel", "reference_grade", "grade")
    win_rate, ties = win_rate_oracle(reference, system)
    got = _score(root, "tipduel")["metrics"]
    assert got == pytest.approx({"win_rate": win_rate, "win_rate_ties": ties}, abs=1e-12)
    assert got == pytest.approx(json.loads(expected["tipduel"]), abs=1e-6)


# -- the same metrics on generated inputs -------------------------------------------------------------------


def _stage(name: str, metric_call: str, aggregate: str, normalise=None, **options) -> Measures:
    metric = registry.get("metric", metric_call).fn(**options)
    stage = MeasureStage(
        name, metric, aggregate, "g", "p", metric.gold, metric.prediction, normalise=normalise
    )
    return Measures((stage,))


def _measure(measures: Measures, gold: list, predicted: list) -> dict[str, float]:
    """The stage run as the runtime runs it: per-item statistics, then the aggregate over all items."""
    from procbench.runners.runtime._types import GoldSet, ItemScore

    ids = [f"i{n}" for n in range(len(gold))]
    gold_set = GoldSet(items={i: {"g": g} for i, g in zip(ids, gold)})
    rows = measures.score(gold_set, {i: {"p": p} for i, p in zip(ids, predicted) if p is not None})
    return measures.aggregate([ItemScore(i, rows[i]) for i in ids])


words = st.sampled_from(
    [
        "the",
        "a",
        "an",
        "Bowl",
        "bowl.",
        "mixing",
        "hour",
        "one",
        "pipes,",
        "the-end",
        "A",
        "spatula!",
        "",
        " ",
    ]
)
texts = st.lists(words, max_size=6).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(texts, min_size=1, max_size=3), texts), min_size=1, max_size=8))
def test_token_f1_with_squads_normaliser_equals_squad_on_generated_answers(cases) -> None:
    named = (
        ("lowercase", ()),
        ("delete_punctuation", ()),
        ("delete_whole_words", (["a", "an", "the"],)),
        ("squeeze_whitespace", ()),
    )
    squad = Pipeline(tuple(registry.get("normaliser", name).fn(*args) for name, args in named))
    got = _measure(
        _stage("f1", "token_f1", "mean", normalise=squad),
        [g for g, _ in cases],
        [p for _, p in cases],
    )
    want = sum(best(squad_f1, p, g) for g, p in cases) / len(cases)
    assert got["f1"] == pytest.approx(want, abs=1e-12)


collections = st.lists(st.sampled_from(["eggs", "milk", "salt", "flour", "sugar"]), max_size=5)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(collections, collections), min_size=1, max_size=10), st.sampled_from([0, 1])
)
def test_set_prf_equals_scikit_learn_on_generated_sets(cases, zero_division) -> None:
    gold, predicted = [g for g, _ in cases], [p for _, p in cases]
    for aggregate, average in (("mean", "samples"), ("pooled", "micro")):
        got = _measure(
            _stage("s", "set_prf", aggregate, zero_division=zero_division), gold, predicted
        )
        want = sklearn_sets(gold, predicted, average, zero_division)
        assert [got["s_p"], got["s_r"], got["s_f1"]] == pytest.approx(want, abs=1e-12), aggregate


grades = st.integers(1, 10).map(float)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(grades, grades), min_size=1, max_size=12), st.sampled_from([0.0, 0.5, 1.0])
)
def test_win_rate_equals_its_definition_on_generated_grades(cases, tie_credit) -> None:
    reference, system = [r for r, _ in cases], [s for _, s in cases]
    got = _measure(_stage("w", "win_rate", "mean", tie_credit=tie_credit), reference, system)
    assert (got["w"], got["w_ties"]) == pytest.approx(
        win_rate_oracle(reference, system, tie_credit), abs=1e-12
    )
    lower = _measure(
        _stage("w", "win_rate", "mean", tie_credit=tie_credit, better="lower"), reference, system
    )
    assert lower["w"] == pytest.approx(
        win_rate_oracle([-r for r in reference], [-s for s in system], tie_credit)[0], abs=1e-12
    )
