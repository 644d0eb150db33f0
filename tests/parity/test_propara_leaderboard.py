"""Parity with the AI2 ProPara leaderboard evaluator on its six upstream test cases (metrics.md 2A.10)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from runners import GoldSet, InvalidPredictions
from runners.propara.leaderboard import aggregate_leaderboard, read_answers, read_predictions, score_leaderboard
from runners.propara.process_score import QUESTIONS

SCORED_CASES = ("case-2", "case-3", "case-7")


@pytest.fixture(scope="module")
def cases(parity_dir: Path) -> Path:
    return parity_dir / "propara" / "leaderboard"


@pytest.fixture(scope="module")
def expected(cases: Path) -> dict:
    return json.loads((cases / "expected.json").read_text())


def _gold(case_dir: Path) -> GoldSet:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case folders have no grids file: no prompt labels
        return read_answers(case_dir, "test", answers="answers.tsv", prompts="no-grids.tsv")


def _score(case_dir: Path, **aggregator_params) -> dict[str, float]:
    gold = _gold(case_dir)
    predictions = read_predictions(case_dir / "predictions.tsv", gold)
    return aggregate_leaderboard(score_leaderboard(gold, predictions), **aggregator_params)


@pytest.mark.parametrize("case", SCORED_CASES)
def test_output_json_values_match_exactly(cases: Path, expected: dict, case: str) -> None:
    metrics = _score(cases / case)
    official = expected[case]["output_json"]
    assert {k: metrics[k] for k in official} == official


@pytest.mark.parametrize("case", SCORED_CASES)
def test_unrounded_overall_values(cases: Path, expected: dict, case: str) -> None:
    metrics = _score(cases / case, round_overall=False)
    for name, value in expected[case]["overall"].items():
        assert metrics[name] == pytest.approx(value, abs=1e-6)


@pytest.mark.parametrize("case", SCORED_CASES)
def test_per_question_rounded_values_and_printed_table(cases: Path, expected: dict, case: str) -> None:
    metrics = _score(cases / case)
    for question in QUESTIONS:
        official = expected[case]["per_question"][question]
        assert metrics[f"{question}_p"] == official["precision"]
        assert metrics[f"{question}_r"] == official["recall"]
        assert metrics[f"{question}_f1"] == pytest.approx(official["f1"], abs=1e-6)
        printed = ["%4.3f" % metrics[f"{question}_{k}"] for k in ("p", "r", "f1")]
        assert printed == official["printed"]


@pytest.mark.parametrize("case", SCORED_CASES)
def test_per_question_unrounded_means(cases: Path, expected: dict, case: str) -> None:
    gold = _gold(cases / case)
    items = score_leaderboard(gold, read_predictions(cases / case / "predictions.tsv", gold))
    assert len(items) == expected[case]["n_processes_scored"]
    for question in QUESTIONS:
        official = expected[case]["per_question"][question]
        mean_p = sum(i.values[f"{question}_p"] for i in items) / len(items)
        mean_r = sum(i.values[f"{question}_r"] for i in items) / len(items)
        assert mean_p == pytest.approx(official["precision_unrounded"], abs=1e-6)
        assert mean_r == pytest.approx(official["recall_unrounded"], abs=1e-6)


def _problems(case_dir: Path, gold: GoldSet) -> list[tuple[int | None, str]]:
    with pytest.raises(InvalidPredictions) as caught:
        read_predictions(case_dir / "predictions.tsv", gold)
    return [(p.line, p.message) for p in caught.value.problems]


def test_case_4_empty_files_are_rejected(cases: Path, expected: dict) -> None:
    assert expected["case-4"]["status"] == "abort"
    with pytest.raises(ValueError, match="no lines to iterate"):
        _gold(cases / "case-4")
    assert _problems(cases / "case-4", GoldSet(items={})) == [(None, "empty action file (upstream: no lines to iterate)")]


def test_case_5_missing_processes_are_named(cases: Path, expected: dict) -> None:
    assert expected["case-5"]["status"] == "abort"
    problems = _problems(cases / "case-5", _gold(cases / "case-5"))
    # expected.json: "processes 5 and 7 of the answers are missing from the predictions"
    assert problems == [(None, "Process 5 missing in predictions"), (None, "Process 7 missing in predictions")]


def test_case_6_invalid_action_on_line_3(cases: Path, expected: dict) -> None:
    assert expected["case-6"]["status"] == "abort"
    problems = _problems(cases / "case-6", _gold(cases / "case-6"))
    # expected.json: "line 3 of predictions has action VIBRATE ... (Invalid action: VIBRATE)"
    assert problems == [(3, "Invalid action: VIBRATE")]


def test_case_7_prompt_labels_on_real_test_split(data_root: Path, cases: Path) -> None:
    """The real test answers are the case-7 answers (sorted); every process gets a grids prompt."""
    gold = read_answers(data_root, "test")
    case = _gold(cases / "case-7")
    assert list(gold.items) == list(case.items) and len(gold.items) == 54
    assert all(labels["prompt"] != "unknown" for labels in gold.labels.values())
    assert len({labels["prompt"] for labels in gold.labels.values()}) == 18  # 2A.9: 18 distinct test prompts
