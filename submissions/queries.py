"""Read helpers for the site and the CLI that enforce who may see what.

* Hidden and deleted submissions exist only for admins (``LookupError`` otherwise, as if absent).
* On a hidden split (``data { hidden = [...] }``) non-admins get aggregates only: per-item scores
  raise ``PermissionError``, and slices smaller than ``MIN_HIDDEN_SLICE_ITEMS`` are left out (their
  aggregate would be close to a per-item score).  The store keeps no gold, only scores and labels.

The rule lives here once, for the CLI and the site (``procbench.leaderboard.queries`` calls it): whether a
submission's split is hidden (:data:`HIDDEN_SPLIT_SQL`), which aggregates the public sees
(:func:`public_aggregates`) and who may read per-item scores (:func:`check_items_readable`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import polars as pl

from procbench.runners.runtime._types import ItemScore
from procbench.submissions import store
from procbench.submissions.store import reader

MIN_HIDDEN_SLICE_ITEMS = 5  # the same floor as the board view (schema/002_trust.sql)

# A submission ``s``'s split is hidden when the spec hid it under the submission's own fingerprint or under
# the task's current one (a split hidden since keeps its old submissions' items private too).
HIDDEN_SPLIT_SQL = """(
    coalesce((SELECT bool_or(h.hidden) FROM tasks h WHERE h.task = s.task AND h.split = s.split AND h.fingerprint = s.fingerprint), false)
    OR coalesce((SELECT bool_or(c.hidden) FROM current_tasks c WHERE c.task = s.task AND c.split = s.split), false)
)"""


def public_aggregates(
    frame: pl.DataFrame, *, hidden_split: bool, is_reference: bool
) -> pl.DataFrame:
    """What non-admins see of a submission's aggregates: on a hidden split, the whole-split rows and slices of at
    least ``MIN_HIDDEN_SLICE_ITEMS`` items (reported rows have no items, so nothing to hide)."""
    if not hidden_split or is_reference:
        return frame
    return frame.filter((pl.col("slice") == "") | (pl.col("n_items") >= MIN_HIDDEN_SLICE_ITEMS))


def hidden_flags(con, sids: list[str]) -> dict[str, tuple[bool, bool]]:
    """submission id -> (its split is hidden, it is a reported row), for the ids the store holds."""
    rows = con.execute(
        f"SELECT s.submission_id, {HIDDEN_SPLIT_SQL}, s.is_reference FROM submissions s WHERE s.submission_id IN (SELECT unnest(?))",
        [list(sids)],
    ).fetchall()
    return {sid: (bool(hidden), bool(reference)) for sid, hidden, reference in rows}


def check_items_readable(con, sids: list[str], *, admin: bool) -> None:
    """PermissionError unless every submission's per-item scores may be read (admins read all)."""
    if admin:
        return
    for sid, (hidden, _) in sorted(hidden_flags(con, sids).items()):
        if hidden:
            task, split = con.execute(
                "SELECT task, split FROM submissions WHERE submission_id = ?", [sid]
            ).fetchone()
            raise PermissionError(
                f"{task} / {split} is a hidden split: only aggregate scores are published"
            )


def _frame(con, sql: str, params: list[Any]) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())  # type: ignore[return-value]


def _submission(con, sid: str, admin: bool) -> dict[str, Any]:
    frame = _frame(
        con,
        f"""
        SELECT s.*, {HIDDEN_SPLIT_SQL} AS hidden_split FROM submissions s
        WHERE s.submission_id = ?
        """,
        [sid],
    )
    if frame.is_empty():
        raise LookupError(f"no submission {sid!r}")
    row = frame.row(0, named=True)
    if (row["hidden"] or row["deleted"]) and not admin:
        raise LookupError(f"no submission {sid!r}")
    return row


def submission(db: Path, sid: str, *, admin: bool = False) -> dict[str, Any]:
    """One submission's row (model card, flags, ``hidden_split``); LookupError if not visible."""
    with reader(db) as con:
        return _submission(con, sid, admin)


def split_is_hidden(db: Path, task: str, split: str) -> bool:
    with reader(db) as con:
        row = con.execute(
            "SELECT hidden FROM current_tasks WHERE task = ? AND split = ?", [task, split]
        ).fetchone()
    return bool(row and row[0])


def item_scores(db: Path, sid: str, *, admin: bool = False) -> pl.DataFrame:
    """Per-item scores (item_id, metric, value); PermissionError on a hidden split unless admin."""
    with reader(db) as con:
        _submission(con, sid, admin)
        check_items_readable(con, [sid], admin=admin)
        items = store.submission_rows(con, "item_scores", [sid])[
            sid
        ]  # reads where its rows lie, not the whole table
    return cast(pl.DataFrame, pl.from_arrow(items)).sort(
        ["item_id", "metric"]
    )  # a table gives a frame, not a series


def item_score_lists(
    db: Path, sids: list[str], *, for_aggregates: bool = False
) -> dict[str, list[ItemScore]]:
    """Per-item statistics of each submission (reported rows have none), items in id order.

    PermissionError when a submission's split is hidden (:func:`check_items_readable`), unless ``for_aggregates``:
    the caller (the site's intervals and paired tests, ``procbench compare``) publishes only figures over at least
    ``MIN_HIDDEN_SLICE_ITEMS`` items, never the items themselves.
    """
    if not sids:
        return {}
    grouped: dict[str, dict[str, dict[str, float]]] = {sid: {} for sid in sids}
    with reader(db) as con:
        if not for_aggregates:
            check_items_readable(con, list(grouped), admin=False)
        tables = store.submission_rows(
            con, "item_scores", list(grouped)
        )  # reads where their rows lie, not the whole table
    for sid, table in tables.items():
        items = grouped[sid]
        for item_id, metric, value in zip(
            *(table[c].to_pylist() for c in ("item_id", "metric", "value"))
        ):
            items.setdefault(item_id, {})[metric] = value
    return {
        sid: [ItemScore(item_id, values) for item_id, values in sorted(items.items())]
        for sid, items in grouped.items()
    }


def item_labels(
    db: Path, task: str, split: str, fingerprint: str, dimension: str
) -> dict[str, str]:
    """Item id -> label value of one slice dimension, under one fingerprint."""
    with reader(db) as con:
        rows = con.execute(
            "SELECT item_id, value FROM item_labels WHERE task = ? AND split = ? AND fingerprint = ? AND dimension = ?",
            [task, split, fingerprint, dimension],
        ).fetchall()
    return dict(rows)


def board_figures(db: Path, task: str, split: str, sids: list[str], metric: str) -> pl.DataFrame:
    """One metric of some submissions as the ``board`` view shows it (on the board only: current fingerprint, visible,
    no hidden-split slice of fewer than ``MIN_HIDDEN_SLICE_ITEMS`` items), on the whole split and every slice value."""
    with reader(db) as con:
        return _frame(
            con,
            """
            SELECT submission_id, slice, slice_value, slice_n_items AS n_items, value
            FROM board WHERE task = ? AND split = ? AND metric = ? AND submission_id IN (SELECT unnest(?))
            """,
            [task, split, metric, list(sids)],
        )


def aggregates(db: Path, sid: str, *, admin: bool = False) -> pl.DataFrame:
    """Aggregates (slice, slice_value, metric, value, n_items); small slices of hidden splits only for admins."""
    with reader(db) as con:
        row = _submission(con, sid, admin)
        frame = _frame(
            con,
            "SELECT slice, slice_value, metric, value, n_items FROM aggregates WHERE submission_id = ? ORDER BY slice, slice_value, metric",
            [sid],
        )
    return (
        frame
        if admin
        else public_aggregates(
            frame, hidden_split=bool(row["hidden_split"]), is_reference=bool(row["is_reference"])
        )
    )


def status_history(db: Path, sid: str, *, admin: bool = False) -> pl.DataFrame:
    """The submission's status trail, oldest first (reasons of admin actions included)."""
    with reader(db) as con:
        _submission(con, sid, admin)
        return _frame(
            con,
            "SELECT status, reason, actor, changed_at FROM status_history WHERE submission_id = ? ORDER BY changed_at",
            [sid],
        )


def failure(db: Path, receipt: str) -> dict[str, Any] | None:
    """The failures row of a receipt (what went wrong, at which stage), or None."""
    with reader(db) as con:
        frame = _frame(con, "SELECT * FROM failures WHERE receipt_id = ?", [receipt])
    return frame.row(0, named=True) if not frame.is_empty() else None


def lineage(db: Path, origin_id: str, *, admin: bool = False) -> pl.DataFrame:
    """Every row computed from one original submission, one per fingerprint (admins see all)."""
    with reader(db) as con:
        frame = _frame(
            con,
            "SELECT submission_id, fingerprint, n_items, hidden, deleted, created_at FROM submissions WHERE origin_id = ? OR submission_id = ? ORDER BY "
            "created_at",
            [origin_id, origin_id],
        )
    if not admin:
        frame = frame.filter(~pl.col("hidden") & ~pl.col("deleted"))
    return frame
