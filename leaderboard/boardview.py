"""The task board as a table: filter, sort, rank, intervals and the leader's tie group.

Pure of Streamlit so the board page, the downloads page and the benchmark all build the same view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from leaderboard import analysis, metadata, queries
from leaderboard.model import MetricInfo, SliceInfo, TaskInfo
from runners.stats import PairedResult
from submissions.judging import SELF, judged_by


@dataclass(frozen=True)
class BoardFilters:
    """Keep rows whose facet is among the chosen values; an empty tuple keeps everything."""

    kinds: tuple[str, ...] = ()
    access: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoardView:
    table: pl.DataFrame  # what the page shows (display units, one column per shown metric)
    export: pl.DataFrame  # the same rows with raw values, intervals and ids (downloads)
    sort_metric: MetricInfo
    leader: str | None = None
    tied: dict[str, PairedResult] = field(default_factory=dict)
    n_rows: int = 0
    interval_rows: int = 0
    facets: dict[str, list[str]] = field(default_factory=dict)  # every value of each facet before filtering


def _with_facets(frame: pl.DataFrame) -> pl.DataFrame:
    facets = [
        metadata.facets(m, r, weights=w or "", method_family=f or "")
        for m, r, w, f in zip(frame["metadata_json"], frame["is_reference"], frame["weights"], frame["method_family"])
    ]
    return frame.with_columns(
        pl.Series("kind", [f.kind for f in facets], dtype=pl.String),
        pl.Series("access", [f.access for f in facets], dtype=pl.String),
        pl.Series("family", [f.family for f in facets], dtype=pl.String),
        pl.Series("judge", [judged_by(metadata.parse(m)) for m in frame["metadata_json"]], dtype=pl.String),
    )


def _filtered(frame: pl.DataFrame, filters: BoardFilters) -> pl.DataFrame:
    for column, chosen in (("kind", filters.kinds), ("access", filters.access), ("family", filters.families), ("team", filters.teams)):
        if chosen:
            frame = frame.filter(pl.col(column).is_in(list(chosen)))
    return frame


def _fmt_interval(metric: MetricInfo, low: float, high: float) -> str:
    return f"{metric.shown(low):.2f} – {metric.shown(high):.2f}"


def _group_ranks(self_judged: Sequence[bool]) -> list[int]:
    """1, 2, ... within each rank group of the sorted rows (board-judged first, then self-judged)."""
    ranks, seen = [], {False: 0, True: 0}
    for flag in self_judged:
        seen[bool(flag)] += 1
        ranks.append(seen[bool(flag)])
    return ranks


def build(
    db: Path,
    info: TaskInfo,
    *,
    sl: SliceInfo | None = None,
    slice_value: str = "",
    groups: Sequence[str] = (),
    filters: BoardFilters = BoardFilters(),
    sort_metric: str = "",
    interval_rows: int = 10,
) -> BoardView:
    """The board of one task and split (or one slice value), ranked by ``sort_metric`` (default: primary)."""
    metric = info.metric(sort_metric or info.primary)
    wide = queries.board(db, info.task, info.split, sl.name if sl else "", slice_value if sl else "")
    if wide.is_empty():
        return BoardView(pl.DataFrame(), pl.DataFrame(), metric)
    wide = _with_facets(wide)
    facets = {c: sorted(set(wide[c].to_list())) for c in ("kind", "access", "family", "team")}
    wide = _filtered(wide, filters)
    if metric.name not in wide.columns:
        wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(metric.name))
    # Ranking by the primary metric uses the spec's tie-breaks (rank_by), e.g. PM-LLM's (Score, total, C1..C5).
    keys = [metric] + ([info.metric(name) for name in info.rank_by if name in wide.columns] if metric.name == info.primary else [])
    # issue #17: rows whose verdicts the submitter supplied (judge "self") are ranked apart, after the
    # rows the board's own judge graded (or that need no judge): their own rank group, numbered from 1.
    wide = wide.with_columns((pl.col("judge") == SELF).alias("self_judged"))
    wide = wide.sort(["self_judged"] + [k.name for k in keys] + ["created_at"], descending=[False] + [k.higher_is_better for k in keys] + [False], nulls_last=True)
    ids = wide["submission_id"].to_list()
    ranks = _group_ranks(wide["self_judged"].to_list())
    with_items = [sid for sid, ref in zip(ids, wide["is_reference"]) if not ref]
    bootstrapped = with_items[: max(0, interval_rows)]
    intervals = {sid: analysis.interval(analysis.bootstrap_of(db, info, sid, sl, slice_value), metric.name) for sid in bootstrapped}
    group = dict(zip(ids, wide["self_judged"]))
    contenders = [sid for sid in bootstrapped if group[sid] == group[bootstrapped[0]]]  # a leader's tie group never mixes judges
    leader, tied = analysis.tie_group(db, info, contenders, metric.name, sl, slice_value) if contenders else (None, {})
    judged = any(wide["judge"])
    judge_text = ["self-judged" if j == SELF else (f"judge: {j}" if j else "") for j in wide["judge"]]

    shown = [m for m in info.metrics if (not groups or m.group in groups) and m.name in wide.columns and m.name != metric.name]
    low = [intervals.get(sid).low if intervals.get(sid) else None for sid in ids]  # type: ignore[union-attr]
    high = [intervals.get(sid).high if intervals.get(sid) else None for sid in ids]  # type: ignore[union-attr]
    p_leader = [tied[sid].p_value if sid in tied else None for sid in ids]
    tie_mark = ["leader" if sid == leader else ("tied" if sid in tied else "") for sid in ids]
    ci_text = [_fmt_interval(metric, lo, hi) if lo is not None and hi is not None else "" for lo, hi in zip(low, high)]
    items = [n if not ref else None for n, ref in zip(wide["n_items"], wide["is_reference"])]

    table = pl.DataFrame(
        {
            "Rank": ranks,
            "Tie group": tie_mark,
            "Model": wide["model"],
            "Team": wide["team"],
            "Kind": wide["kind"],
            "Access": wide["access"],
            "Family": wide["family"],
            "Items": pl.Series(items, dtype=pl.Int64),
            metric.display: [metric.shown(v) for v in wide[metric.name]],
            f"{metric.display} 95% CI": ci_text,
            **({"Judged by": judge_text} if judged else {}),
            **{m.display: [m.shown(v) for v in wide[m.name]] for m in shown},
            "Submitted": wide["created_at"].dt.strftime("%Y-%m-%d"),
            "Details": [f"submission?id={sid}" for sid in ids],
        },
        strict=False,
    )
    export = pl.DataFrame(
        {
            "rank": ranks,
            "submission_id": ids,
            "model": wide["model"],
            "team": wide["team"],
            "kind": wide["kind"],
            "access": wide["access"],
            "family": wide["family"],
            **({"judge": wide["judge"]} if judged else {}),
            "n_items": pl.Series(items, dtype=pl.Int64),
            "task": [info.task] * len(ids),
            "split": [info.split] * len(ids),
            "slice": [sl.name if sl else ""] * len(ids),
            "slice_value": [slice_value if sl else ""] * len(ids),
            "sort_metric": [metric.name] * len(ids),
            "ci_low": pl.Series(low, dtype=pl.Float64),
            "ci_high": pl.Series(high, dtype=pl.Float64),
            "tie_group": tie_mark,
            "p_vs_leader": pl.Series(p_leader, dtype=pl.Float64),
            **{m.name: wide[m.name] for m in info.metrics if m.name in wide.columns},
            "created_at": wide["created_at"],
        },
        strict=False,
    )
    return BoardView(table, export, metric, leader, tied, len(ids), len(bootstrapped), facets)
