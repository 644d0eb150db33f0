"""What a metric's figures mean for display, read from the metric's declaration (issue #30): one description for every page.

For each metric of a task (``describe``): its **range** and **unit** (a ``percent`` metric is a fraction in
[0, 1] shown in %; a library metric states its own range where it is registered, ``Metric.value_range``), the
**items it is computed over** (its measure's ``where``: PM-LLM's C1 counts the 8 ``category = cat01``
questions of 57), its **bounded variant** where the spec declares one (``actor`` -> ``actor_bounded``) and a
one-line note for values outside the range. The board, Compare, Charts, the Submission page and the downloads
read it from here, and ``procbench.leaderboard.analysis`` bootstraps each metric over the items it covers.

Also the display rules every page shares: competition ranks (1, 1, 3), p-values below the display precision,
and which metric ranks a slice on which the chosen one is not defined.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from procbench.leaderboard import queries
from procbench.leaderboard.model import MetricInfo, TaskInfo
from procbench import comparison


@dataclass(frozen=True)
class MetricSemantics:
    """One metric as the pages display it, each field from the spec or the metric library (``source`` says which)."""

    name: str
    display: str
    low: float | None  # the least value the metric can take (None: not bounded / not known)
    high: float | None
    unit: str  # "%" (a fraction shown x100) or "own unit"
    range_source: str  # where the range comes from, in words
    where: tuple[tuple[str, str], ...] = ()  # the item labels it is computed over; () = every item
    aggregate: str = (
        ""  # its measure's aggregation (sum, mean, micro, ...), '' where the spec has none
    )
    bounded: str = ""  # the spec's bounded variant of this metric ('' when none is declared)

    def above(self, value: float | None) -> bool:
        """Whether ``value`` lies above the metric's range (NaN and None never do)."""
        return (
            value is not None
            and self.high is not None
            and not math.isnan(value)
            and value > self.high + 1e-12
        )

    def at_bound(self, value: float) -> bool:
        return any(
            b is not None and math.isclose(value, b, abs_tol=1e-12) for b in (self.low, self.high)
        )

    @property
    def range_text(self) -> str:
        """The range as the pages print it: '0–100 %', '≥ 0', '' when not known."""
        scale = 100.0 if self.unit == "%" else 1.0
        unit = " %" if self.unit == "%" else ""
        if self.low is not None and self.high is not None:
            return f"{self.low * scale:g}–{self.high * scale:g}{unit}"
        if self.low is not None:
            return f"≥ {self.low * scale:g}{unit}"
        if self.high is not None:
            return f"≤ {self.high * scale:g}{unit}"
        return ""

    @property
    def covers_text(self) -> str:
        """The items it is computed over, in words: 'the items with category = cat01' ('' for every item)."""
        return (
            "the items with " + " and ".join(f"{k} = {v}" for k, v in self.where)
            if self.where
            else ""
        )


def _measure(info: TaskInfo, metric: str) -> dict:
    for measure in (info.spec.get("score") or {}).get("measures") or []:
        if metric in (measure.get("outputs") or [measure.get("name")]):
            return dict(measure)
    return {}


@functools.lru_cache(maxsize=256)
def library_range(name: str) -> tuple[float | None, float | None] | None:
    """The range a library metric declares where it is registered (``procbench.runners.metrics``: ``Metric.value_range``); None when unknown."""
    from procbench.runners.runtime import registry

    try:
        built = registry.get("metric", name).build()
    except Exception:  # noqa: BLE001 - a metric that needs arguments, or one this site does not have: no declared range
        return None
    found = getattr(built, "value_range", None)
    return tuple(found) if isinstance(found, tuple) and len(found) == 2 else None


def describe(info: TaskInfo, metric: str | MetricInfo) -> MetricSemantics:
    """The display semantics of one metric of ``info`` (see the module's docstring; docs/site.md has the table)."""
    m = metric if isinstance(metric, MetricInfo) else info.metric(metric)
    measure = _measure(info, m.name)
    library = measure.get("metric") or {}
    declared = (
        library_range(str(library.get("name")))
        if isinstance(library, dict) and library.get("name")
        else None
    )
    if declared is not None and not measure.get("scale") and not measure.get("divide_by"):
        low, high = declared
        source = f"the library metric {library.get('name')}'s declared range"
    elif m.percent:
        low, high, source = 0.0, 1.0, "percent = true: a fraction, shown in %"
    else:
        low, high, source = None, None, "not declared (percent = false)"
    variant = queries.bounded_variant(m.name)
    return MetricSemantics(
        m.name,
        m.display,
        low,
        high,
        "%" if m.percent else "own unit",
        source,
        info.restriction(m.name),
        str(measure.get("aggregate") or ""),
        variant if any(x.name == variant for x in info.metrics) else "",
    )


def above_range_note(info: TaskInfo, names: Sequence[str]) -> str:
    """One caption for metrics shown above their range: why (the official scorer's note), each with its bounded variant."""
    flagged = [describe(info, n) for n in dict.fromkeys(names)]
    if not flagged:
        return ""
    parts = [
        s.display + (f" → {info.metric(s.bounded).display}" if s.bounded else "") for s in flagged
    ]
    return (
        queries.above_one(info.task, True, 2.0) + " Above its range here: " + "; ".join(parts) + "."
    )


def bounded_note(info: TaskInfo, names: Sequence[str]) -> str:
    """Why an official figure and its bounded variant differ (said wherever both are shown, above 100 % or not); '' without variants."""
    pairs = [
        (s.display, info.metric(s.bounded).display)
        for s in (describe(info, n) for n in dict.fromkeys(names))
        if s.bounded
    ]
    if not pairs:
        return ""
    listed = "; ".join(f"{a} (official) and {b}" for a, b in pairs)
    return (
        f"{listed}: the official scorer's figure and its corrected (bounded) variant, shown side by side. "
        + queries.above_one(info.task, True, 2.0).replace(
            "Above 100 % as", "The official figure is computed as", 1
        )
    )


def competition_ranks(
    groups: Sequence[object], keys: Sequence[tuple[object, ...] | None]
) -> list[int | None]:
    """Ranks within each group of sorted rows, equal keys sharing a rank ("competition": 1, 1, 3); None for rows without a key.

    ``groups``: each row's rank group (rows of one group are ranked together, numbered from 1); ``keys``: each row's
    ranking values (the ranking metric, then the spec's tie-breaks), None where it has no value of the ranking metric.
    """
    ranks: list[int | None] = []
    seen: dict[object, int] = {}
    last: dict[object, tuple[tuple[object, ...], int]] = {}
    for group, key in zip(groups, keys):
        if key is None:
            ranks.append(None)
            continue
        seen[group] = seen.get(group, 0) + 1
        previous = last.get(group)
        rank = previous[1] if previous is not None and previous[0] == key else seen[group]
        last[group] = (key, rank)
        ranks.append(rank)
    return ranks


def shared_ranks(ranks: Sequence[int | None]) -> dict[int, int]:
    """Rank -> how many rows share it, for ranks held by more than one row (what the caption names)."""
    counts: dict[int, int] = {}
    for r in ranks:
        if r is not None:
            counts[r] = counts.get(r, 0) + 1
    return {r: n for r, n in counts.items() if n > 1}


def format_p(p: float | None, resamples: int | None = None) -> str:
    """A p-value as ``procbench compare`` prints it (one rule: procbench.comparison), an empty cell where there is none."""
    return comparison.format_p(p, resamples, missing="")


def rank_metric(info: TaskInfo, chosen: str, defined: dict[str, bool]) -> str:
    """The metric a view is ranked by: ``chosen`` where it is defined, else the next of the spec's rank metrics
    (primary, then ``rank_by``) that is; ``chosen`` again when none is (the caller says so)."""
    if defined.get(chosen, True):
        return chosen
    for name in (info.primary, *info.rank_by):
        if name != chosen and defined.get(name, True) and any(m.name == name for m in info.metrics):
            return name
    return chosen
