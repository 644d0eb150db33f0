"""Paired comparison of two stored submissions, as the site's Compare page computes it: ``procbench compare``.

    >>> import procbench
    >>> c = procbench.compare("3f2a…", "9be1…", metric="rouge_f1", db="var/procbench.duckdb")
    >>> c.delta, (c.ci_low, c.ci_high), c.p_value, c.p_permutation, c.verdict
    >>> c.to_dict()                          # what `procbench compare --json` prints

Both submissions are resampled item by item through the task's own aggregator (``procbench.runners.runtime.stats``) with
the board's recipe (``procbench.submissions.intervals``: resamples, seed, the interval floor, the check that
today's aggregator reproduces the stored figures), over the items the metric is computed over (a
measure's ``where``), exactly as ``procbench.leaderboard.analysis.bootstrap_of(..., metric)`` does; the paired
interval and p-value are ``procbench.runners.runtime.stats.paired`` at ``1 - ALPHA`` and the approximate randomisation
p-value ``procbench.runners.runtime.stats.permutation_test`` (the site's ``analysis.compare`` and ``permutation_p``).
tests/test_compare_cli.py holds the numbers equal to the site's own functions on the same store.

Only what the board shows is published: figures are the public aggregates (``procbench.submissions.queries``: on a
hidden split no slice of fewer than ``MIN_HIDDEN_SLICE_ITEMS`` items), intervals and tests need at least
:func:`procbench.submissions.intervals.min_interval_items` items, and no item is ever named.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from procbench.runners.runtime import stats
from procbench.runners.runtime._types import ItemScore
from procbench.runners.runtime.paths import DEFAULT_DB
from procbench.runners.runtime.stats import Bootstrap, PairedResult
from procbench.submissions import intervals
from procbench.submissions import queries as rules
from procbench.submissions.display import for_terminal
from procbench.submissions.store import reader

ALPHA = (
    stats.DEFAULT_ALPHA
)  # tied when the paired bootstrap gives p >= ALPHA (the board's tie group)

# Why a pair has no paired interval, in the board's words (procbench.leaderboard.analysis gives a row's reason the same way).
NO_ITEMS_REPORTED = "reported in the literature: no per-item scores to resample"
ANSWER_LABEL_SLICE = "this slice re-scores every item against restricted gold; only the whole split's item scores are stored"
NOT_REPRODUCED = "the stored figures are not reproduced by today's aggregator from the stored items (the spec changed)"
NO_AGGREGATOR = (
    "this site cannot load the task's spec, so it cannot recompute the metric on resamples"
)
NO_METRIC = "this row has no value of the metric"
DIFFERENT_ITEMS = "the two were scored on different items, so there is no paired test"
SAME_SUBMISSION = "A and B are the same submission"


def too_few_items(n: int, most: int | None = None) -> str:
    """Why a row of ``n`` items has no interval (the board's sentence); ``most``: the same for rows of ``n`` to ``most`` items."""
    count = f"{n}" if most is None or most == n else f"{n}–{most}"
    items = f"{count} item{'s' if (most or n) != 1 else ''}"
    return f"only {items} (an interval needs at least {intervals.min_interval_items()}): a bootstrap over so few items would mislead"


class CompareError(ValueError):
    """Two submissions that cannot be compared; ``kind`` says why (the CLI's exit status follows it).

    ``unknown``: no such visible submission; ``board``: not on its board (another fingerprint than the board's, a row the
    board does not show); ``different``: another task, split or fingerprint;
    ``metric``: no such metric; ``slice``: no such slice, or a value the board shows no figure for.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Side:
    submission_id: str
    model: str
    team: str
    is_reference: bool
    value: float | None  # the stored (public) figure of the metric on the compared items


@dataclass(frozen=True)
class Comparison:
    """A minus B on one metric, on the whole split or one slice value: the board's figures, the paired bootstrap
    (interval of the difference and its p-value) and the approximate randomisation p-value, or why there are none."""

    task: str
    split: str
    fingerprint: str
    metric: str
    higher_is_better: bool
    percent: bool
    slice: str  # "" for the whole split
    slice_value: str
    a: Side
    b: Side
    delta: float | None
    n_items: int | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None  # two-sided paired bootstrap p-value
    p_permutation: float | None  # approximate randomisation over the same items
    verdict: str  # "tied" | "A better" | "B better" | "not tested"
    reasons: tuple[str, ...] = ()  # why there is no interval / test (the board's words)
    hidden_split: bool = False
    n_resamples: int = intervals.N_RESAMPLES
    seed: int = intervals.SEED
    confidence: float = 1.0 - ALPHA

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reasons"] = list(self.reasons)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False, default=str)

    @property
    def verdict_text(self) -> str:
        """The verdict in the board's words (its tie group: "cannot be separated ... by a paired bootstrap over items")."""
        recipe = f"a paired bootstrap over items ({self.n_resamples} resamples, seed {self.seed}"
        if self.verdict == "tied":
            return f"A and B cannot be separated on {self.metric} by {recipe}, p ≥ {ALPHA}): tied"
        if self.verdict in ("A better", "B better"):
            winner, loser = ("A", "B") if self.verdict == "A better" else ("B", "A")
            return f"{winner} is better than {loser} on {self.metric}: separated by {recipe}, p < {ALPHA})"
        return "not tested: " + "; ".join(self.reasons)

    def text(self) -> str:
        """The comparison as lines of text (what ``procbench compare`` prints)."""

        def shown(value: float | None) -> str:
            if value is None or math.isnan(value):
                return "—"
            return f"{value * 100:.2f}" if self.percent else f"{value:.4g}"

        where = f"{self.slice} = {self.slice_value}" if self.slice else "whole split"
        lines = [
            f"{self.task} / {self.split} ({where}), metric {self.metric} ({'higher' if self.higher_is_better else 'lower'} is better"
            + (", in %" if self.percent else "")
            + ")",
            f"A  {self.a.submission_id}  {for_terminal(self.a.model)} — {for_terminal(self.a.team)}: {shown(self.a.value)}",
            f"B  {self.b.submission_id}  {for_terminal(self.b.model)} — {for_terminal(self.b.team)}: {shown(self.b.value)}",
            f"A − B: {shown(self.delta)}",
        ]
        if self.ci_low is not None and self.ci_high is not None:
            lines.append(
                f"{self.confidence:.0%} CI of A − B: {shown(self.ci_low)} – {shown(self.ci_high)} over {self.n_items} items"
            )
            lines.append(f"paired bootstrap p = {format_p(self.p_value, self.n_resamples)}")
        if self.p_permutation is not None:
            lines.append(
                f"approximate randomisation p = {format_p(self.p_permutation)} ({self.n_resamples} permutations, seed {self.seed})"
            )
        lines.append(self.verdict_text)
        return "\n".join(lines)


P_DECIMALS = 4  # p-values are printed with 4 decimals; smaller ones as "< 0.0001"


def format_p(p: float | None, resamples: int | None = None, *, missing: str = "—") -> str:
    """A p-value as every page and ``procbench compare`` print it: 4 decimals; '< 0.0001' below; '< 1/B' where no
    bootstrap resample of B crossed 0; ``missing`` where there is none."""
    if p is None or math.isnan(p):
        return missing
    if p <= 0.0 and resamples:
        return f"< {1.0 / resamples:.{P_DECIMALS}f}".rstrip("0")
    if p < 10.0**-P_DECIMALS:
        return f"< {10.0**-P_DECIMALS:.{P_DECIMALS}f}"
    return f"{p:.{P_DECIMALS}f}"


# -- the computation (one recipe, the site's) -----------------------------------------------------------------------


def paired(a: Bootstrap | None, b: Bootstrap | None, metric: str) -> PairedResult | None:
    """A minus B by the paired bootstrap at ``1 - ALPHA`` (the site's ``analysis.compare``); None without two bootstraps of the same items."""
    if a is None or b is None or a.item_ids != b.item_ids or metric not in a.metrics:
        return None
    return stats.paired(a, b, metric, 1.0 - ALPHA)


def permutation_p(
    task: str, a: Sequence[ItemScore], b: Sequence[ItemScore], metric: str
) -> float | None:
    """Approximate randomisation p-value of A − B over the items both were scored on, through the task's aggregator."""
    agg = intervals.aggregator(task)
    if agg is None or not a or not b:
        return None
    return stats.permutation_test(
        a, b, agg.aggregate, [metric], n_permutations=intervals.N_RESAMPLES, seed=intervals.SEED
    )[metric]


def restricted(
    items: Sequence[ItemScore],
    where: Sequence[tuple[str, str]],
    labels: Mapping[str, Mapping[str, str]],
) -> list[ItemScore]:
    """The items a restricted metric is computed over (its measure's ``where``); a key without stored labels restricts nothing."""
    out = list(items)
    for key, wanted in where:
        found = labels.get(key) or {}
        if found:
            out = [i for i in out if found.get(i.item_id) == wanted]
    return out


@dataclass
class _Board:
    """One task/split/fingerprint of a store, read once: its spec's metrics and slices, items and labels on demand."""

    db: Path
    task: str
    split: str
    fingerprint: str
    spec: dict[str, Any]
    hidden: bool
    _labels: dict[str, dict[str, str]] = field(default_factory=dict)
    _items: dict[str, list[ItemScore]] = field(default_factory=dict)

    def labels(self, key: str) -> dict[str, str]:
        if key not in self._labels:
            self._labels[key] = rules.item_labels(
                self.db, self.task, self.split, self.fingerprint, key
            )
        return self._labels[key]

    def items(self, sid: str) -> list[ItemScore]:
        if sid not in self._items:
            # for aggregates: only figures over at least the interval floor (>= the hidden-split floor) are published
            self._items[sid] = rules.item_score_lists(self.db, [sid], for_aggregates=True).get(
                sid, []
            )
        return self._items[sid]

    def metrics(self) -> list[dict[str, Any]]:
        return [m for m in self.spec.get("metrics") or [] if isinstance(m, dict) and m.get("name")]

    def slice_entry(self, name: str) -> dict[str, Any] | None:
        return next(
            (
                s
                for s in self.spec.get("slices") or []
                if isinstance(s, dict) and s.get("name") == name
            ),
            None,
        )

    def restriction(self, metric: str) -> tuple[tuple[str, str], ...]:
        """The item labels ``metric`` is restricted to (the site's ``TaskInfo.restriction``)."""
        for measure in (self.spec.get("score") or {}).get("measures") or []:
            if metric in (measure.get("outputs") or [measure.get("name")]):
                return tuple((str(key), str(value)) for key, value in measure.get("where") or [])
        return ()

    def covers(self, metric: str, key: str, value: str) -> bool:
        """Whether ``metric`` is defined on any item of slice ``key = value`` (the site's ``analysis.covers``)."""
        where = self.restriction(metric)
        if not key or not where:
            return True
        if any(k == key for k, _ in where):
            return all(wanted == value for k, wanted in where if k == key)
        members = [item for item, label in self.labels(key).items() if label == value]
        restricting = {k: self.labels(k) for k, _ in where}
        if not all(restricting.values()):
            return True
        return any(
            all(restricting[k].get(item) == wanted for k, wanted in where) for item in members
        )

    def reproduces(self, sid: str) -> bool:
        agg = intervals.aggregator(self.task)
        stored = rules.aggregates(self.db, sid)
        whole = {
            m: v for s, m, v in zip(stored["slice"], stored["metric"], stored["value"]) if s == ""
        }
        return agg is not None and intervals.reproduces(agg, self.items(sid), whole)

    def bootstrap(self, sid: str, metric: str, key: str, value: str) -> Bootstrap | None:
        """The site's ``analysis.bootstrap_of(db, info, sid, slice, value, metric)``, without its caches."""
        agg = intervals.aggregator(self.task)
        if agg is None or not self.reproduces(sid):
            return None
        chosen = self.items(sid)
        if key:
            labels = self.labels(key)
            chosen = [i for i in chosen if labels.get(i.item_id) == value]
        where = self.restriction(metric)
        chosen = restricted(chosen, where, {k: self.labels(k) for k, _ in where})
        if len(chosen) < intervals.min_interval_items():
            return None
        names = tuple(
            str(m["name"]) for m in self.metrics() if self.restriction(str(m["name"])) == where
        ) or (metric,)
        return stats.bootstrap(
            chosen,
            agg.aggregate,
            names,
            n_resamples=intervals.N_RESAMPLES,
            seed=intervals.SEED,
            linear=agg.linear,
        )

    def reason(
        self, sid: str, is_reference: bool, metric: str, key: str, value: str, per_item: bool
    ) -> str:
        """Why one side has no bootstrap (the board's ``uncertainty`` reason), '' when it has one."""
        if is_reference:
            return NO_ITEMS_REPORTED
        if key and not per_item:
            return ANSWER_LABEL_SLICE
        boot = self.bootstrap(sid, metric, key, value)
        if boot is not None:
            return "" if metric in boot.metrics else NO_METRIC
        if intervals.aggregator(self.task) is None:
            return NO_AGGREGATOR
        items = self.items(sid)
        if not items:
            return NO_ITEMS_REPORTED
        if not self.reproduces(sid):
            return NOT_REPRODUCED
        if key:
            labels = self.labels(key)
            items = [i for i in items if labels.get(i.item_id) == value]
        where = self.restriction(metric)
        return too_few_items(len(restricted(items, where, {k: self.labels(k) for k, _ in where})))


def _side(row: Mapping[str, Any], value: float | None) -> Side:
    return Side(
        str(row["submission_id"]),
        str(row.get("model") or ""),
        str(row.get("team") or ""),
        bool(row["is_reference"]),
        value,
    )


def _figures(
    db: Path, task: str, split: str, sids: list[str], metric: str, key: str, value: str
) -> list[float | None]:
    """Each submission's figure of ``metric`` on the slice as the board shows it (the ``board`` view, as the site reads it)."""
    frame = rules.board_figures(db, task, split, sids, metric)
    on_board = set(frame["submission_id"].to_list())
    for sid in sids:
        if sid not in on_board:
            raise CompareError(
                "board",
                f"submission {sid!r} is not on the {task} / {split} board (another fingerprint than the board's, or a row it does not show)",
            )
    found = {
        r["submission_id"]: r["value"]
        for r in frame.iter_rows(named=True)
        if r["slice"] == key and r["slice_value"] == value
    }
    if any(sid not in found for sid in sids):
        raise CompareError(
            "slice",
            f"the board shows no {metric} for {key} = {value[:100]!r} (a hidden split shows no slice of fewer than {rules.MIN_HIDDEN_SLICE_ITEMS} items)",
        )
    return [None if found[s] is None or math.isnan(found[s]) else float(found[s]) for s in sids]


def compare(
    a: str,
    b: str,
    *,
    metric: str | None = None,
    slice: str | None = None,
    db: str | Path = DEFAULT_DB,
    permutation: bool = True,
) -> Comparison:
    """Compare submission ``a`` with ``b`` (A − B) on ``metric`` (default: the task's primary) as the site's Compare page does.

    ``slice``: ``"DIM=VALUE"`` for one slice value (default: the whole split). ``permutation``: also run the approximate
    randomisation test (1000 re-aggregations of both sides: seconds on the larger tasks). Raises FileNotFoundError
    (no store) and :class:`CompareError` (unknown or invisible submission, another task/split/fingerprint, unknown
    metric or slice). Where no paired test can be had (a reported row, too few items, a slice the metric does not
    cover, different items) the comparison says why in ``reasons`` and its ``verdict`` is "not tested".
    """
    db = Path(db)
    if not db.is_file():
        raise FileNotFoundError(f"no database at {db}")
    rows = []
    for sid in (a, b):
        if not isinstance(sid, str) or not 0 < len(sid) <= 200:
            raise CompareError("unknown", f"no submission {str(sid)[:200]!r}")
        try:
            rows.append(rules.submission(db, sid))
        except LookupError:
            raise CompareError("unknown", f"no submission {sid!r} in {db}") from None
    ra, rb = rows
    for what in ("task", "split", "fingerprint"):
        if ra[what] != rb[what]:
            raise CompareError(
                "different",
                f"A and B are on different {what}s ({ra[what]!r} and {rb[what]!r}): a paired comparison needs the same board and items",
            )
    task, split, fingerprint = str(ra["task"]), str(ra["split"]), str(ra["fingerprint"])
    with reader(db) as con:
        found = con.execute(
            "SELECT spec_json, primary_metric FROM tasks WHERE task = ? AND split = ? AND fingerprint = ?",
            [task, split, fingerprint],
        ).fetchone()
    if found is None:
        raise CompareError(
            "different",
            f"the store has no task {task!r} / {split!r} under fingerprint {fingerprint[:12]}",
        )
    board = _Board(db, task, split, fingerprint, json.loads(found[0]), bool(ra["hidden_split"]))
    metrics = {str(m["name"]): m for m in board.metrics()}
    name = metric or str(found[1] or board.spec.get("primary") or "")
    if name not in metrics:
        raise CompareError(
            "metric", f"{task} has no metric {name[:100]!r} (its metrics: {', '.join(metrics)})"
        )
    key, value, per_item = "", "", True
    if slice:
        dim, sep, value = slice.partition("=")
        entry = board.slice_entry(dim.strip())
        if not sep or entry is None:
            names = ", ".join(
                str(s.get("name")) for s in board.spec.get("slices") or [] if isinstance(s, dict)
            )
            raise CompareError(
                "slice",
                f"{task} has no slice {dim.strip()[:100]!r} (give DIM=VALUE; its slices: {names or 'none'})",
            )
        value = value.strip()
        key, per_item = str(entry["name"]), entry.get("kind", "label") == "label"
    fa, fb = _figures(db, task, split, [a, b], name, key, value)
    info = metrics[name]
    common = dict(
        task=task,
        split=split,
        fingerprint=fingerprint,
        metric=name,
        higher_is_better=bool(info.get("higher_is_better", True)),
        percent=bool(info.get("percent", True)),
        slice=key,
        slice_value=value,
        a=_side(ra, fa),
        b=_side(rb, fb),
        delta=None if fa is None or fb is None else fa - fb,
        hidden_split=board.hidden,
    )
    if a == b:
        return Comparison(
            **common,  # type: ignore[arg-type]
            n_items=None,
            ci_low=None,
            ci_high=None,
            p_value=None,
            p_permutation=None,
            verdict="not tested",
            reasons=(SAME_SUBMISSION,),
        )
    if not board.covers(name, key, value):
        where = " and ".join(f"{k} = {v}" for k, v in board.restriction(name))
        why = f"{name} counts only the items with {where}; {key} = {value} holds none of them, so a figure there compares nothing"
        return Comparison(
            **common,  # type: ignore[arg-type]
            n_items=None,
            ci_low=None,
            ci_high=None,
            p_value=None,
            p_permutation=None,
            verdict="not tested",
            reasons=(why,),
        )
    boot_a = board.bootstrap(a, name, key, value) if per_item else None
    boot_b = board.bootstrap(b, name, key, value) if per_item else None
    result = paired(boot_a, boot_b, name)
    reasons: tuple[str, ...] = ()
    if result is None:
        found_reasons = [
            board.reason(sid, bool(r["is_reference"]), name, key, value, per_item)
            for sid, r in ((a, ra), (b, rb))
        ]
        reasons = tuple(dict.fromkeys(r for r in found_reasons if r)) or (DIFFERENT_ITEMS,)
    p_perm = None
    if permutation and per_item:
        items_a, items_b = board.items(a), board.items(b)
        if key:  # a slice: its items only, and only where the paired bootstrap could be had (never a test over a few items)
            labels = board.labels(key)
            items_a = (
                [i for i in items_a if labels.get(i.item_id) == value] if result is not None else []
            )
            items_b = (
                [i for i in items_b if labels.get(i.item_id) == value] if result is not None else []
            )
        p_perm = permutation_p(task, items_a, items_b, name)
    verdict = "not tested"
    if result is not None and math.isfinite(result.low) and math.isfinite(result.high):
        better_a = (result.low > 0) == bool(
            info.get("higher_is_better", True)
        )  # separated: the interval is on one side of 0
        verdict = "tied" if result.tied else ("A better" if better_a else "B better")
    return Comparison(
        **common,  # type: ignore[arg-type]
        n_items=result.n_items if result else None,
        ci_low=result.low if result else None,
        ci_high=result.high if result else None,
        p_value=result.p_value if result else None,
        p_permutation=p_perm,
        verdict=verdict,
        reasons=reasons,
    )
