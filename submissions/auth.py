"""Teams and their tokens.  Only sha256(token) is stored; a token is shown once, when issued.

A team with a token must present it; a team without one (or a team that does not exist) may
submit without a token, which keeps local use (``procbench submit --team me``) working.  Team names
are matched through ``details.same_name`` (issues #17, #29): a name that differs from a token-protected
team's only by case, width, spacing, accents or look-alike letters needs that team's token too, and
no two teams may share a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# SHA-256 without OpenSSL for small inputs (issue #31)
from procbench.runners.runtime import digests
from procbench.submissions.details import ANONYMOUS_TEAM, DetailError, check_name, same_name
from procbench.submissions.sql import duckdb

TOKEN_PREFIX = "pbt_"


class AuthError(Exception):
    """A missing, wrong, expired or revoked token; the message is what the user sees."""


@dataclass(frozen=True)
class TokenInfo:
    team: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None


def hash_token(token: str) -> str:
    return digests.sha256(token.strip().encode()).hexdigest()


def new_token() -> str:
    import secrets  # only here: intake authenticates without it (issue #31)

    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def team_exists(con: duckdb.DuckDBPyConnection, team: str) -> bool:
    return con.execute("SELECT 1 FROM teams WHERE team = ?", [team]).fetchone() is not None


def _same_name(con: duckdb.DuckDBPyConnection, sql: str, team: str) -> str | None:
    """The first name ``sql`` lists that is ``team`` by ``same_name`` (the exact name first), or None.

    issue #29: every name a token protects is compared by its confusables skeleton (UTS #39), so no
    look-alike of a protected team passes without its token."""
    names = [row[0] for row in con.execute(sql).fetchall()]
    return next((n for n in sorted(names, key=lambda n: n != team) if same_name(n, team)), None)


def similar_team(con: duckdb.DuckDBPyConnection, team: str) -> str | None:
    """The existing team whose name is ``team`` up to case, width, spacing and look-alikes, or None."""
    return _same_name(con, "SELECT team FROM teams", team)


def protected_team(con: duckdb.DuckDBPyConnection, team: str) -> str | None:
    """The token-protected team ``team`` would pass for (itself, or a look-alike name), or None."""
    return _same_name(con, "SELECT DISTINCT team FROM team_tokens", team)


def check_new_team(team: str) -> str:
    """A name a team may be created (and given tokens) under: ``check_name``'s rules, and not ``anonymous`` in
    any form ``same_name`` matches (the open team of token-less submissions, which a token would lock).
    Needs no store, so a refused name is refused before one is opened."""
    check_name("team", team)
    if same_name(team, ANONYMOUS_TEAM):
        raise DetailError(
            f"the team name {team!r} is reserved (it is the team of submissions sent without a token or a team)"
        )
    return team


def create_team(
    con: duckdb.DuckDBPyConnection, team: str, *, now: datetime, expires_at: datetime | None = None
) -> str:
    """Create a team with a fresh token; returns the token (not stored).  The caller commits."""
    check_new_team(team)
    existing = similar_team(con, team)
    if existing == team:
        raise ValueError(
            f"team {team!r} already exists (issue a new token with `procbench team token {team}`)"
        )
    if existing is not None:
        raise ValueError(
            f"team {team!r} is too close to the existing team {existing!r} (the same name up to case, spacing, accents or look-alike letters); choose another "
            "name"
        )
    con.execute("INSERT INTO teams (team, token_hash, created_at) VALUES (?, NULL, ?)", [team, now])
    return issue_token(con, team, now=now, expires_at=expires_at)


def issue_token(
    con: duckdb.DuckDBPyConnection,
    team: str,
    *,
    now: datetime,
    expires_at: datetime | None = None,
    revoke_others: bool = False,
) -> str:
    """A new token for an existing team; returns it (only its hash is stored)."""
    if same_name(team, ANONYMOUS_TEAM):
        check_new_team(
            team
        )  # a store from before the name was reserved may hold the team: it still gets no token
    if not team_exists(con, team):
        raise ValueError(f"no team {team!r} (create it with `procbench team create {team}`)")
    if revoke_others:
        revoke_tokens(con, team, now=now)
    token = new_token()
    con.execute(
        "INSERT INTO team_tokens (token_hash, team, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, NULL)",
        [hash_token(token), team, now, expires_at],
    )
    return token


def revoke_tokens(con: duckdb.DuckDBPyConnection, team: str, *, now: datetime) -> int:
    """Revoke every live token of a team; returns how many."""
    (count,) = con.execute(
        "SELECT count(*) FROM team_tokens WHERE team = ? AND revoked_at IS NULL", [team]
    ).fetchone()  # type: ignore[misc]
    con.execute(
        "UPDATE team_tokens SET revoked_at = ? WHERE team = ? AND revoked_at IS NULL", [now, team]
    )
    return int(count)


def _token(con: duckdb.DuckDBPyConnection, token: str) -> TokenInfo | None:
    row = con.execute(
        "SELECT team, created_at, expires_at, revoked_at FROM team_tokens WHERE token_hash = ?",
        [hash_token(token)],
    ).fetchone()
    return TokenInfo(*row) if row else None


def team_has_tokens(con: duckdb.DuckDBPyConnection, team: str) -> bool:
    """Whether submitting as ``team`` needs a token: it, or a name it passes for, has one."""
    return protected_team(con, team) is not None


def authenticate(
    con: duckdb.DuckDBPyConnection, *, team: str | None, token: str | None, now: datetime
) -> str:
    """The team a submission is stored under, or AuthError with the reason.

    ``team=None`` takes the token's team (or ``anonymous`` without a token).
    """
    if token is None or not token.strip():
        name = team if team is not None else "anonymous"
        protected = protected_team(con, name)
        if protected == name:
            raise AuthError(
                f"team {name!r} requires a token: pass --token (ask the team's admin for one)"
            )
        if protected is not None:
            raise AuthError(
                f"team {name!r} is too close to team {protected!r} (the same name up to case, spacing, accents or look-alike letters), which requires a "
                "token: pass its token, or choose another name"
            )
        return name
    info = _token(con, token)
    if info is None:
        raise AuthError("the token is not valid (unknown or mistyped); nothing was stored")
    if team is not None and not same_name(team, info.team):
        raise AuthError(f"the token does not belong to team {team!r}; nothing was stored")
    if info.revoked_at is not None:
        raise AuthError(
            f"the token of team {info.team!r} was revoked on {info.revoked_at:%Y-%m-%d %H:%M} UTC; ask for a new one"
        )
    if info.expires_at is not None and info.expires_at <= now:
        raise AuthError(
            f"the token of team {info.team!r} expired on {info.expires_at:%Y-%m-%d %H:%M} UTC; ask for a new one (procbench team token {info.team})"
        )
    return info.team


def list_teams(
    con: duckdb.DuckDBPyConnection, *, now: datetime
) -> list[tuple[str, int, datetime | None]]:
    """(team, live tokens, latest expiry) for every team."""
    rows = con.execute(
        """
        SELECT t.team,
               count(k.token_hash) FILTER (WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)),
               max(k.expires_at)
        FROM teams t LEFT JOIN team_tokens k ON k.team = t.team
        GROUP BY t.team ORDER BY t.team
        """,
        [now],
    ).fetchall()
    return [(r[0], int(r[1]), r[2]) for r in rows]
