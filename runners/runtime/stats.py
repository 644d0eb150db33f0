"""Uncertainty over items: bootstrap intervals and paired significance tests, seeded and pure.

Every figure a task reports comes from its own aggregator over per-item statistics, and several
aggregators are not means (ProPara's leaderboard rounds per-question means, PAGED and ProPara
NAACL'18 sum counts before dividing, PM-LLM sums grades).  So resampling never averages per-item
values: each resample of items is handed to the task's aggregator and the metric is recomputed.

* :func:`bootstrap` draws ``n_resamples`` resamples of the items (with replacement, indices from
  ``numpy.random.default_rng(seed)``) and records the aggregator's metrics on each.  Items are put
  in item-id order first, so two submissions scored on the same items and bootstrapped with the
  same seed see the *same* resamples: their replicates are paired, item for item.
* :func:`interval` is the percentile interval of one metric's replicates: order statistics of
  the finite replicates, the lower bound the ``ceil(B * a/2)``-th smallest and the upper bound the
  ``ceil(B * a/2)``-th largest (``a = 1 - confidence``), so both tails are cut alike.
* :func:`paired` compares two such bootstraps: the interval of the difference (the same
  percentiles) and the two-sided bootstrap p-value ``min(1, 2 * min(#{d* <= 0}, #{d* >= 0}) / B)``.
  One test decides both: ``p < a`` exactly when the ``1 - a`` interval of the difference excludes
  0 (:attr:`PairedResult.separated`), so a pair is never shown "tied" beside an interval that
  excludes 0, nor "different" beside one that contains it.  A p-value of 0 means below ``1 / B``.
* :func:`permutation_test` is approximate randomisation: swap the two systems' item statistics
  at random per item, recompute both metrics with the aggregator, and count how often the absolute
  difference reaches the observed one (``(#{|d'| >= |d|} + 1) / (B + 1)``).
* :func:`tie_group` is the set of candidates a paired bootstrap cannot separate from a leader.

``linear`` is an optional exact shortcut for aggregators that *are* linear in the items (the spec's
plain ``mean()`` or ``sum()`` with no rounding): a resample's metric is then a weighted sum of the
per-item values, computed for all resamples at once.  It uses the same resamples as the general
path, so it gives the same numbers (tests check this); anything else goes through the aggregator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from procbench.runners.runtime._types import ItemScore

Aggregate = Callable[[Sequence[ItemScore]], Mapping[str, float]]
# How a task's aggregate depends on its items, when it allows a faster bootstrap than re-aggregating every resample:
# "mean" / "sum": every metric is the mean / sum of a per-item value; "pooled_sum": every metric is a function of
# the per-item values' sums (ratios of pooled counts, formulas over them), so one item holding a resample's sums
# aggregates to the resample's metrics.
Linear = Literal["mean", "sum", "pooled_sum"] | None

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20240521
DEFAULT_CONFIDENCE = 0.95
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class Bootstrap:
    """The aggregator's metrics on the items (``estimate``) and on each resample (``replicates``)."""

    item_ids: tuple[str, ...]  # the items in the order the resample indices refer to
    metrics: tuple[str, ...]
    estimate: np.ndarray  # shape (len(metrics),)
    replicates: (
        np.ndarray
    )  # shape (n_resamples, len(metrics)); NaN where the aggregator gave nothing
    seed: int

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_resamples(self) -> int:
        return int(self.replicates.shape[0])

    def column(self, metric: str) -> int:
        return self.metrics.index(metric)


@dataclass(frozen=True)
class Interval:
    metric: str
    estimate: float
    low: float
    high: float
    n_items: int
    n_resamples: int
    confidence: float


@dataclass(frozen=True)
class PairedResult:
    """System A minus system B on the same items: the difference, its interval and a p-value."""

    metric: str
    a: float
    b: float
    delta: float
    low: float
    high: float
    p_value: float
    n_items: int
    n_resamples: int
    confidence: float

    @property
    def separated(self) -> bool:
        """Whether the interval of the difference excludes 0 (equivalently ``p_value < 1 - confidence``)."""
        return bool(
            np.isfinite(self.low) and np.isfinite(self.high) and (self.low > 0 or self.high < 0)
        )

    @property
    def tied(self) -> bool:
        """The two systems cannot be told apart at this confidence: the interval of the difference contains 0."""
        return bool(np.isfinite(self.low) and np.isfinite(self.high)) and not self.separated


def resample_indices(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """Indices of ``n_resamples`` resamples with replacement, shape (n_resamples, n_items)."""
    rng = np.random.default_rng(seed)
    return (
        rng.integers(0, n_items, size=(n_resamples, n_items))
        if n_items
        else np.zeros((n_resamples, 0), dtype=np.int64)
    )


def _in_id_order(items: Sequence[ItemScore]) -> list[ItemScore]:
    ordered = sorted(items, key=lambda item: item.item_id)
    ids = [item.item_id for item in ordered]
    if len(set(ids)) != len(ids):
        raise ValueError("items must have distinct ids to be resampled")
    return ordered


def _vector(values: Mapping[str, float], metrics: Sequence[str]) -> np.ndarray:
    return np.array([float(values.get(m, np.nan)) for m in metrics], dtype=float)


def _matrix(items: Sequence[ItemScore]) -> tuple[list[str], np.ndarray]:
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    matrix = np.array(
        [[float(item.values.get(k, 0.0)) for k in keys] for item in items], dtype=float
    ).reshape(len(items), len(keys))
    return keys, matrix


def _replicates(
    items: list[ItemScore],
    aggregate: Aggregate,
    metrics: Sequence[str],
    indices: np.ndarray,
    linear: Linear,
) -> np.ndarray:
    if (
        linear == "pooled_sum" and items
    ):  # one item of pooled values per resample, through the task's own aggregate
        keys, matrix = _matrix(items)
        pooled = np.empty((indices.shape[0], len(metrics)))
        for b, row in enumerate(indices):
            # a running sum adds the resample's items left to right, as the aggregate itself does (a float
            # sum in another order could move a rounded metric by one unit of its last digit)
            sums = np.cumsum(matrix[row], axis=0)[-1].tolist()
            pooled[b] = _vector(aggregate([ItemScore("pooled", dict(zip(keys, sums)))]), metrics)
        return pooled
    if linear is not None and items:
        keys, matrix = _matrix(items)
        counts = np.zeros((indices.shape[0], len(items)))
        rows = np.repeat(np.arange(indices.shape[0]), indices.shape[1])
        np.add.at(counts, (rows, indices.ravel()), 1.0)
        totals = counts @ matrix
        if linear == "mean":
            totals = totals / len(items)
        by_key = {k: i for i, k in enumerate(keys)}
        out = np.full((indices.shape[0], len(metrics)), np.nan)
        for j, metric in enumerate(metrics):
            if metric in by_key:
                out[:, j] = totals[:, by_key[metric]]
        return out
    out = np.empty((indices.shape[0], len(metrics)))
    for b, row in enumerate(indices):
        out[b] = _vector(aggregate([items[i] for i in row]), metrics)
    return out


def bootstrap(
    items: Sequence[ItemScore],
    aggregate: Aggregate,
    metrics: Sequence[str],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    linear: Linear = None,
) -> Bootstrap:
    """Resample ``items`` (in item-id order) and recompute ``metrics`` with ``aggregate`` on each resample."""
    ordered = _in_id_order(items)
    indices = resample_indices(len(ordered), n_resamples, seed)
    estimate = _vector(aggregate(ordered), metrics)
    return Bootstrap(
        item_ids=tuple(item.item_id for item in ordered),
        metrics=tuple(metrics),
        estimate=estimate,
        replicates=_replicates(ordered, aggregate, metrics, indices, linear),
        seed=seed,
    )


def tail_count(n: int, confidence: float) -> int:
    """How many replicates each tail of a ``confidence`` interval leaves out, plus one: ``ceil(n * a/2)``, at least 1.

    Rounded to 9 decimals first so that 1000 * 0.025 is 25, not 25.000000000000004.
    """
    return max(1, math.ceil(round(n * (1.0 - confidence) / 2, 9)))


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The ``k``-th smallest and ``k``-th largest finite value, ``k = tail_count(n, confidence)``.

    Order statistics, not interpolated quantiles, and the same ``k`` on both sides: that is what
    makes the interval of a difference exclude 0 exactly when :func:`bootstrap_p_value` is below
    ``1 - confidence``.
    """
    finite = np.sort(values[np.isfinite(values)])
    if finite.size == 0:
        return float("nan"), float("nan")
    k = min(tail_count(finite.size, confidence), finite.size)
    return float(finite[k - 1]), float(finite[finite.size - k])


def interval(boot: Bootstrap, metric: str, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """The percentile interval of ``metric`` over the resamples."""
    j = boot.column(metric)
    low, high = _percentiles(boot.replicates[:, j], confidence)
    return Interval(
        metric, float(boot.estimate[j]), low, high, boot.n_items, boot.n_resamples, confidence
    )


def bootstrap_p_value(deltas: np.ndarray) -> float:
    """Two-sided p-value that the difference is zero, from paired bootstrap replicates of it.

    ``min(1, 2 * min(#{d <= 0}, #{d >= 0}) / B)`` over the finite replicates: the smallest ``a`` at
    which the ``1 - a`` percentile interval of :func:`_percentiles` would exclude 0.
    """
    finite = deltas[np.isfinite(deltas)]
    if finite.size == 0:
        return float("nan")
    below = int(np.count_nonzero(finite <= 0))
    above = int(np.count_nonzero(finite >= 0))
    return float(min(1.0, 2 * min(below, above) / finite.size))


def paired(
    a: Bootstrap, b: Bootstrap, metric: str, confidence: float = DEFAULT_CONFIDENCE
) -> PairedResult:
    """A minus B from two bootstraps over the same items with the same seed (so the same resamples)."""
    if a.item_ids != b.item_ids or a.seed != b.seed or a.n_resamples != b.n_resamples:
        raise ValueError(
            "paired comparison needs bootstraps of the same items, seed and number of resamples"
        )
    ja, jb = a.column(metric), b.column(metric)
    deltas = a.replicates[:, ja] - b.replicates[:, jb]
    low, high = _percentiles(deltas, confidence)
    value_a, value_b = float(a.estimate[ja]), float(b.estimate[jb])
    return PairedResult(
        metric,
        value_a,
        value_b,
        value_a - value_b,
        low,
        high,
        bootstrap_p_value(deltas),
        a.n_items,
        a.n_resamples,
        confidence,
    )


def common_items(
    a: Sequence[ItemScore], b: Sequence[ItemScore]
) -> tuple[list[ItemScore], list[ItemScore]]:
    """Both systems restricted to the items both were scored on, in item-id order."""
    shared = {i.item_id for i in a} & {i.item_id for i in b}
    return _in_id_order([i for i in a if i.item_id in shared]), _in_id_order(
        [i for i in b if i.item_id in shared]
    )


def paired_bootstrap(
    a: Sequence[ItemScore],
    b: Sequence[ItemScore],
    aggregate: Aggregate,
    metrics: Sequence[str],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    linear: Linear = None,
) -> dict[str, PairedResult]:
    """A minus B for each metric, resampling the items both were scored on."""
    a_items, b_items = common_items(a, b)
    boot_a = bootstrap(
        a_items, aggregate, metrics, n_resamples=n_resamples, seed=seed, linear=linear
    )
    boot_b = bootstrap(
        b_items, aggregate, metrics, n_resamples=n_resamples, seed=seed, linear=linear
    )
    return {m: paired(boot_a, boot_b, m, confidence) for m in metrics}


def permutation_test(
    a: Sequence[ItemScore],
    b: Sequence[ItemScore],
    aggregate: Aggregate,
    metrics: Sequence[str],
    *,
    n_permutations: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, float]:
    """Approximate-randomisation p-value per metric: swap A's and B's statistics item by item at random."""
    a_items, b_items = common_items(a, b)
    observed = _vector(aggregate(a_items), metrics) - _vector(aggregate(b_items), metrics)
    rng = np.random.default_rng(seed)
    swaps = rng.random((n_permutations, len(a_items))) < 0.5
    reached = np.zeros(len(metrics))
    tolerance = 1e-12
    for mask in swaps:
        left = [bi if s else ai for ai, bi, s in zip(a_items, b_items, mask)]
        right = [ai if s else bi for ai, bi, s in zip(a_items, b_items, mask)]
        diff = _vector(aggregate(left), metrics) - _vector(aggregate(right), metrics)
        reached += np.abs(diff) >= np.abs(observed) - tolerance
    return {m: float((reached[j] + 1) / (n_permutations + 1)) for j, m in enumerate(metrics)}


def tie_group(
    leader: Bootstrap, others: Mapping[str, Bootstrap], metric: str, *, alpha: float = DEFAULT_ALPHA
) -> dict[str, PairedResult]:
    """The candidates a paired bootstrap cannot separate from ``leader`` on ``metric``.

    Tied means the ``1 - alpha`` interval of the difference contains 0 (:attr:`PairedResult.tied`),
    the same decision as ``p >= alpha``.

    Candidates bootstrapped over other items (or with another seed) are never tied: they cannot be
    compared item by item.
    """
    tied = {}
    for key, boot in others.items():
        if (
            boot.item_ids != leader.item_ids
            or boot.seed != leader.seed
            or boot.n_resamples != leader.n_resamples
        ):
            continue
        result = paired(leader, boot, metric, 1.0 - alpha)
        if result.tied:
            tied[key] = result
    return tied
