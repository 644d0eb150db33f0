"""Admin actions on stored submissions (soft, with history) and the store's consistency check."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from procbench.submissions import blobs, boards, staging, store

# action -> (column, value it sets, status recorded)
ACTIONS = {
    "hide": ("hidden", True, "hidden"),
    "unhide": ("hidden", False, "unhidden"),
    "delete": ("deleted", True, "deleted"),
    "restore": ("deleted", False, "restored"),
}


@dataclass(frozen=True)
class ActionResult:
    origin_id: str
    rows: int  # rows of the lineage changed (the original and its re-scored copies)


def apply(
    db_path: Path,
    submission_id: str,
    action: str,
    *,
    reason: str = "",
    actor: str = "",
    now: datetime | None = None,
) -> ActionResult:
    """Hide, unhide, delete or restore a submission and every re-scored copy of it.

    Nothing is removed: the flags change and each row gets a status event with the reason.
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    column, value, status = ACTIONS[action]
    stamp = now or store.now()
    with (
        store.writer(db_path, create=False) as con,
        store.transaction(con),
    ):  # nothing to act on in a new store: create none
        rows = con.execute(
            "SELECT origin_id, submission_id FROM submissions WHERE submission_id = ? OR (length(?) >= 6 AND starts_with(submission_id, ?))",
            [submission_id, submission_id, submission_id],
        ).fetchall()
        origins = {
            origin or sid for origin, sid in rows
        }  # '' (rows inserted by other tools) means itself
        if not origins:
            raise LookupError(f"no submission {submission_id!r}")
        if len(origins) > 1:
            raise LookupError(f"{submission_id!r} is ambiguous; give more of the id")
        (origin,) = origins
        lineage = "submission_id = ? OR origin_id = ?"
        ids = [
            r[0]
            for r in con.execute(
                f"SELECT submission_id FROM submissions WHERE {lineage} ORDER BY created_at",
                [origin, origin],
            ).fetchall()
        ]
        con.execute(
            f"UPDATE submissions SET {column} = ? WHERE {lineage}", [value, origin, origin]
        )  # column is from ACTIONS, not user input
        store.refresh_board_summary(con, ids)  # Home's counts (migration 010), in this transaction
        for sid in ids:
            store.add_status(con, sid, store.StatusEvent(status, stamp, reason, actor))
    return ActionResult(origin, len(ids))


def check_consistency(db_path: Path) -> list[str]:
    """Problems that a half-written submission would leave; empty when the store is consistent."""
    problems: list[str] = []
    with store.reader(db_path) as con:

        def each(sql: str, message: str) -> None:
            problems.extend(message.format(*row) for row in con.execute(sql).fetchall())

        each(
            "SELECT submission_id FROM submissions s WHERE NOT EXISTS (SELECT 1 FROM aggregates a WHERE a.submission_id = s.submission_id)",
            "submission {} has no aggregates",
        )
        each(
            """SELECT s.submission_id, s.n_items, count(DISTINCT i.item_id) FROM submissions s LEFT JOIN item_scores i ON i.submission_id = s.submission_id
               WHERE NOT s.is_reference GROUP BY s.submission_id, s.n_items HAVING count(DISTINCT i.item_id) <> s.n_items""",
            "submission {} has {} items but per-item scores for {}",
        )
        for table in ("item_scores", "aggregates", "status_history"):
            each(
                f"SELECT DISTINCT submission_id FROM {table} t WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.submission_id = t.submission_id)",
                f"{table} rows of unknown submission {{}}",
            )
        each(
            "SELECT submission_id FROM submissions s WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.task = s.task AND t.split = s.split AND t.fingerprint = "
            "s.fingerprint)",
            "submission {} has no task row for its fingerprint",
        )
        each(
            "SELECT submission_id FROM submissions s WHERE NOT EXISTS (SELECT 1 FROM status_history h WHERE h.submission_id = s.submission_id AND h.status "
            "IN ('scored', 'rescored'))",
            "submission {} has no scored status",
        )
        each(
            "SELECT submission_id FROM submissions s WHERE s.receipt_id <> '' AND NOT EXISTS (SELECT 1 FROM raw_files r WHERE r.content_sha256 = "
            "s.content_sha256)",
            "submission {} has no raw file row",
        )
        each(
            "SELECT f.receipt_id FROM failures f JOIN submissions s ON s.receipt_id = f.receipt_id",
            "receipt {} is both a failure and a stored submission",
        )
        locations = con.execute("SELECT content_sha256, location FROM raw_files").fetchall()
    problems += [
        f"raw file {sha} is missing from {blobs.blob_root(db_path)}"
        for sha, location in locations
        if not blobs.blob_path(db_path, location).is_file()
    ]
    return problems


# -- which fingerprint a board shows (issue #29) ---------------------------------------------------------


def check_boards(db_path: Path) -> list[str]:
    """Boards that show a fingerprint with no rows while another fingerprint of theirs has rows."""
    with store.reader(db_path) as con:
        empty = boards.empty_boards(con)
    return [
        f"board {task} / {split} shows fingerprint {shown[:12]}, which has no rows, while {other[:12]} has {n} "
        f"(`procbench admin board list {task}` lists them; `procbench admin board point {task} {split} {other[:12]}` shows them)"
        for task, split, shown, other, n in empty
    ]


def point_board(
    db_path: Path,
    task: str,
    split: str,
    fingerprint: str,
    *,
    reason: str = "",
    actor: str = "",
    now: datetime | None = None,
) -> boards.Move | None:
    """Show a registered fingerprint (or unique prefix) on a board, logged; None when it already shows it."""
    with store.writer(db_path, create=False) as con, store.transaction(con):
        target = boards.resolve(con, task, split, fingerprint)
        return boards.move(
            con,
            task,
            split,
            target,
            how=boards.POINT,
            reason=reason,
            actor=actor,
            at=now or store.now(),
        )


def undo_board(
    db_path: Path,
    task: str,
    split: str,
    *,
    reason: str = "",
    actor: str = "",
    now: datetime | None = None,
) -> boards.Move:
    """Undo a board's latest move (a move back to the fingerprint it showed before, itself logged)."""
    with store.writer(db_path, create=False) as con, store.transaction(con):
        log = boards.moves(con, task, split)
        if not log or not log[-1].from_fingerprint:
            raise LookupError(f"the board {task} / {split} has no move to undo")
        latest = log[-1]
        why = f"undo of move {latest.seq} ({latest.how})" + (f": {reason}" if reason else "")
        moved = boards.move(
            con,
            task,
            split,
            latest.from_fingerprint,
            how=boards.POINT,
            reason=why,
            actor=actor,
            at=now or store.now(),
        )
        if moved is None:  # cannot happen while the log is the only writer of the pointer
            raise LookupError(
                f"the board {task} / {split} already shows {latest.from_fingerprint[:12]}"
            )
        return moved


# -- raw files no row references (issue #17) ----------------------------------------------------------

_BLOB_FOLDER = re.compile(r"[0-9a-f]{2}")


def _blob_files(db_path: Path) -> list[str]:
    """Every file in the blob folders of ``<db>.raw/`` (``ab/…``), as a location; not the staging scratch."""
    root = blobs.blob_root(Path(db_path))
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and not folder.is_symlink() and _BLOB_FOLDER.fullmatch(folder.name):
            found += [
                f"{folder.name}/{f.name}"
                for f in sorted(folder.iterdir())
                if f.is_file() or f.is_symlink()
            ]
    return found


def _referenced(con) -> set[str]:
    return {
        Path(location).as_posix()
        for (location,) in con.execute("SELECT location FROM raw_files").fetchall()
    }


def orphan_blobs(db_path: Path) -> list[str]:
    """Raw files (locations under ``<db>.raw/``) that no ``raw_files`` row references.

    A store that failed after its blob was written (or a process killed there) leaves one; the next
    attempt with the same content reuses it.  An orphan can also be a submission being stored at
    this moment (its blob is written before the store's lock is taken); :func:`collect_orphans` is
    safe even then (intake writes the blob again under the lock if it has gone).
    """
    with store.reader(db_path) as con:
        referenced = _referenced(con)
        return [location for location in _blob_files(db_path) if location not in referenced]


def collect_orphans(db_path: Path) -> list[str]:
    """Delete the orphan raw files, under the store's exclusive lock; returns their locations."""
    removed = []
    with store.writer(db_path, create=False) as con:
        referenced = _referenced(con)
        for location in _blob_files(db_path):
            if location not in referenced:
                blobs.blob_path(Path(db_path), location).unlink(missing_ok=True)
                removed.append(location)
    return removed


# -- staging folders a killed intake left (issue #29) ---------------------------------------------------


def staging_leftovers(db_path: Path) -> list[staging.Leftover]:
    """Staging folders under ``<db>.raw/tmp`` that no running intake owns (a process killed while staging)."""
    return staging.leftovers(blobs.scratch_root(Path(db_path)))


def collect_staging(db_path: Path) -> list[staging.Leftover]:
    """Delete those staging folders; returns what was removed.  An intake staging now keeps its folder locked."""
    return staging.remove_leftovers(blobs.scratch_root(Path(db_path)))
