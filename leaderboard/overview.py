"""Every board's ranks at once: what Home's models × tasks overview, the model search and the model page show.

Ranks are the boards' own (``procbench.leaderboard.boardview.build`` with the primary metric, no filters), so a
model page never disagrees with the board it links to.  Computed once per store version
(``procbench.leaderboard.cache.memo``: on the caller's thread, so building every board never holds up other
pages' store reads); no bootstrap is run here.
"""

from __future__ import annotations

import bisect
import functools
import json
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from procbench.leaderboard import boardview, cache, sitedata
from procbench.leaderboard.model import TaskInfo

SCHEMA: dict[str, Any] = {  # polars dtypes (classes and instances)
    "benchmark": pl.String,
    "task": pl.String,
    "split": pl.String,
    "board": pl.String,
    "submission_id": pl.String,
    "model": pl.String,
    "team": pl.String,
    "kind": pl.String,
    "rank": pl.Int64,
    "ranked": pl.Int64,
    "value": pl.Float64,
    "shown": pl.Float64,
    "metric": pl.String,
    "unit": pl.String,
    "created_at": pl.Datetime("us"),
    "position": pl.Int64,
    "coverage": pl.String,
}


def board_label(task: str, split: str) -> str:
    return f"{task} · {split}"


def ranks(db: Path) -> pl.DataFrame:
    """One row per visible row of every current board: its rank (None: listed, not ranked) and primary value."""
    return cache.memo(db, "overview.ranks", (), lambda: _with_cells(db).drop(CELLS))


CELLS = (
    "_cell",
    "_cell_named",
)  # each row's grid cell (overview.cell), without and with its board named


def _with_cells(db: Path) -> pl.DataFrame:
    """:func:`ranks` with each row's grid cells, formatted when its board is built (not per grid: issue #31)."""
    return cache.memo(db, "overview.ranks_cells", (), lambda: _ranks(db))


def _ranks(db: Path) -> pl.DataFrame:
    """Every board's rows, each board kept under its own version (``sitedata.board_versions``, migration 010): after a
    write, only the boards it touched are built again (issue #31: building all of them cost seconds per write at 10 000
    submissions, and grew with the store)."""
    versions = sitedata.board_versions(db)
    frames = []
    for info, version in _boards_versions(db):
        if (
            versions is None
        ):  # a store older than migration 010 (read-only): built per store version, as before
            frames.append(_board_ranks(db, info))
            continue
        frames.append(
            cache.memo_versioned(
                db,
                "overview.board_ranks",
                (info.task, info.split),
                version,
                lambda info=info: _board_ranks(db, info),  # type: ignore[misc]
            )
        )
    return (
        pl.concat(frames)
        if frames
        else pl.DataFrame(schema={**SCHEMA, **dict.fromkeys(CELLS, pl.String)})
    )


def _boards_versions(db: Path) -> list[tuple[TaskInfo, Hashable]]:
    """Every current board with the version its ranks are kept under (its task row and ``sitedata.board_versions``)."""
    versions = sitedata.board_versions(db) or {}
    out: list[tuple[TaskInfo, Hashable]] = []
    for task_row in sitedata.tasks(db).iter_rows(named=True):
        info = TaskInfo.from_row(task_row)
        out.append(
            (info, (tuple(sorted(task_row.items())), versions.get((info.task, info.split), ())))
        )
    return out


def prefetch_home(db: Path) -> None:
    """Home's own reads and those of every board :func:`ranks` will build (its version changed: the boards a write
    touched; every board in a fresh process), in one attachment of the store (issue #31: one each, ~0.03-0.05 s at
    100 000 submissions, were a tenth of Home's first view after a write)."""

    def stale() -> cache.Calls:
        if cache.memo_kept(db, "overview.ranks_cells", ()):
            return []  # nothing is built
        calls: cache.Calls = []
        old_store = sitedata.board_versions(db) is None
        for info, version in _boards_versions(db):
            if old_store or not cache.versioned_kept(
                db, "overview.board_ranks", (info.task, info.split), version
            ):
                calls += sitedata.board_reads(info.task, info.split, "", "")
        return calls

    sitedata.prefetch_home(db, stale)


def _board_ranks(db: Path, info: TaskInfo) -> pl.DataFrame:
    """One board's rows as :func:`ranks` lists them (column by column: a board of 11 000 rows is rebuilt after every
    write to it, issue #31)."""
    view = boardview.build(db, info, interval_rows=0, display=False)
    export = view.export
    if export.is_empty():
        return pl.DataFrame(schema={**SCHEMA, **dict.fromkeys(CELLS, pl.String)})
    metric = info.primary_metric
    n = export.height
    values = export[metric.name].to_list() if metric.name in export.columns else [None] * n
    shown = [metric.shown(v) for v in values]
    rank = export["rank"].to_list()
    ranked = n - export["rank"].null_count()
    unit = "%" if metric.percent else "own unit"
    frame = pl.DataFrame(
        {
            "benchmark": [info.benchmark] * n,
            "task": [info.task] * n,
            "split": [info.split] * n,
            "board": [board_label(info.task, info.split)] * n,
            "submission_id": export["submission_id"],
            "model": export["model"],
            "team": export["team"],
            "kind": export["kind"],
            "rank": rank,
            "ranked": [ranked] * n,
            "value": values,
            "shown": shown,
            "metric": [metric.display] * n,
            "unit": [unit] * n,
            "created_at": export["created_at"],
            "position": range(
                n
            ),  # the row's place on the board (0: the board's first row, its leader)
            "coverage": export[
                "coverage"
            ],  # '5 / 6 · partial' (issue #33: a partial row is listed, unranked)
        },
        schema=SCHEMA,
    )
    plain = [
        cell({"rank": r, "ranked": ranked, "shown": v, "unit": unit, "task": info.task})
        for r, v in zip(rank, shown)
    ]
    named = [text + f" on {info.task}" for text in plain]
    return frame.with_columns(
        pl.Series(CELLS[0], plain, dtype=pl.String), pl.Series(CELLS[1], named, dtype=pl.String)
    )


def models(db: Path) -> list[str]:
    """Every model name on a current board, best-ranked first, then by name (kept per store version)."""
    return list(cache.memo(db, "overview.models", (), lambda: _models(db)))


def model_count(db: Path) -> int:
    """How many model names :func:`models` lists (kept per store version: no copy of a large store's names)."""
    return int(cache.memo(db, "overview.model_count", (), lambda: len(models(db))))


def _models(db: Path) -> list[str]:
    frame = ranks(db)
    if frame.is_empty():
        return []
    best = (
        frame.group_by("model")
        .agg(pl.col("rank").min().alias("best"))
        .sort(["best", "model"], nulls_last=True)
    )
    return best["model"].to_list()


# The most model names the model page puts in its selector.  Every option is sent to the browser and drawn there:
# 100 000 of them cost 3.3 s of a warm view and 5.4 s of browser CPU, against ~1.1 s on a small store.  A store with
# more models than this gets a server-side search instead; a thousand names still scroll and filter instantly.
MODEL_CHOICES_CAP = 1000


def model_choices(
    names: Sequence[str], query: str, asked: str | None, cap: int
) -> tuple[list[str], int]:
    """The model page's selector options: the first ``cap`` of ``names`` (in their order: best-ranked first) whose
    name contains ``query`` (case-insensitive, trimmed; empty: every name), and how many of ``names`` match.

    ``asked`` (the address's ``?model=``) is always an option where it is one of ``names``, in its place in
    ``names``'s order, even if it does not match or is ranked below the first ``cap``: a shared link keeps working
    and the page's own choice stays selected while the user searches.  It takes the last match's place, so there
    are never more than ``cap`` options.
    """
    if cap < 1:
        raise ValueError(f"cap must be at least 1, got {cap}")
    needle = query.strip().lower()
    if not needle:  # no test per name: a warm, unsearched view of a large store stays cheap
        picked = list(range(min(cap, len(names))))
        matched = len(names)
    else:
        picked = []
        matched = 0
        for i, name in enumerate(names):
            if needle in name.lower():
                matched += 1
                if len(picked) < cap:
                    picked.append(i)
    chosen = [names[i] for i in picked]
    if asked is None or asked in chosen or asked not in names:  # not a model: the page says so
        return chosen, matched
    if len(picked) == cap:
        picked.pop()
    bisect.insort(picked, names.index(asked))  # in its place in names's order (best-ranked first)
    return [names[i] for i in picked], matched


def model_choices_of(db: Path, query: str, asked: str | None) -> tuple[list[str], int]:
    """:func:`model_choices` over :func:`models` with :data:`MODEL_CHOICES_CAP`, kept per store version and (query,
    asked): a warm view of a large store scans no names (each scan is every model name)."""
    cap = MODEL_CHOICES_CAP  # read per call: a test sets it small
    chosen, matched = cache.memo(
        db,
        "overview.model_choices",
        (query.strip().lower(), asked, cap),
        lambda: model_choices(models(db), query, asked, cap),
    )
    return list(chosen), matched


def benchmarks(db: Path) -> list[str]:
    """Every benchmark with a current board, in the order of its first board (task, split) (kept per store version)."""
    return list(cache.memo(db, "overview.benchmarks", (), lambda: _benchmarks(db)))


def _benchmarks(db: Path) -> list[str]:
    return list(dict.fromkeys(_boards(db).sort(["task", "split"])["benchmark"].to_list()))


def _boards(db: Path) -> pl.DataFrame:
    """One row per board with a row (benchmark, task, split, board, metric), in :func:`ranks`'s order, kept per store
    version: what the grid's headers and help ask of every benchmark, without scanning every row once per benchmark
    (issue #31: that was 0.05 s of Home's first view after a write at 100 000 submissions)."""
    return cache.memo(
        db,
        "overview.boards",
        (),
        # each board's first row (its place 0 on the board), where a unique() over every row's label cost 0.02 s at 100k
        lambda: _with_cells(db)
        .filter(pl.col("position") == 0)
        .select("benchmark", "task", "split", "board", "metric"),
    )


def boards_of(db: Path, benchmark: str) -> list[str]:
    """The board labels (``task · split``) of one benchmark, in task order (kept per store version)."""
    return list(
        cache.memo(db, "overview.boards_of", (benchmark,), lambda: _boards_of(db, benchmark))
    )


def _boards_of(db: Path, benchmark: str) -> list[str]:
    frame = _boards(db).filter(pl.col("benchmark") == benchmark).sort(["task", "split"])
    return list(dict.fromkeys(frame["board"].to_list()))


def matrix(db: Path, query: str = "", benchmark: str = "") -> pl.DataFrame:
    """:func:`_matrix`, kept per store version and (query, benchmark): a warm Home computes no grid (issue #31: a
    100 000-row store's grid took seconds to compute on every view)."""
    return cache.memo(
        db, "overview.matrix", (query, benchmark), lambda: _matrix(db, query, benchmark)
    )


def _matrix(db: Path, query: str = "", benchmark: str = "") -> pl.DataFrame:
    """Models × boards: each cell the model's best rank there, of how many ranked rows, with its value (empty where it has no ranked row).

    Without ``benchmark``, one column per benchmark: the model's best rank on any of that benchmark's
    boards (so the grid fits a laptop's width however many boards a benchmark has); with it, one
    column per board of that benchmark (``task · split``).  ``query`` keeps models whose name contains
    it (case-insensitive).  Columns: ``Model``, ``Page`` (its model page), ``Boards`` (how many boards
    it is on, of every benchmark), then the rank columns.
    """
    frame = _with_cells(db)
    if query.strip():
        frame = frame.filter(
            pl.col("model").str.to_lowercase().str.contains(query.strip().lower(), literal=True)
        )
    if frame.is_empty():
        return pl.DataFrame(schema={"Model": pl.String, "Page": pl.String, "Boards": pl.Int64})
    column = "benchmark" if not benchmark else "board"
    chosen = frame if not benchmark else frame.filter(pl.col("benchmark") == benchmark)
    is_ranked = pl.col("rank").is_not_null()
    with_cells = set(
        chosen.filter(is_ranked)[column].unique().to_list()
    )  # a column is shown where some model has a ranked row in it
    columns = [
        c
        for c in chosen.select("task", "split", column)
        .unique()
        .sort(["task", "split"])[column]
        .unique(maintain_order=True)
        .to_list()
        if c in with_cells
    ]
    # issue #30: each cell the model's best rank there *of how many*, with its value (a board's only row says so, not "#1")
    several = {b for b in columns if column == "benchmark" and len(boards_of(db, b)) > 1}
    # issue #31: one pass over the rows, grouped by model, gives each model's boards, its best rank (the models' order,
    # as models() sorts them) and each column's cell: the first ranked row of the column in the order of the rows'
    # (rank, most ranked rows, task, split), sorted once (a group keeps the order of its rows); where the grid took
    # a count, a best-row aggregation, a pivot and two joins over every row, then sorted them all by models()'s order
    ordered = frame.sort(
        ["rank", "ranked", "task", "split"],
        descending=[False, True, False, False],
        nulls_last=True,
    )
    wide = ordered.group_by("model").agg(
        pl.col("board").n_unique().alias("Boards"),
        pl.col("rank").min().alias("_best"),
        (pl.col("benchmark") == benchmark).any().alias("_on"),
        *[
            pl.col(CELLS[1] if c in several else CELLS[0])
            .filter((pl.col(column) == c) & is_ranked)
            .first()
            .alias(c)
            for c in columns
        ],
    )
    if benchmark:  # the models with a row (ranked or not) on one of its boards
        wide = wide.filter(pl.col("_on"))
    wide = wide.sort(["_best", "model"], nulls_last=True)
    wide = wide.with_columns(_pages(wide["model"]))
    return wide.select(pl.col("model").alias("Model"), "Page", "Boards", *columns)


_UNQUOTED = r"^[A-Za-z0-9_.~-]*$"  # what urllib.parse.quote(safe='') leaves as it is


def _pages(names: pl.Series) -> pl.Series:
    """Each model page's address: names quote() would leave alone are joined as they are, the others quoted one by one."""
    plain = names.str.contains(_UNQUOTED)
    quoted = {m: _page(m) for m in names.filter(~plain).to_list()}
    return (
        pl.select(
            pl.when(plain)
            .then(pl.lit("model?model=") + names)
            .otherwise(names.replace_strict(quoted, default=None, return_dtype=pl.String))
        )
        .to_series()
        .alias("Page")
    )


@functools.lru_cache(maxsize=1 << 17)
def _page(model: str) -> str:
    """A model page's address (kept: a grid built again after a write quotes only its new names; issue #31)."""
    return f"model?model={quote(model, safe='')}"


def cell(row: dict[str, Any], name_board: bool = False) -> str:
    """A model's place on a board as Home's grid shows it: '#2 of 2 · 41.79', 'only row · 41.79' ('on openpi-head' where named)."""
    place = "only row" if row["ranked"] == 1 else f"#{row['rank']} of {row['ranked']}"
    value = (
        f" · {row['shown']:.2f}{' %' if row['unit'] == '%' else ''}"
        if row["shown"] is not None
        else ""
    )
    return place + value + (f" on {row['task']}" if name_board else "")


def metrics_of(db: Path, column: str, benchmark: str = "") -> list[str]:
    """The ranking (primary) metrics behind one grid column: a benchmark's boards' (every benchmark) or one board's
    (kept per store version)."""
    return list(
        cache.memo(
            db,
            "overview.metrics_of",
            (column, benchmark),
            lambda: _metrics_of(db, column, benchmark),
        )
    )


def _metrics_of(db: Path, column: str, benchmark: str = "") -> list[str]:
    # a board has one ranking metric: its first row says it, in the order the board's rows come in ranks()
    frame = _boards(db).filter(pl.col("board" if benchmark else "benchmark") == column)
    return list(dict.fromkeys(frame["metric"].to_list()))


def _spec_value(value: object) -> str:
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def variants(infos: Sequence[TaskInfo]) -> list[tuple[str, str, str]]:
    """(variant, the task it extends, what it changes) for every task on this site that extends another one here.

    A task that ``extends`` another scores the same data differently (OpenPI's ``openpi-head`` is ``openpi`` with
    ``dedup = true``); without saying so, two boards of one benchmark would differ by an unexplained suffix.
    """
    by_task = {i.task: i for i in infos}
    out = []
    for child in by_task.values():
        parent = by_task.get(child.parent)
        if parent is None or parent.task == child.task:
            continue
        changed = [
            f"{k} = {_spec_value(v)}" for k, v in child.params.items() if parent.params.get(k) != v
        ]
        out.append(
            (
                child.task,
                parent.task,
                (f"with {', '.join(changed)}" if changed else "with its own settings")
                + f" — {child.title}",
            )
        )
    return out


def variant_notes(infos: Sequence[TaskInfo], escape: Callable[[str], str]) -> dict[str, str]:
    """Task -> one markdown line relating it to its variants on this site (both ways): what a board's caption says.

    ``escape`` (``procbench.leaderboard.ui.escape``) makes the spec's settings and title safe inside markdown, as Home shows them.
    """
    notes: dict[str, list[str]] = {}
    for child, parent, spelled in variants(infos):
        how = escape(spelled)
        notes.setdefault(child, []).append(f"`{child}` is `{parent}` scored {how}")
        notes.setdefault(parent, []).append(f"`{child}` scores the same data {how}")
    return {task: "; ".join(lines) for task, lines in notes.items()}


def of_model(db: Path, model: str) -> pl.DataFrame:
    """Every row of one model on every current board, with its rank and how many rows are ranked there."""
    return (
        ranks(db).filter(pl.col("model") == model).sort(["task", "split", "rank"], nulls_last=True)
    )
