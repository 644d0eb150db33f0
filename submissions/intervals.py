"""The board's bootstrap recipe, below the site so that exports give the intervals the board shows.

The site (``procbench.leaderboard.analysis``) and the EEE export (``procbench.export.eee``) both resample a
submission's stored items through the task's own aggregator (``procbench.runners.runtime.stats.bootstrap``) with the
same resamples, seed and confidence, and publish an interval only over at least
:func:`min_interval_items` items and only where today's aggregator reproduces the stored figures.
The pieces that decide this live here once; the site adds its caches on top.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from procbench.dsl import SpecError
from procbench.dsl.model import MeasureSpec, ScoreSpec
from procbench.dsl.tasks import load_task
from procbench.runners.runtime import stats
from procbench.runners.runtime._types import ItemScore
from procbench.runners.runtime.stats import Aggregate, Linear

N_RESAMPLES = stats.DEFAULT_RESAMPLES  # resamples per bootstrap (intervals, paired tests)
SEED = stats.DEFAULT_SEED  # one seed for every bootstrap: same items -> same resamples -> paired
CONFIDENCE = stats.DEFAULT_CONFIDENCE
MIN_ITEMS = 5  # fewer items: no interval or test (the hidden-split floor, procbench.submissions.queries.MIN_HIDDEN_SLICE_ITEMS)

# Fewer items: no interval and no test (so no tie group either).  A percentile bootstrap over a few
# items is degenerate (8 items all right give "100.00 - 100.00") and misstates the uncertainty of
# the benchmark; ~30 is the usual floor for a percentile bootstrap.  At least the hidden-split floor.
MIN_INTERVAL_ITEMS = max(30, MIN_ITEMS)
MIN_INTERVAL_ENV = "PROCBENCH_MIN_INTERVAL_ITEMS"  # a board operator's (or a test's) floor; never below the hidden-split floor

METHOD = (
    "percentile bootstrap over items"  # how an interval is computed, in words (exports name it)
)


def min_interval_items() -> int:
    """The floor in force: ``PROCBENCH_MIN_INTERVAL_ITEMS`` when set (at least ``MIN_ITEMS``), else ``MIN_INTERVAL_ITEMS``."""
    raw = os.environ.get(MIN_INTERVAL_ENV, "").strip()
    try:
        return max(MIN_ITEMS, int(raw)) if raw else MIN_INTERVAL_ITEMS
    except ValueError:
        return MIN_INTERVAL_ITEMS


def method_text(n_resamples: int = N_RESAMPLES, seed: int = SEED) -> str:
    """The interval's method as one line: resamples, seed and that the task's own aggregator recomputes each resample."""
    return f"{METHOD}: {n_resamples} resamples (seed {seed}), each re-aggregated by the task's own aggregator; percentile interval"


@dataclass(frozen=True)
class TaskAggregator:
    aggregate: Aggregate
    linear: Linear


@functools.lru_cache(maxsize=64)
def aggregator(task: str) -> TaskAggregator | None:
    """The task's compiled aggregator, or None when its spec is not available here."""
    try:
        spec, runner = load_task(task)
    except (SpecError, FileNotFoundError, OSError):
        return None
    call = spec.score.aggregate
    kwargs = dict(call.kwargs) if call is not None else {}
    plain = (
        call is not None and not spec.score.measures
    )  # measures reduce statistics (corpus BLEU, macro-F1) or combine metrics: not linear
    linear: Linear = (
        call.name  # type: ignore[assignment, union-attr]
        if plain and call.name in ("mean", "sum") and kwargs.get("round_digits") is None  # type: ignore[union-attr]
        else None
    )
    return TaskAggregator(runner.aggregate, linear or pooled(spec.score))


def pooled(score: ScoreSpec) -> Linear:
    """ "pooled_sum" when every measure is a ratio of pooled counts or a formula over measures, else None.

    Then a resample's metrics are those of one item holding the resample's summed counts. Whole counts sum
    exactly in any order and BLEU sums to within a unit in the last place, so the fast path gives the plain
    path's replicates (tested equal on PAGED's real dev split) in a fraction of the time (PAGED: 1,000
    resamples of the 543 dev documents in about 0.4 s instead of about 5 s).
    """
    if score.aggregate is not None or not score.measures:
        return None
    if all(
        ms.formula is not None or (ms.stats and not ms.where) or _pools_counts(ms)
        for ms in score.measures
    ):
        return "pooled_sum"
    return None


def _pools_counts(measure: MeasureSpec) -> bool:
    """Whether a measure is a library metric aggregated as "pooled": per-item counts summed over the items before its ratio.

    Such a metric reduces any set of items by summing each count from 0, left to right (ProPara NAACL'18's
    question outcomes), which the pooled path's one item of running sums reproduces exactly. A checked
    spec names every measure's aggregation (the metric's default filled in).
    """
    return measure.metric is not None and not measure.where and measure.aggregate == "pooled"


def reproduces(
    agg: TaskAggregator, items: Sequence[ItemScore], stored: Mapping[str, float]
) -> bool:
    """Whether ``agg`` gives back the stored whole-split figures (metric -> value) from the stored items."""
    if not items:
        return False
    recomputed = agg.aggregate(list(items))
    for metric, value in stored.items():
        again = recomputed.get(metric)
        if again is None or not math.isclose(again, value, rel_tol=1e-9, abs_tol=1e-9):
            return False
    return True


def restriction(task: str, metric: str) -> tuple[tuple[str, str], ...]:
    """The item labels ``metric`` is computed over (its measure's ``where``, e.g. PM-LLM's Score: modality = text); () for every item."""
    try:
        spec, _ = load_task(task)
    except (SpecError, FileNotFoundError, OSError):
        return ()
    for measure in spec.score.measures:
        if metric in (measure.outputs or (measure.name,)):
            return tuple((str(k), str(v)) for k, v in measure.where)
    return ()


NO_SPREAD = "no spread: all items score alike, so every resample gives one value; a bootstrap over them has no variance to show"


def whole_split_intervals(
    task: str,
    items: Sequence[ItemScore],
    stored: Mapping[str, float],
    metrics: Sequence[str],
    labels: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[dict[str, stats.Interval], dict[str, str]]:
    """The intervals the board shows for one submission on its whole split, per metric, and for each other metric why it has none.

    As the board: each metric resampled over the items it is computed over (its measure's ``where``, read from the items'
    ``labels``: item id -> dimension -> value; a dimension without labels restricts nothing), none over fewer than
    :func:`min_interval_items` items, none where today's aggregator does not reproduce the stored figures, and none
    where every resample gives one value (no spread).
    """
    agg = aggregator(task)
    if agg is None:
        return {}, dict.fromkeys(
            metrics,
            "the task's spec is not available here, so the metric cannot be recomputed on resamples",
        )
    if not reproduces(agg, items, stored):
        return {}, dict.fromkeys(
            metrics,
            "the stored figures are not reproduced by today's aggregator from the stored items (the spec changed)",
        )
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for metric in metrics:
        groups.setdefault(restriction(task, metric), []).append(metric)
    found: dict[str, stats.Interval] = {}
    reasons: dict[str, str] = {}
    for where, names in groups.items():
        chosen = list(items)
        for key, wanted in where:
            if labels and any(key in per_item for per_item in labels.values()):
                chosen = [i for i in chosen if (labels.get(i.item_id) or {}).get(key) == wanted]
        if len(chosen) < min_interval_items():
            reasons.update(
                dict.fromkeys(
                    names,
                    f"only {len(chosen)} items (an interval needs at least {min_interval_items()})",
                )
            )
            continue
        boot = stats.bootstrap(
            chosen,
            agg.aggregate,
            tuple(names),
            n_resamples=N_RESAMPLES,
            seed=SEED,
            linear=agg.linear,
        )
        for metric in names:
            interval = stats.interval(boot, metric, CONFIDENCE)
            column = boot.replicates[:, boot.column(metric)]
            finite = column[~np.isnan(column)]
            if math.isnan(interval.low):
                reasons[metric] = "this row has no value of the metric"
            elif finite.size and float(finite.min()) == float(finite.max()):
                reasons[metric] = NO_SPREAD
            else:
                found[metric] = interval
    return found, reasons
