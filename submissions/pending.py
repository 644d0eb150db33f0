"""Rows on their way: what the board lists as "computing" until intake stores it (migration 005).

``procbench leaderboard --run-baselines`` serves the board first and then runs the baselines that need a
model; each is marked here before it starts and unmarked when its row is stored or it fails, so a
viewer never mistakes a board for complete.  A mark left by a killed process is stale once older than
``STALE_AFTER``: the site stops showing it and the next run replaces it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

from procbench.submissions.store import now, transaction, writer

STALE_AFTER = timedelta(
    hours=6
)  # far beyond the slowest baseline on a 2-core machine (about 4 minutes)


@dataclass(frozen=True)
class Pending:
    task: str
    split: str
    model: str
    what: str
    started_at: datetime | None = None


def mark(db_path: str | Path, rows: Iterable[Pending]) -> None:
    """List ``rows`` as being computed (replacing older marks of the same task, split and model), in one transaction."""
    with writer(db_path) as con, transaction(con):
        for row in rows:
            con.execute(
                "INSERT OR REPLACE INTO pending_rows (task, split, model, what, started_at) VALUES (?, ?, ?, ?, ?)",
                [row.task, row.split, row.model, row.what, now()],
            )


def unmark(db_path: str | Path, task: str, split: str, model: str) -> None:
    with writer(db_path) as con:
        con.execute(
            "DELETE FROM pending_rows WHERE task = ? AND split = ? AND model = ?",
            [task, split, model],
        )


def listed(
    con: duckdb.DuckDBPyConnection, task: str | None = None, split: str | None = None
) -> list[Pending]:
    """The fresh marks (of one board, or all), oldest first; none for a store without the table."""
    try:
        found = con.execute(
            "SELECT task, split, model, what, started_at FROM pending_rows WHERE started_at >= ? "
            "AND (? IS NULL OR task = ?) AND (? IS NULL OR split = ?) ORDER BY started_at, task, split, model",
            [now() - STALE_AFTER, task, task, split, split],
        ).fetchall()
    except duckdb.CatalogException:
        return []
    return [Pending(*row) for row in found]
