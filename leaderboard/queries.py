"""Read-only queries the site runs against the store (the site never writes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from submissions.store import reader


def _frame(con, sql: str, params: list[Any] | None = None) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())  # type: ignore[return-value]


def tasks(db: Path) -> pl.DataFrame:
    with reader(db) as con:
        return _frame(con, "SELECT task, split, title, benchmark, primary_metric, hidden, fingerprint, spec_json FROM current_tasks ORDER BY benchmark, task, split")


def board(db: Path, task: str, split: str, slice_name: str = "", slice_value: str = "") -> pl.DataFrame:
    """One row per visible submission, one column per metric, for the whole split or one slice value."""
    with reader(db) as con:
        long = _frame(
            con,
            """
            SELECT submission_id, model, team, is_reference, created_at, slice_n_items AS n_items, metric, value
            FROM board WHERE task = ? AND split = ? AND slice = ? AND slice_value = ?
            """,
            [task, split, slice_name, slice_value],
        )
    if long.is_empty():
        return long
    return long.pivot(on="metric", index=["submission_id", "model", "team", "is_reference", "created_at", "n_items"], values="value")


def slice_values(db: Path, task: str, split: str, slice_name: str) -> list[str]:
    with reader(db) as con:
        rows = con.execute(
            "SELECT DISTINCT slice_value FROM board WHERE task = ? AND split = ? AND slice = ? ORDER BY slice_value",
            [task, split, slice_name],
        ).fetchall()
    return [r[0] for r in rows]


def spec_of(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["spec_json"])
