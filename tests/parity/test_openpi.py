"""OpenPI parity: the shipped specs reproduce the official scorer on the GPT-2 dev predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procbench.api import load_task
from runners._types import GoldSet

VARIANTS = {"openpi": "2020_no_dedup", "openpi-head": "head_dedup"}
NAMES = {"exact": "exact", "bleu": "bleu", "rouge": "rouge"}


@pytest.fixture(scope="module")
def expected(parity_dir: Path) -> dict:
    return json.loads((parity_dir / "openpi" / "expected.json").read_text())


@pytest.mark.parametrize("task", sorted(VARIANTS))
def test_dev_parity_both_behaviours(task: str, data_root: Path, parity_dir: Path, expected: dict) -> None:
    _, runner = load_task(task)
    evaluation = runner.evaluate(data_root, "dev", parity_dir / "openpi" / "gpt2.dev.predictions.jsonl")
    want = expected["variants"][VARIANTS[task]]
    assert evaluation.n_items == expected["n_items"] == 274
    for metric in NAMES:
        for short, key in (("P", "p"), ("R", "r"), ("F1", "f1")):
            assert evaluation.metrics[f"{metric}_{key}"] == pytest.approx(want[metric][short], abs=1e-6)
    printed = want["printed_x100"]
    for metric, official in (("exact", "ExactMetric"), ("bleu", "BLEUMetric"), ("rouge", "ROUGEMetric")):
        for key, short in (("p", "P"), ("r", "R"), ("f1", "F1")):
            assert "%.2f" % (100 * evaluation.metrics[f"{metric}_{key}"]) == printed[f"{short}_{official}"]


@pytest.mark.parametrize("task", sorted(VARIANTS))
def test_dev_slices(task: str, data_root: Path, parity_dir: Path, expected: dict) -> None:
    _, runner = load_task(task)
    evaluation = runner.evaluate(data_root, "dev", parity_dir / "openpi" / "gpt2.dev.predictions.jsonl")
    seen = evaluation.slices["domain"]["seen"]
    assert "unseen" not in evaluation.slices["domain"]  # dev has no Health
    assert seen.n_items == expected["slices"]["seen"]["n_items"]
    for image_slice in ("with_image", "without_image"):
        result = evaluation.slices["modality"][image_slice]
        want = expected["slices"][image_slice]
        assert result.n_items == want["n_items"]
        for metric in NAMES:
            for short, key in (("P", "p"), ("R", "r"), ("F1", "f1")):
                assert result.metrics[f"{metric}_{key}"] == pytest.approx(want["variants"][VARIANTS[task]][metric][short], abs=1e-6)


def _single_item(task: str, pred: list[str], gold: list[str]) -> dict[str, float]:
    """Score one hand-made item through the task's compiled match stages (no driver-level filter)."""
    _, runner = load_task(task)
    scorer = runner.make_scorer({})
    stages = tuple(type(st)(**{**st.__dict__, "filters": ()}) for st in scorer.stages)
    item = type(scorer)(stages)(GoldSet(items={"x": {"answers": gold}}), {"x": {"answers": pred}})[0]
    return dict(item.values)


def test_single_item_cases_from_metrics_md(parity_dir: Path, expected: dict) -> None:
    cases = expected["single_item_cases"]["cases"]
    assert len(cases) >= 10
    for case in cases:
        for task, variant in VARIANTS.items():
            values = _single_item(task, case["pred"], case["gold"])
            for metric in NAMES:
                want = case[metric]
                if isinstance(want, dict):
                    want = want[variant]
                got = [values[f"{metric}_p"], values[f"{metric}_r"], values[f"{metric}_f1"]]
                assert got == pytest.approx(want, abs=1e-9), (case["name"], task, metric)


def test_missing_prediction_is_scored_empty_with_a_warning(data_root: Path, parity_dir: Path, tmp_path: Path) -> None:
    lines = (parity_dir / "openpi" / "gpt2.dev.predictions.jsonl").read_text().splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[:-1]) + "\n")
    _, runner = load_task("openpi-head")
    evaluation = runner.evaluate(data_root, "dev", short)
    assert any("no prediction" in w for w in evaluation.warnings)
    assert evaluation.n_items == 274


def test_test_split_scores_under_health_slices(data_root: Path, tmp_path: Path) -> None:
    gold = [json.loads(x) for x in (data_root / "openpi/data/gold/test/id_answers.jsonl").read_text().splitlines() if x.strip()]
    copy = tmp_path / "gold.jsonl"
    copy.write_text("".join(json.dumps(g) + "\n" for g in gold))
    _, runner = load_task("openpi")
    evaluation = runner.evaluate(data_root, "test", copy)
    assert evaluation.slices["domain"]["unseen"].n_items == 394
    assert evaluation.slices["domain"]["seen"].n_items == 166
    assert evaluation.metrics["exact_f1"] == pytest.approx(1.0)
    assert evaluation.metrics["rouge_f1"] == pytest.approx(1.0)
