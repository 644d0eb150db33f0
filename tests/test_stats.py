"""Bootstrap intervals and paired tests: seeded, exact, and always through the task's own aggregator."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime import stats
from procbench.runners.runtime._types import ItemScore
from procbench.runners.library.generic import mean, total

values = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
item_lists = st.lists(st.fixed_dictionaries({"p": values, "r": values}), min_size=1, max_size=25)


def _items(rows: list[dict[str, float]], prefix: str = "i") -> list[ItemScore]:
    return [ItemScore(f"{prefix}{n:03d}", row) for n, row in enumerate(rows)]


@given(item_lists, st.integers(0, 2**31 - 1))
def test_linear_shortcut_equals_the_aggregator_on_the_same_resamples(
    rows: list[dict[str, float]], seed: int
) -> None:
    items = _items(rows)
    for aggregate, linear in ((mean, "mean"), (total, "sum")):
        slow = stats.bootstrap(items, aggregate, ["p", "r"], n_resamples=60, seed=seed)
        fast = stats.bootstrap(
            items, aggregate, ["p", "r"], n_resamples=60, seed=seed, linear=linear
        )
        np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(fast.estimate, slow.estimate, rtol=1e-9, atol=1e-12)


@given(item_lists, st.integers(0, 2**31 - 1))
def test_each_replicate_is_the_aggregator_on_the_seeded_resample(
    rows: list[dict[str, float]], seed: int
) -> None:
    items = _items(rows)
    boot = stats.bootstrap(list(reversed(items)), mean, ["p"], n_resamples=20, seed=seed)
    indices = stats.resample_indices(len(items), 20, seed)
    assert boot.item_ids == tuple(
        i.item_id for i in items
    )  # put in id order whatever the input order
    for b in (0, 7, 19):
        expected = sum(items[i].values["p"] for i in indices[b]) / len(items)
        assert math.isclose(boot.replicates[b, 0], expected, rel_tol=1e-12, abs_tol=1e-12)


@given(item_lists)
def test_intervals_are_ordered_and_reproducible(rows: list[dict[str, float]]) -> None:
    items = _items(rows)
    first = stats.interval(stats.bootstrap(items, mean, ["p"], n_resamples=100, seed=3), "p")
    again = stats.interval(stats.bootstrap(items, mean, ["p"], n_resamples=100, seed=3), "p")
    assert first == again
    assert first.low <= first.high
    assert (
        min(r["p"] for r in rows) - 1e-12 <= first.low
        and first.high <= max(r["p"] for r in rows) + 1e-12
    )
    assert first.n_items == len(rows) and first.n_resamples == 100


def test_constant_items_give_a_point_interval_and_seeds_matter() -> None:
    items = _items([{"p": 0.5, "r": 0.5}] * 30)
    flat = stats.interval(stats.bootstrap(items, mean, ["p"], n_resamples=50), "p")
    assert (flat.low, flat.estimate, flat.high) == (0.5, 0.5, 0.5)
    varied = _items([{"p": float(i % 2), "r": 0.0} for i in range(40)])
    one = stats.bootstrap(varied, mean, ["p"], n_resamples=50, seed=1).replicates
    two = stats.bootstrap(varied, mean, ["p"], n_resamples=50, seed=2).replicates
    assert not np.array_equal(one, two)


def test_duplicate_item_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="distinct ids"):
        stats.bootstrap([ItemScore("a", {"p": 1.0}), ItemScore("a", {"p": 0.0})], mean, ["p"])


def _sample_items(task: str, split: str, sample: str) -> tuple[list[ItemScore], object]:
    _, runner = load_task(task)
    path = next((SAMPLE_SUBMISSIONS_DIR / task).glob(sample + ".*"))
    evaluation = runner.evaluate(SAMPLE_DATA_ROOT, split, path)
    return evaluation.items, runner.aggregate


def test_propara_resamples_are_recomputed_with_its_rounding_aggregator() -> None:
    """ProPara's leaderboard rounds per-question means to 3 decimals: every replicate must too."""
    items, aggregate = _sample_items("propara", "test", "noisy-tracker")
    boot = stats.bootstrap(items, aggregate, ["f1", "inputs_p"], n_resamples=200, seed=5)
    for value in boot.replicates[:, 1]:
        assert value == round(value, 3)  # a plain mean of per-item values would not be rounded
    assert boot.estimate[0] == aggregate(items)["f1"]


def test_paged_micro_counts_are_resampled_as_counts() -> None:
    """PAGED's F1 is a ratio of summed counts: a replicate is the aggregator on the resampled documents."""
    items, aggregate = _sample_items("paged", "dev", "sloppy-prompt")
    boot = stats.bootstrap(items, aggregate, ["action"], n_resamples=30, seed=11)
    ordered = sorted(items, key=lambda i: i.item_id)
    indices = stats.resample_indices(len(ordered), 30, 11)
    for b in (0, 29):
        assert boot.replicates[b, 0] == aggregate([ordered[i] for i in indices[b]])["action"]


def test_identical_systems_are_tied_with_p_one() -> None:
    rng = random.Random(0)
    rows = [{"p": rng.random(), "r": rng.random()} for _ in range(50)]
    a, b = _items(rows), _items(rows)
    result = stats.paired_bootstrap(a, b, mean, ["p"], n_resamples=200)["p"]
    assert (
        result.delta == 0.0 and result.low == 0.0 and result.high == 0.0 and result.p_value == 1.0
    )
    assert stats.permutation_test(a, b, mean, ["p"], n_permutations=200)["p"] == 1.0


def test_a_clearly_better_system_is_separated() -> None:
    rng = random.Random(1)
    weak = _items([{"p": rng.random() * 0.5} for _ in range(60)])
    strong = [ItemScore(i.item_id, {"p": i.values["p"] + 0.3}) for i in weak]
    result = stats.paired_bootstrap(strong, weak, mean, ["p"], n_resamples=500)["p"]
    assert math.isclose(result.delta, 0.3) and result.low > 0 and result.p_value < 0.01
    assert stats.permutation_test(strong, weak, mean, ["p"], n_permutations=500)["p"] < 0.01
    # the test is symmetric
    assert (
        stats.paired_bootstrap(weak, strong, mean, ["p"], n_resamples=500)["p"].p_value
        == result.p_value
    )


def test_noise_level_differences_are_not_significant() -> None:
    rng = random.Random(2)
    a = _items([{"p": float(rng.random() < 0.6)} for _ in range(40)])
    b = [
        ItemScore(i.item_id, {"p": i.values["p"] if n % 20 else 1.0 - i.values["p"]})
        for n, i in enumerate(a)
    ]  # 2 items flipped
    assert stats.paired_bootstrap(a, b, mean, ["p"], n_resamples=500)["p"].p_value > 0.05
    assert stats.permutation_test(a, b, mean, ["p"], n_permutations=500)["p"] > 0.05


def test_paired_needs_the_same_items() -> None:
    a = stats.bootstrap(_items([{"p": 1.0}] * 6, "a"), mean, ["p"], n_resamples=10)
    b = stats.bootstrap(_items([{"p": 1.0}] * 6, "b"), mean, ["p"], n_resamples=10)
    with pytest.raises(ValueError, match="same items"):
        stats.paired(a, b, "p")
    # paired_bootstrap restricts both to the items they share
    shared = stats.paired_bootstrap(
        _items([{"p": 1.0}] * 6, "a"), _items([{"p": 0.0}] * 4, "a"), mean, ["p"], n_resamples=10
    )["p"]
    assert shared.n_items == 4 and shared.delta == 1.0


def test_tie_group_keeps_only_inseparable_candidates() -> None:
    rng = random.Random(3)
    base = [{"p": float(rng.random() < 0.7)} for _ in range(80)]
    leader = stats.bootstrap(_items(base), mean, ["p"], n_resamples=300)
    twin_rows = [dict(r) for r in base]
    twin_rows[0]["p"] = 1.0 - twin_rows[0]["p"]
    twin = stats.bootstrap(_items(twin_rows), mean, ["p"], n_resamples=300)
    far = stats.bootstrap(_items([{"p": 0.0}] * 80), mean, ["p"], n_resamples=300)
    elsewhere = stats.bootstrap(_items(base, "x"), mean, ["p"], n_resamples=300)
    tied = stats.tie_group(
        leader, {"twin": twin, "far": far, "elsewhere": elsewhere}, "p", alpha=0.05
    )
    assert set(tied) == {"twin"}
    assert tied["twin"].p_value >= 0.05
