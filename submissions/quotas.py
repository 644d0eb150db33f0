"""Quotas per team, task and split (EvalAI-style), set by admins in the store's ``quotas`` table.

* ``per_day``: scored submissions of a team to a task and split within any rolling 24 hours.
  Only scored submissions count (not failures, not idempotent resubmissions, not re-scored rows).
* ``max_attempts``: everything of that team that reached the scorer, ever: scored submissions
  plus files that failed validation or scoring, plus those being validated and scored now (intake
  reserves the attempt under the store's lock before validating, and releases it on every exit path;
  a reservation a killed process left behind stops counting after ``STALE_ATTEMPT``).  A hard cap; only
  an admin can raise it.

A quota row with ``split = ''`` applies to every split of the task that has no row of its own.
The check runs before scoring (to refuse early) and again inside the storing transaction, under
the store's exclusive lock, so concurrent submissions can never overshoot.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from procbench.submissions.sql import duckdb

WINDOW = timedelta(hours=24)
RESERVED_STAGE = "attempt"  # intake's reservation of an attempt being validated and scored (procbench.submissions.intake)
# issue #29: a reservation older than this no longer counts.  Intake releases its reservation on every
# exit path; only a process killed mid-intake (SIGKILL, power loss) leaves one behind, and without a
# bound it would hold one of the team's attempts for ever.  Far above the longest intake (the scoring
# limit, 600 s by default, plus the board judge's requests).
STALE_ATTEMPT = timedelta(hours=6)
COUNTED_FAILURE_STAGES = (RESERVED_STAGE, "validate", "score")


class QuotaExceeded(Exception):
    def __init__(self, message: str, next_slot: datetime | None):
        self.next_slot = next_slot
        super().__init__(message)


@dataclass(frozen=True)
class Quota:
    task: str
    split: str  # '' = every split
    per_day: int | None
    max_attempts: int | None


def check_limits(*, per_day: int | None, max_attempts: int | None) -> None:
    """ValueError unless each limit is None (unlimited) or 0 or more; callable before any store is opened."""
    for name, value in (("per-day", per_day), ("max-attempts", max_attempts)):
        if value is not None and value < 0:
            raise ValueError(f"--{name} must be 0 or more (got {value})")


def set_quota(
    con: duckdb.DuckDBPyConnection,
    task: str,
    *,
    split: str = "",
    per_day: int | None,
    max_attempts: int | None,
    now: datetime,
) -> Quota:
    check_limits(per_day=per_day, max_attempts=max_attempts)
    con.execute(
        "INSERT OR REPLACE INTO quotas (task, split, per_day, max_attempts, updated_at) VALUES (?, ?, ?, ?, ?)",
        [task, split, per_day, max_attempts, now],
    )
    return Quota(task, split, per_day, max_attempts)


def clear_quota(con: duckdb.DuckDBPyConnection, task: str, *, split: str = "") -> None:
    con.execute("DELETE FROM quotas WHERE task = ? AND split = ?", [task, split])


def quota_for(con: duckdb.DuckDBPyConnection, task: str, split: str) -> Quota | None:
    """The split's own quota, else the task's default (split ''), else None."""
    row = con.execute(
        "SELECT task, split, per_day, max_attempts FROM quotas WHERE task = ? AND split IN (?, '') ORDER BY split DESC LIMIT 1",
        [task, split],
    ).fetchone()
    return Quota(*row) if row else None


def list_quotas(con: duckdb.DuckDBPyConnection) -> list[Quota]:
    return [
        Quota(*r)
        for r in con.execute(
            "SELECT task, split, per_day, max_attempts FROM quotas ORDER BY task, split"
        ).fetchall()
    ]


def _fmt(moment: datetime, now: datetime) -> str:
    wait = moment - now
    minutes = max(int(wait.total_seconds() // 60), 0)
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC (in {minutes // 60} h {minutes % 60:02d} min)"


def check_quota(
    con: duckdb.DuckDBPyConnection, *, task: str, split: str, team: str, now: datetime
) -> None:
    """Raise QuotaExceeded (with when the next slot opens) if the team may not submit now."""
    quota = quota_for(con, task, split)
    if quota is None:
        return
    if quota.max_attempts is not None:
        (scored,) = con.execute(
            "SELECT count(*) FROM submissions WHERE task = ? AND split = ? AND team = ? AND NOT is_reference AND origin_id IN (submission_id, '')",
            [task, split, team],
        ).fetchone()  # type: ignore[misc]
        (failed, running) = con.execute(
            f"SELECT count(*) FILTER (WHERE stage <> ?), count(*) FILTER (WHERE stage = ? AND created_at > ?) FROM failures "
            f"WHERE task = ? AND split = ? AND team = ? AND stage IN ({', '.join('?' for _ in COUNTED_FAILURE_STAGES)})",
            [
                RESERVED_STAGE,
                RESERVED_STAGE,
                now - STALE_ATTEMPT,
                task,
                split,
                team,
                *COUNTED_FAILURE_STAGES,
            ],
        ).fetchone()  # type: ignore[misc]
        if scored + failed + running >= quota.max_attempts:
            in_progress = f", {running} in progress" if running else ""
            raise QuotaExceeded(
                f"team {team!r} has used all {quota.max_attempts} attempts for {task} / {split} "
                f"({scored} scored, {failed} failed{in_progress}); no further slot opens (an admin can raise --max-attempts)",
                None,
            )
    if quota.per_day is not None:
        recent = [
            r[0]
            for r in con.execute(
                "SELECT created_at FROM submissions WHERE task = ? AND split = ? AND team = ? AND NOT is_reference AND origin_id IN (submission_id, '') AND "
                "created_at > ? ORDER BY created_at",
                [task, split, team, now - WINDOW],
            ).fetchall()
        ]
        if len(recent) >= quota.per_day:
            # the slot opens when enough of the counted submissions have left the 24-hour window
            next_slot = recent[len(recent) - quota.per_day] + WINDOW if quota.per_day > 0 else None
            when = (
                f"the next slot opens at {_fmt(next_slot, now)}"
                if next_slot
                else "no slot opens (the daily limit is 0)"
            )
            raise QuotaExceeded(
                f"team {team!r} has {len(recent)} scored submission{'s' if len(recent) != 1 else ''} to {task} / {split} in the last 24 hours "
                f"(limit {quota.per_day} per day); {when}",
                next_slot,
            )
