"""PARADISE baselines write valid, deterministic prediction files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import GoldSet
from procbench.runners.baselines.paradise import majority_label, run_baseline
from procbench.runners.paradise.data import load_split, read_choices
from procbench.runners.paradise.predictions import read_labels


def _first(gold: GoldSet, n: int) -> GoldSet:
    return GoldSet(dict(list(gold.items.items())[:n]))


@pytest.mark.parametrize("task", ["warning", "reverse_tip"])
def test_random_baseline_is_seeded_and_valid(tmp_path: Path, task: str) -> None:
    gold = read_choices(SAMPLE_DATA_ROOT, "test", task=task)  # type: ignore[arg-type]
    a = run_baseline("random", task, "test", SAMPLE_DATA_ROOT, tmp_path / "a.jsonl", seed=3)  # type: ignore[arg-type]
    b = run_baseline("random", task, "test", SAMPLE_DATA_ROOT, tmp_path / "b.jsonl", seed=3)  # type: ignore[arg-type]
    c = run_baseline("random", task, "test", SAMPLE_DATA_ROOT, tmp_path / "c.jsonl", seed=4)  # type: ignore[arg-type]
    assert a.read_text() == b.read_text() != c.read_text()
    assert set(read_labels(a, gold)) == set(gold.items)


def test_majority_baseline_predicts_the_dev_majority_everywhere(tmp_path: Path) -> None:
    dev = Counter(item.label for item in load_split(SAMPLE_DATA_ROOT, "tip", "dev").values())
    label = majority_label(SAMPLE_DATA_ROOT, "tip")
    assert dev[label] == max(dev.values())
    gold = read_choices(SAMPLE_DATA_ROOT, "test", task="tip")
    path = run_baseline("majority", "tip", "test", SAMPLE_DATA_ROOT, tmp_path / "m.jsonl")
    assert set(read_labels(path, gold).values()) == {label}
    assert (
        majority_label(SAMPLE_DATA_ROOT, "reverse_tip") == label
    )  # reverse tasks use the forward dev labels


def test_embedding_baseline_on_a_few_real_items_is_valid_and_deterministic(
    data_root: Path, tmp_path: Path
) -> None:
    gold = _first(read_choices(data_root, "test", task="warning"), 4)
    first = run_baseline("embedding", "warning", "test", data_root, tmp_path / "e1.jsonl", limit=4)
    second = run_baseline("embedding", "warning", "test", data_root, tmp_path / "e2.jsonl", limit=4)
    assert first.read_text() == second.read_text()
    assert list(read_labels(first, gold)) == list(gold.items)


def test_unknown_baseline_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="random, majority, embedding"):
        run_baseline("oracle", "tip", "test", SAMPLE_DATA_ROOT, tmp_path / "x.jsonl")  # type: ignore[arg-type]
