"""Bootstrap intervals, paired tests and tie groups over the stored per-item scores.

Resamples always go through the task's own aggregator (``load_task(task)[1].aggregate``), never a
plain average of per-item values; see ``runners/runtime/stats.py`` and docs/site.md.  A submission's items
never change once stored (its id hashes its file and the task fingerprint), so bootstraps are cached
per submission and slice for the life of the server process.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np
import polars as pl

from procbench.leaderboard import config, queries, semantics
from procbench.leaderboard.model import SliceInfo, TaskInfo
from procbench import comparison
from procbench.comparison import (
    ANSWER_LABEL_SLICE as ANSWER_LABEL_SLICE,
)  # the board's reasons, shared with procbench compare
from procbench.comparison import DIFFERENT_ITEMS as DIFFERENT_ITEMS
from procbench.comparison import NO_AGGREGATOR as NO_AGGREGATOR
from procbench.comparison import NO_ITEMS_REPORTED as NO_ITEMS_REPORTED
from procbench.comparison import NO_METRIC as NO_METRIC
from procbench.comparison import NOT_REPRODUCED as NOT_REPRODUCED
from procbench.comparison import too_few_items as too_few_items
from procbench.runners.runtime import stats
from procbench.runners.runtime._types import ItemScore
from procbench.runners.runtime.stats import Bootstrap, PairedResult

# the board's bootstrap recipe, shared with procbench.export.eee; the interval floor is read in one place,
# min_interval_items() (the PROCBENCH_MIN_INTERVAL_ITEMS setting, else procbench.submissions.intervals.MIN_INTERVAL_ITEMS): no copy of it here
from procbench.submissions.intervals import MIN_INTERVAL_ENV as MIN_INTERVAL_ENV
from procbench.submissions.intervals import TaskAggregator as TaskAggregator
from procbench.submissions.intervals import aggregator as aggregator
from procbench.submissions.intervals import min_interval_items as min_interval_items
from procbench.submissions.intervals import pooled as pooled


@functools.lru_cache(maxsize=4096)
def _items(db: str, submission_id: str) -> tuple[ItemScore, ...]:
    # for_aggregates: everything here publishes intervals and tests over >= config.MIN_ITEMS items (the hidden-split floor), never items
    return tuple(
        queries.item_scores(Path(db), [submission_id], for_aggregates=True).get(submission_id, [])
    )


def items_of(db: Path, submission_id: str) -> list[ItemScore]:
    return list(_items(str(db), submission_id))


@functools.lru_cache(maxsize=256)
def _labels(db: str, task: str, split: str, fingerprint: str, dimension: str) -> dict[str, str]:
    return queries.item_labels(Path(db), task, split, fingerprint, dimension)


def slice_items(
    db: Path, info: TaskInfo, items: Sequence[ItemScore], sl: SliceInfo | None, value: str
) -> list[ItemScore]:
    """The items of one slice value (all items for the whole split)."""
    if sl is None:
        return list(items)
    labels = _labels(str(db), info.task, info.split, info.fingerprint, sl.key)
    return [i for i in items if labels.get(i.item_id) == value]


@functools.lru_cache(maxsize=4096)
def reproduces(db: str, task: str, submission_id: str) -> bool:
    """Whether today's aggregator gives back the stored whole-split figures from the stored items.

    If the spec changed in a way the fingerprint cannot see from here, intervals would describe a
    different metric; they are then not shown.
    """
    agg = aggregator(task)
    items = _items(db, submission_id)
    if agg is None or not items:
        return False
    stored = queries.aggregates(Path(db), submission_id).filter(pl.col("slice") == "")
    recomputed = agg.aggregate(list(items))
    for metric, value in zip(stored["metric"], stored["value"]):
        again = recomputed.get(metric)
        if again is None or not math.isclose(again, value, rel_tol=1e-9, abs_tol=1e-9):
            return False
    return True


@functools.lru_cache(maxsize=2048)
def _bootstrap(
    db: str,
    task: str,
    split: str,
    fingerprint: str,
    submission_id: str,
    slice_name: str,
    slice_value: str,
    metrics: tuple[str, ...],
    min_items: int,
    where: tuple[tuple[str, str], ...] = (),
) -> Bootstrap | None:
    agg = aggregator(task)
    if agg is None or not reproduces(db, task, submission_id):
        return None
    info_items = list(_items(db, submission_id))
    if slice_name:
        labels = _labels(db, task, split, fingerprint, slice_name)
        info_items = [i for i in info_items if labels.get(i.item_id) == slice_value]
    info_items = _restricted(db, task, split, fingerprint, info_items, where)
    if len(info_items) < min_items:
        return None
    from procbench.leaderboard import (
        bootcache,
    )  # issue #19: kept on disk beside the store, computed once per fingerprint

    # a restricted metric's bootstrap is keyed by its items too (an unrestricted one keeps the key it always had)
    parts = (task, split, fingerprint, submission_id, slice_name, slice_value, metrics) + (
        (where,) if where else ()
    )
    return bootcache.load_or_compute(
        db,
        parts,
        config.N_RESAMPLES,
        config.SEED,
        lambda: stats.bootstrap(
            info_items,
            agg.aggregate,
            metrics,
            n_resamples=config.N_RESAMPLES,
            seed=config.SEED,
            linear=agg.linear,
        ),
    )


def _restricted(
    db: str,
    task: str,
    split: str,
    fingerprint: str,
    items: list[ItemScore],
    where: tuple[tuple[str, str], ...],
) -> list[ItemScore]:
    """The items a restricted metric is computed over (its measure's ``where``, from the stored item labels).

    Issue #30: PM-LLM's C1 sums the 8 ``category = cat01`` questions; resampling all 57 questions gave C1 intervals
    of 2.41-9.91 for a metric that cannot exceed 8. A key the store keeps no labels for restricts nothing (as ``covers``).
    """
    for key, wanted in where:
        labels = _labels(db, task, split, fingerprint, key)
        if labels:
            items = [i for i in items if labels.get(i.item_id) == wanted]
    return items


def bootstrap_of(
    db: Path,
    info: TaskInfo,
    submission_id: str,
    sl: SliceInfo | None = None,
    value: str = "",
    metric: str = "",
) -> Bootstrap | None:
    """The bootstrap of one submission on the whole split or one item slice; None where it cannot be had.

    With ``metric``: over the items that metric is computed over (its measure's ``where``), holding the metrics restricted
    alike; without: over every item, holding the metrics computed over every item. None for reference rows (no items),
    fewer than ``min_interval_items()`` of those items, answer-label slices (their figures re-score restricted gold;
    the stored item scores are the whole split's), tasks whose spec this site cannot load, and
    submissions whose stored figures today's aggregator does not reproduce.
    """
    if sl is not None and not sl.per_item:
        return None
    where = info.restriction(metric) if metric else ()
    metrics = tuple(m.name for m in info.metrics if info.restriction(m.name) == where) or (
        metric or info.primary,
    )
    key = sl.key if sl is not None else ""
    return _bootstrap(
        str(db),
        info.task,
        info.split,
        info.fingerprint,
        submission_id,
        key,
        value if sl is not None else "",
        metrics,
        min_interval_items(),
        where,
    )


# Why a row shows no interval (the UI prints the reason beside the empty cell): the words procbench compare uses too.
NOT_BOOTSTRAPPED = "outside the rows bootstrapped for this view (raise 'Bootstrap the top N rows')"


_TOO_FEW = re.compile(r"only (\d+) items? \(an interval needs")


def summarised(reasons: Sequence[str]) -> list[str]:
    """Distinct reasons, those of rows with too few items said once for all of them ("only 5–9 items ...")."""
    counts = [int(m.group(1)) for r in reasons if (m := _TOO_FEW.match(r))]
    others = [r for r in dict.fromkeys(reasons) if r and not _TOO_FEW.match(r)]
    return others + ([too_few_items(min(counts), max(counts))] if counts else [])


@dataclass(frozen=True)
class Uncertainty:
    """A row's interval on one metric, or the one-line reason it has none (exactly one of the two)."""

    interval: stats.Interval | None
    reason: str = ""


def uncertainty(
    db: Path,
    info: TaskInfo,
    submission_id: str,
    metric: str,
    *,
    is_reference: bool = False,
    sl: SliceInfo | None = None,
    value: str = "",
) -> Uncertainty:
    """The interval of ``metric`` for one row, or why there is none (reported row, few items, answer-label slice, no spread, ...).

    Bootstrapped over the items the metric is computed over (``bootstrap_of(..., metric=)``); an interval whose every
    resample gives one value (all items score alike: a perfect upload's "100.00 – 100.00") is not shown, and says why.
    """
    if is_reference:
        return Uncertainty(None, NO_ITEMS_REPORTED)
    if sl is not None and not sl.per_item:
        return Uncertainty(None, ANSWER_LABEL_SLICE)
    boot = bootstrap_of(db, info, submission_id, sl, value, metric)
    if boot is not None:
        found = interval(boot, metric)
        if found is None:
            return Uncertainty(None, NO_METRIC)
        column = boot.replicates[:, boot.metrics.index(metric)]
        finite = column[~np.isnan(column)]
        if finite.size and float(finite.min()) == float(finite.max()):
            return Uncertainty(None, no_spread(info, metric, float(finite.min()), boot.n_items))
        return Uncertainty(found)
    return Uncertainty(None, no_bootstrap_reason(db, info, submission_id, sl, value, metric))


NO_SPREAD_PREFIX = "no spread: "


def no_spread(info: TaskInfo, metric: str, value: float, n_items: int) -> str:
    """Why a metric whose every resample gives one value shows no interval (said, not shown as "100.00 – 100.00")."""
    sem = semantics.describe(info, metric)
    where = (
        "its maximum"
        if sem.high is not None and sem.at_bound(value) and value >= sem.high
        else ("its minimum" if sem.low is not None and sem.at_bound(value) else "one value")
    )
    shown = info.metric(metric).shown(value)
    return (
        f"{NO_SPREAD_PREFIX}all {n_items} items score alike, so every resample gives {shown:.2f} ({where}); "
        "a bootstrap over them has no variance to show"
    )


def no_bootstrap_reason(
    db: Path,
    info: TaskInfo,
    submission_id: str,
    sl: SliceInfo | None = None,
    value: str = "",
    metric: str = "",
) -> str:
    """Why ``bootstrap_of`` gave None for this row (the checks in the order it makes them); counts the items ``metric`` covers."""
    if sl is not None and not sl.per_item:
        return ANSWER_LABEL_SLICE
    if aggregator(info.task) is None:
        return NO_AGGREGATOR
    items = slice_items(db, info, items_of(db, submission_id), sl, value)
    if not items and not _items(str(db), submission_id):
        return NO_ITEMS_REPORTED
    if not reproduces(str(db), info.task, submission_id):
        return NOT_REPRODUCED
    return too_few_items(covered_items(db, info, submission_id, metric, sl, value))


def covered_items(
    db: Path,
    info: TaskInfo,
    submission_id: str,
    metric: str = "",
    sl: SliceInfo | None = None,
    value: str = "",
) -> int:
    """How many of the row's stored items ``metric`` is computed over on the whole split or one slice value (its measure's
    ``where``; every item without ``metric``): the count an interval of it is bootstrapped over, interval or not."""
    items = slice_items(db, info, items_of(db, submission_id), sl, value)
    where = info.restriction(metric) if metric else ()
    return len(_restricted(str(db), info.task, info.split, info.fingerprint, items, where))


def pair_reasons(
    db: Path,
    info: TaskInfo,
    metric: str,
    sides: Sequence[tuple[str, bool]],
    sl: SliceInfo | None = None,
    value: str = "",
) -> list[str]:
    """Why two rows (``(submission id, is reference)`` each) have no paired interval: each side's reason as the board gives it for
    that row (:func:`uncertainty`), once each; ``[DIFFERENT_ITEMS]`` when both have intervals of their own."""
    reasons = [
        uncertainty(db, info, sid, metric, is_reference=ref, sl=sl, value=value).reason
        for sid, ref in sides
    ]
    return list(dict.fromkeys(r for r in reasons if r)) or [DIFFERENT_ITEMS]


def covers(db: Path, info: TaskInfo, metric: str, sl: SliceInfo | None, value: str) -> bool:
    """Whether ``metric`` is defined on any item of slice value ``value`` (always on the whole split).

    A metric restricted to some items (a measure's ``where``: PM-LLM's Score counts the text questions only) reads
    0 on a slice with none of them (the image questions, category C7): not a figure to show or compare. Decided
    from the stored item labels; where the store has no labels for a restricting key, the metric counts as covering.
    """
    where = info.restriction(metric)
    if sl is None or not where:
        return True
    if any(key == sl.key for key, _ in where):
        return all(wanted == value for key, wanted in where if key == sl.key)
    members = [
        item
        for item, label in _labels(str(db), info.task, info.split, info.fingerprint, sl.key).items()
        if label == value
    ]
    restricting = {
        key: _labels(str(db), info.task, info.split, info.fingerprint, key) for key, _ in where
    }
    if not all(restricting.values()):
        return True
    return any(
        all(restricting[key].get(item) == wanted for key, wanted in where) for item in members
    )


def interval(boot: Bootstrap | None, metric: str) -> stats.Interval | None:
    if boot is None or metric not in boot.metrics:
        return None
    result = stats.interval(boot, metric, config.CONFIDENCE)
    return result if not math.isnan(result.low) else None


def compare(a: Bootstrap | None, b: Bootstrap | None, metric: str) -> PairedResult | None:
    """A minus B by the paired bootstrap at ``1 - ALPHA``: its interval and ``tied`` are one decision (``PairedResult.tied``)."""
    return comparison.paired(a, b, metric)  # one implementation with procbench compare


def tie_group(
    db: Path,
    info: TaskInfo,
    ranked_ids: Sequence[str],
    metric: str,
    sl: SliceInfo | None = None,
    value: str = "",
) -> tuple[str | None, dict[str, PairedResult]]:
    """The leader (first of ``ranked_ids`` with a bootstrap) and the ids a paired test cannot separate from it."""
    boots = {sid: bootstrap_of(db, info, sid, sl, value, metric) for sid in ranked_ids}
    available = {sid: b for sid, b in boots.items() if b is not None}
    if not available:
        return None, {}
    leader = next(sid for sid in ranked_ids if sid in available)
    others = {sid: b for sid, b in available.items() if sid != leader}
    return leader, stats.tie_group(available[leader], others, metric, alpha=config.ALPHA)


def per_item_metric(task: str, items: Sequence[ItemScore], metric: str) -> dict[str, float]:
    """Each item's own value of ``metric``: the task's aggregator over that single item."""
    agg = aggregator(task)
    if agg is None:
        return {}
    out = {}
    for item in items:
        value = agg.aggregate([item]).get(metric)
        if value is not None:
            out[item.item_id] = float(value)
    return out


def per_item_values(db: Path, task: str, submission_id: str, metric: str) -> Mapping[str, float]:
    """:func:`per_item_metric` of one submission's stored items, computed once per process (read-only).

    A submission's items never change (its id hashes its file and the task's fingerprint), so Compare's
    warm views do not re-aggregate every item again (PAGED: 543 documents a side, most of a warm view's CPU).
    """
    return _per_item_values(str(db), task, submission_id, metric)


@functools.lru_cache(maxsize=512)
def _per_item_values(db: str, task: str, submission_id: str, metric: str) -> Mapping[str, float]:
    return MappingProxyType(per_item_metric(task, _items(db, submission_id), metric))


def permutation_p(
    task: str, a: Sequence[ItemScore], b: Sequence[ItemScore], metric: str
) -> float | None:
    """Approximate randomisation p-value of A − B through the task's aggregator (procbench.comparison.permutation_p)."""
    return comparison.permutation_p(task, a, b, metric)
