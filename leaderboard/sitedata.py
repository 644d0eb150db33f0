"""What the pages read, cached per store version (:mod:`procbench.leaderboard.cache`).

The board queries themselves live in :mod:`procbench.leaderboard.queries` (one rule for what the public may
see); this module wraps them for the site and adds the few reads only the site's pages need: the
model card of every visible submission, every visible row of every current board (model pages, the
model search, Home's overview) and the history of a board.  Columns a store does not have yet (an
older schema) read as empty, so the site runs on any store the migrations can read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from procbench.leaderboard import cache, queries
from procbench.submissions import ledger as ledgers
from procbench.submissions.store import reader

# model-card and provenance columns the site shows when the store has them (migrations 002, 004)
CARD = (
    "size_class",
    "weights",
    "method_family",
    "paper_url",
    "code_url",
    "description",
    "filename",
    "contamination",
    "contamination_source",
    "run_by",
    "judge_prompt_digest",  # migration 009 (issue #34)
)
TASK_EXTRA = ("data_kind", "gold_items")

tasks = cache.cached(queries.tasks)
task_row = cache.cached(queries.task_row)
home = cache.cached(queries.home)
home_counts = cache.cached(queries.home_counts)  # per board: what Home counts (migration 010)
board_versions = cache.cached(
    queries.board_versions
)  # per board: what its rows depend on (migration 010)
board = cache.cached(queries.board)
slice_values = cache.cached(queries.slice_values)
submission = cache.cached(queries.submission)
aggregates = cache.cached(queries.aggregates)
status_history = cache.cached(queries.status_history)
submissions_of = cache.cached(queries.submissions_of)
_slice_table = cache.cached(queries.slice_table)
_figures = cache.cached(queries.figures)
board_provenance = cache.cached(
    queries.board_provenance
)  # what a board was scored on; None without the board
all_provenance = cache.cached(
    queries.all_provenance
)  # (task, split) -> the same, every current board
ledger = cache.cached(
    ledgers.ledger
)  # the public submission ledger (issue #34): counts, dates and reasons, no figures
pending = cache.cached(
    queries.pending
)  # rows being computed: marking and unmarking them are writes, so a new store version


def prefetch_home(db: Path, then: Callable[[], cache.Calls] | None = None) -> None:
    """Home's own reads (besides each board's rows) in one attachment of the store: what a first view after a write reads;
    with ``then``'s (``overview.prefetch_home``: the reads of the boards to build again) in the same attachment."""
    cache.prefetch(
        db,
        [
            (tasks, ()),
            (pending, (None, None)),
            (board_versions, ()),
            (home_counts, ()),
            (all_provenance, ()),
        ],
        then,
    )


def board_reads(task: str, split: str, slice_name: str, slice_value: str) -> cache.Calls:
    """The reads one board's view is built from (``boardview.build``): its rows, cards (with coverage) and provenance."""
    return [
        (board, (task, split, slice_name, slice_value)),
        (cards, (task, split)),
        (board_provenance, (task, split)),
    ]


def prefetch_board(db: Path, task: str, split: str, slice_name: str, slice_value: str) -> None:
    """:func:`board_reads` in one attachment of the store."""
    cache.prefetch(db, board_reads(task, split, slice_name, slice_value))


def slice_table(
    db: Path, task: str, split: str, slice_name: str, submission_ids: Sequence[str] | None = None
) -> pl.DataFrame:
    return _slice_table(
        db, task, split, slice_name, tuple(submission_ids) if submission_ids is not None else None
    )


def figures(
    db: Path, task: str, split: str, submission_ids: Sequence[str], metric: str
) -> pl.DataFrame:
    return _figures(db, task, split, tuple(submission_ids), metric)


def _columns(con: Any, table: str) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()
    }


def _present(con: Any, table: str, wanted: Sequence[str], alias: str, default: str = "''") -> str:
    have = _columns(con, table)
    return ", ".join(f"{alias}.{c}" if c in have else f"{default} AS {c}" for c in wanted)


@cache.cached
def cards(db: Path, task: str, split: str) -> pl.DataFrame:
    """One row per submission of a task and split: its model card columns (empty strings where the store has none)
    and its coverage (``n_answered``: NULL where the store does not know, before migration 007; ``n_items``: the
    split's items).  What a board's rows are shown with (``boardview.build``), in one read (issue #31)."""
    with reader(db) as con:
        if queries.has_migration(db, 9):  # every column is there (009): no need to look them up
            columns = ", ".join(f"s.{c}" for c in (*CARD, "n_answered"))
        else:
            columns = (
                _present(con, "submissions", CARD, "s")
                + ", "
                + _present(con, "submissions", ("n_answered",), "s", default="NULL")
            )
        return pl.from_arrow(
            con.sql(
                f"SELECT s.submission_id, s.metadata_json, s.is_reference, {columns}, s.n_items "
                "FROM submissions s WHERE s.task = ? AND s.split = ?",
                params=[task, split],
            ).to_arrow_table()
        )  # type: ignore[return-value]


@cache.cached
def coverage(db: Path, task: str, split: str) -> dict[str, tuple[int | None, int]]:
    """Submission id -> (items it answered, items of the split); answered is None where the store does not know (before migration 007)."""
    with reader(db) as con:
        answered = _present(con, "submissions", ("n_answered",), "s", default="NULL")
        rows = con.execute(
            f"SELECT s.submission_id, {answered}, s.n_items FROM submissions s WHERE s.task = ? AND s.split = ?",
            [task, split],
        ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


@cache.cached
def card_of(db: Path, submission_id: str) -> dict[str, Any]:
    """One submission's model card columns (as :func:`cards`)."""
    with reader(db) as con:
        columns = _present(con, "submissions", CARD, "s")
        row = con.execute(
            f"SELECT s.submission_id, s.metadata_json, s.is_reference, {columns} FROM submissions s WHERE s.submission_id = ?",
            [submission_id],
        ).fetchone()
    names = ("submission_id", "metadata_json", "is_reference", *CARD)
    return dict(zip(names, row)) if row else {}


@cache.cached
def task_extras(db: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(task, split) -> provenance columns of the current fingerprint (data kind, gold items), where the store has them."""
    with reader(db) as con:
        columns = _present(con, "current_tasks", TASK_EXTRA, "t", default="NULL")
        rows = con.execute(f"SELECT t.task, t.split, {columns} FROM current_tasks t").fetchall()
    return {(r[0], r[1]): dict(zip(TASK_EXTRA, r[2:])) for r in rows}


@cache.cached
def primary_rows(db: Path) -> pl.DataFrame:
    """Every visible row of every current board on its primary metric (whole split), with its card columns.

    What the model pages, the model search and Home's overview are built from.
    """
    with reader(db) as con:
        columns = _present(con, "submissions", CARD, "s")
        return pl.from_arrow(
            con.sql(
                f"""
                SELECT b.task, b.split, b.submission_id, b.model, b.team, b.is_reference, b.value, b.n_items, b.created_at,
                       b.metadata_json, {columns}
                FROM board b
                JOIN current_tasks t ON t.task = b.task AND t.split = b.split
                JOIN submissions s ON s.submission_id = b.submission_id
                WHERE b.slice = '' AND b.metric = t.primary_metric
                """
            ).to_arrow_table()
        )  # type: ignore[return-value]
