"""Which fingerprint each board shows, and every move of it (migration 006, issue #29).

A task and split can have many registered fingerprints (``tasks`` rows: one per spec + gold it was
scored under); its board shows one, the ``to_fingerprint`` of its latest ``board_moves`` row.
Registering a fingerprint never moves a board, except the very first one of a task and split.  A board
moves when a re-scoring has re-scored every stored submission that can be re-scored
(``procbench.rescore``), or by ``procbench admin board point`` (``procbench.submissions.admin.point_board``),
which can undo any move.  Moves are appended, never updated, so the log is the board's history.

The functions take the caller's connection and transaction: a move commits with whatever caused it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from procbench.submissions.sql import duckdb

FIRST, RESCORE, POINT, MIGRATION = "first", "rescore", "point", "migration"

# A board's rows: the submitted rows it would show (not hidden, not deleted); reported (paper) rows are
# reloaded under every fingerprint, and shown only over the data they were reported on, so they do not count.
_ROWS = "SELECT count(*) FROM submissions WHERE task = ? AND split = ? AND fingerprint = ? AND NOT hidden AND NOT deleted AND NOT is_reference"


@dataclass(frozen=True)
class Move:
    task: str
    split: str
    seq: int
    from_fingerprint: str
    to_fingerprint: str
    how: str
    reason: str
    actor: str
    moved_at: datetime


def current(con: duckdb.DuckDBPyConnection, task: str, split: str) -> str | None:
    """The fingerprint the board of ``task`` / ``split`` shows (None: no board)."""
    row = con.execute(
        "SELECT fingerprint FROM current_tasks WHERE task = ? AND split = ?", [task, split]
    ).fetchone()
    return str(row[0]) if row else None


def has_board(con: duckdb.DuckDBPyConnection, task: str, split: str) -> bool:
    return (
        con.execute(
            "SELECT 1 FROM tasks WHERE task = ? AND split = ? LIMIT 1", [task, split]
        ).fetchone()
        is not None
    )


def _latest_seq(con: duckdb.DuckDBPyConnection, task: str, split: str) -> int:
    row = con.execute(
        "SELECT coalesce(max(seq), 0) FROM board_moves WHERE task = ? AND split = ?", [task, split]
    ).fetchone()
    return int(row[0]) if row else 0


def move(
    con: duckdb.DuckDBPyConnection,
    task: str,
    split: str,
    fingerprint: str,
    *,
    how: str,
    reason: str,
    actor: str,
    at: datetime,
) -> Move | None:
    """Point the board at ``fingerprint`` (registered), logged; None when it already shows it."""
    previous = current(con, task, split) or ""
    if previous == fingerprint:
        return None
    seq = _latest_seq(con, task, split) + 1  # the caller holds the store's exclusive lock: no race
    return _append(con, Move(task, split, seq, previous, fingerprint, how, reason, actor, at))


def _append(con: duckdb.DuckDBPyConnection, done: Move) -> Move:
    con.execute(
        "INSERT INTO board_moves (task, split, seq, from_fingerprint, to_fingerprint, how, reason, actor, moved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            done.task,
            done.split,
            done.seq,
            done.from_fingerprint,
            done.to_fingerprint,
            done.how,
            done.reason,
            done.actor,
            done.moved_at,
        ],
    )
    return done


def before_registering(
    con: duckdb.DuckDBPyConnection, task: str, split: str, fingerprint: str, *, at: datetime
) -> Move | None:
    """Called before ``fingerprint`` is registered: the first fingerprint of a task and split makes its board.

    Any later one waits for a re-scoring or ``admin board point``.  A board with registrations but no
    move yet (rows written by other tools) is pinned to what it shows, so registering does not move it.
    """
    if _latest_seq(con, task, split):
        return None
    shown = current(con, task, split)
    if shown is None:
        return _append(
            con,
            Move(
                task,
                split,
                1,
                "",
                fingerprint,
                FIRST,
                "the first fingerprint registered for this board",
                "",
                at,
            ),
        )
    return _append(
        con,
        Move(
            task,
            split,
            1,
            "",
            shown,
            FIRST,
            "the board as it was when another fingerprint was registered",
            "",
            at,
        ),
    )


def moves(con: duckdb.DuckDBPyConnection, task: str, split: str | None = None) -> list[Move]:
    """The log of a task's boards (one split, or all), oldest first."""
    where, params = (
        ("task = ? AND split = ?", [task, split]) if split is not None else ("task = ?", [task])
    )
    rows = con.execute(
        f"SELECT task, split, seq, from_fingerprint, to_fingerprint, how, reason, actor, moved_at FROM board_moves WHERE {where} ORDER BY split, seq",
        params,
    ).fetchall()
    return [Move(*row) for row in rows]


def rows_under(con: duckdb.DuckDBPyConnection, task: str, split: str, fingerprint: str) -> int:
    """How many submitted rows the board would show under ``fingerprint`` (visible, not reported rows)."""
    row = con.execute(_ROWS, [task, split, fingerprint]).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Registered:
    fingerprint: str
    data_kind: str
    gold_items: int | None
    data_root: str
    registered_at: datetime
    rows: int
    current: bool


def registered(con: duckdb.DuckDBPyConnection, task: str, split: str) -> list[Registered]:
    """Every fingerprint registered for a task and split, oldest first, with its rows and whether the board shows it."""
    shown = current(con, task, split)
    rows = con.execute(
        f"""
        SELECT t.fingerprint, coalesce(t.data_kind, 'unknown'), t.gold_items, coalesce(t.data_root, ''), t.registered_at,
               ({_ROWS.replace("task = ? AND split = ? AND fingerprint = ?", "task = t.task AND split = t.split AND fingerprint = t.fingerprint")})
        FROM tasks t WHERE t.task = ? AND t.split = ? ORDER BY t.registered_at
        """,
        [task, split],
    ).fetchall()
    return [
        Registered(fp, kind, items, root, at, int(n), fp == shown)
        for fp, kind, items, root, at, n in rows
    ]


def resolve(con: duckdb.DuckDBPyConnection, task: str, split: str, fingerprint: str) -> str:
    """A registered fingerprint of ``task`` / ``split`` from itself or a unique prefix (6+ characters); LookupError otherwise."""
    known = [r.fingerprint for r in registered(con, task, split)]
    if not known:
        raise LookupError(f"no board {task} / {split} in this store")
    found = [
        fp
        for fp in known
        if fp == fingerprint or (len(fingerprint) >= 6 and fp.startswith(fingerprint))
    ]
    if len(found) != 1:
        listed = ", ".join(fp[:12] for fp in known)
        what = "is ambiguous" if found else "is not registered"
        raise LookupError(
            f"fingerprint {fingerprint!r} {what} for {task} / {split} (registered: {listed})"
        )
    return found[0]


def empty_boards(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str, int]]:
    """Boards that show a fingerprint with no rows while another fingerprint of theirs has rows.

    ``(task, split, shown fingerprint, the other fingerprint with the most rows, its rows)``.
    """
    return [
        (task, split, shown, other, int(n))
        for task, split, shown, other, n in con.execute(
            """
            WITH counts AS (
                SELECT t.task, t.split, t.fingerprint, count(s.submission_id) AS n
                FROM tasks t LEFT JOIN submissions s
                  ON s.task = t.task AND s.split = t.split AND s.fingerprint = t.fingerprint AND NOT s.hidden AND NOT s.deleted AND NOT s.is_reference
                GROUP BY ALL
            )
            SELECT c.task, c.split, c.fingerprint, arg_max(o.fingerprint, o.n), max(o.n)
            FROM current_tasks c
            JOIN counts z ON z.task = c.task AND z.split = c.split AND z.fingerprint = c.fingerprint AND z.n = 0
            JOIN counts o ON o.task = c.task AND o.split = c.split AND o.fingerprint <> c.fingerprint AND o.n > 0
            GROUP BY c.task, c.split, c.fingerprint ORDER BY c.task, c.split
            """
        ).fetchall()
    ]
