"""Parity with the NAACL'18 sentence-level evaluator (evalQA.py) on the untuned ProGlobal output (2B.9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners import GoldSet
from runners.propara.naacl18 import aggregate_naacl18, question_results, read_naacl18, read_naacl18_grid, score_naacl18
from runners.propara.naacl18_gold import align_parts, read_inventory, read_para_ids

CATEGORIES = ("cat1", "cat2", "cat3", "macro", "micro")


@pytest.fixture(scope="module")
def fixture_dir(parity_dir: Path) -> Path:
    return parity_dir / "propara" / "naacl18"


@pytest.fixture(scope="module")
def expected(fixture_dir: Path) -> dict:
    return json.loads((fixture_dir / "expected.json").read_text())


@pytest.fixture(scope="module")
def gold(data_root: Path) -> GoldSet:
    return read_naacl18(data_root, "test")


@pytest.fixture(scope="module")
def items(gold: GoldSet, fixture_dir: Path):
    return score_naacl18(gold, read_naacl18_grid(fixture_dir / "proglobal.untuned.test.output.tsv", gold))


def test_gold_sizes(gold: GoldSet, expected: dict) -> None:
    assert len(gold.items) == expected["n_paragraphs"]
    assert sum(len(p.annotator_sets) for p in gold.items.values()) == expected["n_annotator_label_sets"]


def test_gold_files_are_the_ones_expected_json_names(data_root: Path, expected: dict) -> None:
    for relative in expected["gold_files_relative_to_shared_data_propara"].values():
        assert (data_root / "propara" / relative).is_file()


def test_every_question_row(items, expected: dict) -> None:
    results = question_results(items)
    for name, official in expected["questions"].items():
        q = name.lower()
        result = results[q]
        assert (result.total, result.tp, result.fp, result.tn, result.fn) == tuple(
            official[k] for k in ("total", "tp", "fp", "tn", "fn")
        )
        assert result.score(q) == pytest.approx(official["score"], abs=1e-6)
        assert result.precision == pytest.approx(official["precision"], abs=1e-6)
        assert result.recall == pytest.approx(official["recall"], abs=1e-6)
        assert result.f1 == pytest.approx(official["f1"], abs=1e-6)
        assert result.printed_row(q) == official["printed_row"]


def test_question_scores_and_categories(items, expected: dict) -> None:
    metrics = aggregate_naacl18(items)
    for name, official in expected["questions"].items():
        assert metrics[name.lower()] == pytest.approx(official["score"], abs=1e-6)
    for category in CATEGORIES:
        assert metrics[category] == pytest.approx(expected["categories"][category], abs=1e-6)
        assert round(metrics[category], 2) == expected["printed"][category]


def test_detail_metrics_match_the_printed_columns(items, expected: dict) -> None:
    metrics = aggregate_naacl18(items, detail=True)
    for name, official in expected["questions"].items():
        q = name.lower()
        assert {o: metrics[f"{q}_{o}"] for o in ("tp", "fp", "tn", "fn")} == {o: official[o] for o in ("tp", "fp", "tn", "fn")}
        assert metrics[f"{q}_f1"] == pytest.approx(official["f1"], abs=1e-6)


def test_participant_alignment_tallies(data_root: Path) -> None:
    """metrics.md 2B.3: on the test set 1,482 exact, 563 fuzzy (one hit each), 79 manual, 46 dropped."""
    eval_dir = data_root / "propara" / "propara" / "tests" / "fixtures" / "eval"
    selected = set(read_para_ids(eval_dir / "para_id.test.txt"))
    inventory = read_inventory(eval_dir / "gold_labels.test.tsv")
    tally = {"exact": 0, "fuzzy": 0, "manual": 0, "dropped": 0}
    for line in (eval_dir / "all-moves.full-grid.tsv").read_text().splitlines()[1:]:
        fields = line.rstrip().split("\t")
        if len(fields) != 11 or fields[1] == "?" or int(fields[0]) not in selected:
            continue
        for how, names in align_parts(fields[3], inventory[int(fields[0])]):
            tally[how] += 1
            assert how != "fuzzy" or len(names) == 1
    assert tally == {"exact": 1482, "fuzzy": 563, "manual": 79, "dropped": 46}
