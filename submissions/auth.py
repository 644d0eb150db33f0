"""Teams and their tokens.  Only sha256(token) is stored; a token is shown once, when issued.

A team with a token must present it; a team without one (or a team that does not exist) may
submit without a token, which keeps local use (``procbench submit --team me``) working.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

import duckdb

from submissions.details import check_name

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
    return hashlib.sha256(token.strip().encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def team_exists(con: duckdb.DuckDBPyConnection, team: str) -> bool:
    return con.execute("SELECT 1 FROM teams WHERE team = ?", [team]).fetchone() is not None


def create_team(con: duckdb.DuckDBPyConnection, team: str, *, now: datetime, expires_at: datetime | None = None) -> str:
    """Create a team with a fresh token; returns the token (not stored).  The caller commits."""
    check_name("team", team)
    if team_exists(con, team):
        raise ValueError(f"team {team!r} already exists (issue a new token with `procbench team token {team}`)")
    con.execute("INSERT INTO teams (team, token_hash, created_at) VALUES (?, NULL, ?)", [team, now])
    return issue_token(con, team, now=now, expires_at=expires_at)


def issue_token(con: duckdb.DuckDBPyConnection, team: str, *, now: datetime, expires_at: datetime | None = None, revoke_others: bool = False) -> str:
    """A new token for an existing team; returns it (only its hash is stored)."""
    if not team_exists(con, team):
        raise ValueError(f"no team {team!r} (create it with `procbench team create {team}`)")
    if revoke_others:
        revoke_tokens(con, team, now=now)
    token = new_token()
    con.execute("INSERT INTO team_tokens (token_hash, team, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, NULL)", [hash_token(token), team, now, expires_at])
    return token


def revoke_tokens(con: duckdb.DuckDBPyConnection, team: str, *, now: datetime) -> int:
    """Revoke every live token of a team; returns how many."""
    (count,) = con.execute("SELECT count(*) FROM team_tokens WHERE team = ? AND revoked_at IS NULL", [team]).fetchone()  # type: ignore[misc]
    con.execute("UPDATE team_tokens SET revoked_at = ? WHERE team = ? AND revoked_at IS NULL", [now, team])
    return int(count)


def _token(con: duckdb.DuckDBPyConnection, token: str) -> TokenInfo | None:
    row = con.execute("SELECT team, created_at, expires_at, revoked_at FROM team_tokens WHERE token_hash = ?", [hash_token(token)]).fetchone()
    return TokenInfo(*row) if row else None


def team_has_tokens(con: duckdb.DuckDBPyConnection, team: str) -> bool:
    return con.execute("SELECT 1 FROM team_tokens WHERE team = ? LIMIT 1", [team]).fetchone() is not None


def authenticate(con: duckdb.DuckDBPyConnection, *, team: str | None, token: str | None, now: datetime) -> str:
    """The team a submission is stored under, or AuthError with the reason.

    ``team=None`` takes the token's team (or ``anonymous`` without a token).
    """
    if token is None or not token.strip():
        name = team if team is not None else "anonymous"
        if team_has_tokens(con, name):
            raise AuthError(f"team {name!r} requires a token: pass --token (ask the team's admin for one)")
        return name
    info = _token(con, token)
    if info is None:
        raise AuthError("the token is not valid (unknown or mistyped); nothing was stored")
    if team is not None and team != info.team:
        raise AuthError(f"the token does not belong to team {team!r}; nothing was stored")
    if info.revoked_at is not None:
        raise AuthError(f"the token of team {info.team!r} was revoked on {info.revoked_at:%Y-%m-%d %H:%M} UTC; ask for a new one")
    if info.expires_at is not None and info.expires_at <= now:
        raise AuthError(f"the token of team {info.team!r} expired on {info.expires_at:%Y-%m-%d %H:%M} UTC; ask for a new one (procbench team token {info.team})")
    return info.team


def list_teams(con: duckdb.DuckDBPyConnection, *, now: datetime) -> list[tuple[str, int, datetime | None]]:
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
