"""The pooled bootstrap path: tasks whose metrics are ratios of pooled counts resample sums, not items.

Its replicates must equal the plain path's (re-aggregating every resample with the task's own
aggregator), on the bundled samples and on PAGED's real dev split.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from procbench.dsl.tasks import load_task
from procbench.leaderboard.analysis import aggregator
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime import stats


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("paged", "pooled_sum"),
        ("propara-naacl18", "pooled_sum"),
        ("propara", None),
        ("pm-llm-benchmark", None),
        ("openpi", "mean"),
    ],
)
def test_which_tasks_take_the_pooled_path(task: str, expected: str | None) -> None:
    agg = aggregator(task)
    assert agg is not None and agg.linear == expected


def _replicates_both_ways(
    task: str, split: str, data_root: Path, predictions: Path, resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    spec, runner = load_task(task)
    agg = aggregator(task)
    assert agg is not None and agg.linear == "pooled_sum"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gold = runner.read_gold(data_root, split)
        items = runner.score(gold, runner.read_predictions(predictions, gold))
    metrics = tuple(m.name for m in spec.metrics)
    fast = stats.bootstrap(
        items, agg.aggregate, metrics, n_resamples=resamples, seed=7, linear=agg.linear
    )
    plain = stats.bootstrap(
        items, agg.aggregate, metrics, n_resamples=resamples, seed=7, linear=None
    )
    assert fast.estimate.tolist() == plain.estimate.tolist()
    return fast.replicates, plain.replicates


@pytest.mark.parametrize("task", ["paged", "propara-naacl18"])
def test_pooled_replicates_equal_the_plain_ones_on_the_samples(task: str) -> None:
    split = "dev" if task == "paged" else "test"
    for predictions in sorted((SAMPLE_SUBMISSIONS_DIR / task).iterdir()):
        fast, plain = _replicates_both_ways(task, split, SAMPLE_DATA_ROOT, predictions, 200)
        np.testing.assert_array_equal(fast, plain)


def test_pooled_replicates_equal_the_plain_ones_on_real_paged_dev(
    data_root: Path, parity_dir: Path
) -> None:
    fast, plain = _replicates_both_ways(
        "paged", "dev", data_root, parity_dir / "paged" / "perturbed" / "predictions.jsonl", 60
    )
    np.testing.assert_array_equal(fast, plain)
