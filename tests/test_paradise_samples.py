"""The shipped PARADISE samples load, validate, score, cover every slice value and rank as intended."""

from __future__ import annotations

from collections import Counter

import pytest

from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.paradise.data import (
    EXPLICITNESS,
    EXPLICIT,
    IMPLICIT,
    STRONGLY_EXPLICIT,
    read_choices,
    splits_of,
)
from procbench.runners.paradise.metrics import aggregate_accuracy, score_choices
from procbench.runners.paradise.predictions import read_labels


@pytest.mark.parametrize("task", ["warning", "tip", "reverse_warning", "reverse_tip"])
def test_every_split_of_the_samples_loads(task: str) -> None:
    for split in splits_of(task):  # type: ignore[arg-type]
        gold = read_choices(SAMPLE_DATA_ROOT, split, task=task)  # type: ignore[arg-type]
        assert gold.items and all(0 <= item.label <= 3 for item in gold.items.values())


@pytest.mark.parametrize("task", ["warning", "tip"])
def test_sample_test_splits_cover_every_explicitness_value(task: str) -> None:
    gold = read_choices(SAMPLE_DATA_ROOT, "test", task=task)
    assert set(Counter(v[EXPLICITNESS] for v in gold.labels.values())) == {
        STRONGLY_EXPLICIT,
        EXPLICIT,
        IMPLICIT,
    }


@pytest.mark.parametrize("task", ["warning", "tip", "reverse_warning", "reverse_tip"])
def test_sample_submissions_rank_strong_middling_weak(task: str) -> None:
    gold = read_choices(SAMPLE_DATA_ROOT, "test", task=task)  # type: ignore[arg-type]
    folder = SAMPLE_SUBMISSIONS_DIR / f"paradise-{task.replace('_', '-')}"
    accuracy = {
        path.stem: aggregate_accuracy(score_choices(gold, read_labels(path, gold)))["accuracy"]
        for path in sorted(folder.iterdir())
    }
    assert accuracy["sample-strong"] > accuracy["sample-middling"] > accuracy["sample-weak"]
