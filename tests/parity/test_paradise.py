"""PARADISE on the real data: reader, slice sizes (metrics.md 3.4) and the worked examples of 3.2."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from runners.paradise.data import EXPLICIT, EXPLICITNESS, IMPLICIT, RQ_DIR, STRONGLY_EXPLICIT, load_split, read_choices
from runners.paradise.metrics import aggregate_accuracy, score_choices
from runners.paradise.predictions import read_labels

# metrics.md 3.4: rows of the 0.5 / 0.75 files and the implicit complement, per task.
SLICE_SIZES = {"tip": {"0.5": 382, "0.75": 52, "implicit": 118}, "warning": {"0.5": 368, "0.75": 35, "implicit": 132}}


@pytest.mark.parametrize("task", ["warning", "tip"])
def test_explicitness_slices_have_the_published_sizes(data_root: Path, task: str) -> None:
    gold = read_choices(data_root, "test", task=task)
    counts = Counter(labels[EXPLICITNESS] for labels in gold.labels.values())
    expected = SLICE_SIZES[task]
    assert counts[STRONGLY_EXPLICIT] == expected["0.75"]
    assert counts[STRONGLY_EXPLICIT] + counts[EXPLICIT] == expected["0.5"]
    assert counts[IMPLICIT] == expected["implicit"]
    assert sum(counts.values()) == len(gold.items) == 500


@pytest.mark.parametrize("task", ["warning", "tip"])
def test_rq3_rows_are_the_test_rows_they_point_to(data_root: Path, task: str) -> None:
    test = load_split(data_root, task, "test")
    with (data_root / RQ_DIR / "rq3" / f"{task}_test0.5.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            item = test[str(int(row[""]))]
            assert row["Unnamed: 0"] == row[""]
            assert (row["sent2"], row["label"]) == (item.goal, str(item.label))
            assert (row["ending0"], row["ending3"]) == (item.endings[0], item.endings[3])


@pytest.mark.parametrize("task", ["warning", "tip"])
@pytest.mark.parametrize("variant", ["drop", "placeholder", "synonym", "mlm"])
def test_perturbed_splits_keep_order_labels_and_slices(data_root: Path, task: str, variant: str) -> None:
    test = read_choices(data_root, "test", task=task)
    perturbed = read_choices(data_root, f"test_{variant}", task=task)
    assert list(perturbed.items) == list(test.items)
    assert [i.label for i in perturbed.items.values()] == [i.label for i in test.items.values()]
    assert perturbed.labels == test.labels


@pytest.mark.parametrize(("task", "split", "size"), [("warning", "dev", 5000), ("tip", "dev", 5000), ("reverse_warning", "test", 500), ("reverse_tip", "test", 500)])
def test_other_splits_load_without_slices(data_root: Path, task: str, split: str, size: int) -> None:
    gold = read_choices(data_root, split, task=task)  # type: ignore[arg-type]
    assert list(gold.items) == [str(i) for i in range(size)]
    assert gold.labels == {}


def test_unknown_split_and_missing_file_are_reported(data_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="test_drop"):
        read_choices(data_root, "test_drop", task="reverse_tip")
    with pytest.raises(ValueError, match="train"):
        read_choices(data_root, "train", task="tip")
    with pytest.raises(FileNotFoundError, match="tip_test.csv"):
        read_choices(tmp_path, "test", task="tip")


def _score_file(data_root: Path, tmp_path: Path, labels: list[int]) -> dict[str, float]:
    gold = read_choices(data_root, "test", task="tip")
    path = tmp_path / "predictions.csv"
    path.write_text("id,label\n" + "".join(f"{i},{label}\n" for i, label in enumerate(labels)))
    return aggregate_accuracy(score_choices(gold, read_labels(path, gold)))


def test_worked_example_constant_3_on_tip_test(data_root: Path, tmp_path: Path) -> None:
    metrics = _score_file(data_root, tmp_path, [3] * 500)
    assert metrics["accuracy"] == pytest.approx(0.26, abs=1e-12)
    assert metrics["weighted_p"] == pytest.approx(0.0676, abs=5e-7)
    assert metrics["weighted_r"] == pytest.approx(0.26, abs=5e-7)
    assert metrics["weighted_f1"] == pytest.approx(0.107302, abs=5e-7)


def test_worked_example_row_index_mod_4_on_tip_test(data_root: Path, tmp_path: Path) -> None:
    metrics = _score_file(data_root, tmp_path, [i % 4 for i in range(500)])
    assert metrics["accuracy"] == pytest.approx(0.268, abs=1e-12)
    assert metrics["weighted_p"] == pytest.approx(0.267968, abs=5e-7)
    assert metrics["weighted_r"] == pytest.approx(0.268, abs=5e-7)
    assert metrics["weighted_f1"] == pytest.approx(0.267912, abs=5e-7)


def test_tip_test_label_distribution_matches_metrics_md(data_root: Path) -> None:
    labels = Counter(item.label for item in load_split(data_root, "tip", "test").values())
    assert labels == Counter({0: 121, 1: 121, 2: 128, 3: 130})
