"""Parity with the official PAGED ``lexical_based`` scorer on every fixture in shared/parity/paged/.

Each case folder holds ``predictions.jsonl`` and ``expected.json`` (metrics, counts, the raw
accumulators, the official 4-decimal result dicts and, for some cases, per-document results).
Predictions go through the registered validator, scorer and aggregator, exactly as a submission.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from runners._types import GoldSet, ItemScore
from runners.paged.metrics import METRICS, counts_of, official_results, official_sample_result, sum_statistics
from runners.paged.reader import read_gold_file
from runners.paged.scoring import lexical_aggregator, lexical_scorer
from runners.registry import get

CASES = ("gold_as_prediction", "perturbed", "sequential_baseline", "or_gold_as_prediction", "quirks")
PER_DOC_CASES = ("gold_as_prediction", "perturbed", "quirks")  # the cases whose expected.json has per_doc
TOLERANCE = 1e-6  # expected metrics are the unrounded ratios rounded to 6 decimals


@dataclass(frozen=True)
class Scored:
    expected: dict[str, Any]
    gold: GoldSet
    predictions: dict[str, str]
    items: list[ItemScore]

    def stats_of(self, item_id: str) -> dict[str, float]:
        return dict(next(item.values for item in self.items if item.item_id == item_id))


@cache
def _score_case(parity_root: Path, data_root: Path, case: str) -> Scored:
    folder = parity_root / "paged" / case
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    gold = read_gold_file(data_root / expected["gold"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fixtures cover subsets of the gold and contain odd lines on purpose
        predictions = get("predictions", "paged.graph_text").fn(folder / "predictions.jsonl", gold)
    return Scored(expected, gold, predictions, lexical_scorer(gold, predictions))


@pytest.fixture(params=CASES)
def scored(request: pytest.FixtureRequest, parity_dir: Path, data_root: Path) -> Scored:
    return _score_case(parity_dir, data_root, request.param)


def _assert_metrics(values: dict[str, float], expected: dict[str, dict[str, float]], where: str) -> None:
    for name, prf in expected.items():
        got = {"f1": values[name], "p": values[f"{name}_p"], "r": values[f"{name}_r"]}
        for key in ("p", "r", "f1"):
            assert got[key] == pytest.approx(prf[key], abs=TOLERANCE), f"{where}: {name} {key}"


def _assert_counts(stats: dict[str, float], expected: dict[str, dict[str, float]], where: str) -> None:
    for name, counts in expected.items():
        got = counts_of(METRICS[name], stats).official()
        for key, value in counts.items():
            assert got[key] == pytest.approx(value, abs=TOLERANCE), f"{where}: {name} {key}"


def _assert_nested(got: Any, expected: Any, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), f"{where}: keys {sorted(got)} vs {sorted(expected)}"
        for key in expected:
            _assert_nested(got[key], expected[key], f"{where}.{key}")
    else:
        assert got == pytest.approx(expected, abs=1e-9), where


def test_fixture_is_the_one_described(scored: Scored, parity_dir: Path) -> None:
    case = scored.expected["case"]
    path = parity_dir / "paged" / case / "predictions.jsonl"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == scored.expected["predictions_sha256"]
    assert len(scored.predictions) == scored.expected["n_docs"]
    assert ("per_doc" in scored.expected) == (case in PER_DOC_CASES)


def test_every_fixture_folder_is_covered(parity_dir: Path) -> None:
    assert {p.name for p in (parity_dir / "paged").iterdir() if p.is_dir()} == set(CASES)


@pytest.mark.parametrize("case", [c for c in CASES if c.endswith("gold_as_prediction")])
def test_gold_linearisation_is_byte_identical(case: str, parity_dir: Path, data_root: Path) -> None:
    """The two gold-as-prediction fixtures are upstream's own linearisation of every document they cover."""
    scored = _score_case(parity_dir, data_root, case)
    for item_id, graph in scored.predictions.items():
        assert scored.gold.items[item_id].text == graph, item_id


def test_headline_and_strict_metrics(scored: Scored) -> None:
    values = lexical_aggregator(scored.items, round_digits=None)
    _assert_metrics(values, scored.expected["metrics"], "metrics")
    _assert_metrics(values, scored.expected["metrics_extra"], "metrics_extra")


def test_micro_counts(scored: Scored) -> None:
    stats = sum_statistics(item.values for item in scored.items)
    _assert_counts(stats, scored.expected["counts"], "counts")


def test_raw_accumulators(scored: Scored) -> None:
    stats = sum_statistics(item.values for item in scored.items)
    raw = scored.expected["raw_statistics"]
    names = {"p_total": "p_total", "p_correct": "p_correct", "r_total": "r_total", "r_correct": "r_correct"}
    bleu_names = {"bleu_precision_total": "p_sum", "bleu_precision_num": "p_num", "bleu_recall_total": "r_sum", "bleu_recall_num": "r_num"}
    for group, family in (
        ("node_statistics", "node"),
        ("edge_statistics", "edge"),
        ("agent_statistics", "agent"),
        ("bleu_node_statistics", "bleu_node"),
        ("bleu_agent_statistics", "bleu_agent"),
        ("bleu_edge_statistics", "bleu_edge"),
    ):
        for member, counts in raw[group].items():
            for key, value in counts.items():
                ours = f"{family}.{member}.{names.get(key) or bleu_names[key]}"
                assert stats[ours] == pytest.approx(value, abs=TOLERANCE), ours
    for side, totals in (("p", raw["precision_totals"]), ("r", raw["recall_totals"])):
        assert totals["nodes_total"] == counts_of(METRICS["node_total_strict"], stats).official()[f"{side}_total"]
        assert totals["nodes_correct"] == counts_of(METRICS["node_total_strict"], stats).official()[f"{side}_correct"]
        assert totals["edges_total"] == counts_of(METRICS["edge_total_strict"], stats).official()[f"{side}_total"]
        assert totals["edges_correct"] == counts_of(METRICS["edge_total_strict"], stats).official()[f"{side}_correct"]


def test_official_result_dicts_to_four_decimals(scored: Scored) -> None:
    stats = sum_statistics(item.values for item in scored.items)
    _assert_nested(official_results(stats), scored.expected["official_results_4dp"], "official_results_4dp")


def test_default_aggregator_rounds_like_upstream(scored: Scored) -> None:
    """With its default rounding the aggregator gives the official 4-decimal values at the mapped fields."""
    values = lexical_aggregator(scored.items)
    official = scored.expected["official_results_4dp"]
    mapping = {**scored.expected["official_field_names"], **scored.expected["metrics_extra_field_names"]}
    for name, field in mapping.items():
        node: Any = official
        for part in field.split(" ")[0].split("."):
            node = node[part]
        assert values[name] == node["f1"], name
        assert values[f"{name}_p"] == node["precision"], name
        assert values[f"{name}_r"] == node["recall"], name


@pytest.mark.parametrize("case", PER_DOC_CASES)
def test_per_document_results(case: str, parity_dir: Path, data_root: Path) -> None:
    scored = _score_case(parity_dir, data_root, case)
    for entry in scored.expected["per_doc"]:
        item_id = str(entry["id"])
        stats = scored.stats_of(item_id)
        where = f"document {item_id}" + (f" ({entry['quirk']})" if "quirk" in entry else "")
        values = lexical_aggregator([ItemScore(item_id, stats)], round_digits=None)
        _assert_metrics(values, entry["metrics"], where)
        _assert_metrics(values, entry["metrics_extra"], where)
        _assert_counts(stats, entry["counts"], where)
        _assert_nested(official_sample_result(stats), entry["official_sample_result"], where)


def test_missing_documents_score_like_the_official_subset(scored: Scored) -> None:
    """Gold documents absent from a fixture are scored as empty output and change no total."""
    submitted = [item for item in scored.items if item.item_id in scored.predictions]
    absent = [item for item in scored.items if item.item_id not in scored.predictions]
    assert len(submitted) == scored.expected["n_docs"]
    for item in absent:
        assert item.values["missing_prediction"] == 1
        assert all(value == 0 for key, value in item.values.items() if "." in key)
    with_subset = lexical_aggregator(submitted, round_digits=None)
    with_all = lexical_aggregator(scored.items, round_digits=None)
    for name in (*with_subset.keys() - {"gold_line_coverage"},):  # coverage (not official) does see them
        assert with_subset[name] == with_all[name], name
