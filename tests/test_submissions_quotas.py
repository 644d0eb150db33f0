"""Quotas per team, task and split: a rolling daily limit on scored submissions and a hard cap on attempts."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.submissions import quotas, store
from procbench.submissions.errors import RejectedPredictions, SubmissionRefused
from tests.test_submissions_support import STRONG, counts, query, submit_openpi, variant

cli = CliRunner()
T0 = datetime(2026, 11, 22, 9, 0, 0)


def _quota(db: Path, **kwargs) -> None:  # type: ignore[no-untyped-def]
    with store.writer(db) as con, store.transaction(con):
        quotas.set_quota(con, "openpi", now=T0, **kwargs)


def test_daily_limit_counts_scored_submissions_and_says_when_the_next_slot_opens(
    tmp_path: Path,
) -> None:
    db = tmp_path / "board.duckdb"
    _quota(db, per_day=2, max_attempts=None)
    submit_openpi(db, variant(tmp_path, 1), now=T0)
    submit_openpi(db, variant(tmp_path, 2), now=T0 + timedelta(hours=3))
    before = counts(db)
    with pytest.raises(SubmissionRefused) as caught:
        submit_openpi(db, variant(tmp_path, 3), now=T0 + timedelta(hours=5))
    refusal = caught.value
    assert refusal.stage == "quota" and refusal.next_slot == T0 + timedelta(hours=24)
    assert (
        "2 scored submissions to openpi / test in the last 24 hours (limit 2 per day)"
        in refusal.message
    )
    assert "next slot opens at 2026-11-23 09:00:00 UTC (in 19 h 00 min)" in refusal.message
    assert counts(db) == before
    # an idempotent resubmission is not a new submission: never refused, never counted
    assert not submit_openpi(db, variant(tmp_path, 1), now=T0 + timedelta(hours=5)).created
    # once the first one leaves the window, one slot opens
    assert submit_openpi(db, variant(tmp_path, 3), now=T0 + timedelta(hours=24, seconds=1)).created
    with pytest.raises(SubmissionRefused, match="next slot opens at 2026-11-23 12:00:00"):
        submit_openpi(db, variant(tmp_path, 4), now=T0 + timedelta(hours=24, seconds=2))


def test_quotas_are_per_team_and_split(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    _quota(db, per_day=1, max_attempts=None)
    _quota(db, split="dev", per_day=0, max_attempts=None)
    submit_openpi(db, variant(tmp_path, 1), team="a", now=T0)
    submit_openpi(db, variant(tmp_path, 1), team="b", now=T0)  # another team has its own quota
    with pytest.raises(SubmissionRefused, match="limit 1 per day"):
        submit_openpi(db, variant(tmp_path, 2), team="a", now=T0)
    with pytest.raises(SubmissionRefused, match="the daily limit is 0"):
        submit_openpi(db, variant(tmp_path, 2), team="c", split="dev", now=T0)


def test_max_attempts_counts_failed_validation_but_not_refusals(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    _quota(db, per_day=None, max_attempts=3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    with pytest.raises(RejectedPredictions):
        submit_openpi(db, bad, now=T0)  # attempt 1 (failed validation)
    with pytest.raises(SubmissionRefused):
        submit_openpi(
            db, STRONG, filename="../x.jsonl", now=T0
        )  # refused before the scorer: not an attempt
    submit_openpi(db, variant(tmp_path, 1), now=T0)  # attempt 2
    submit_openpi(db, variant(tmp_path, 2), now=T0)  # attempt 3
    with pytest.raises(SubmissionRefused) as caught:
        submit_openpi(db, variant(tmp_path, 3), now=T0 + timedelta(days=30))
    assert (
        "used all 3 attempts" in caught.value.message
        and "(2 scored, 1 failed)" in caught.value.message
    )
    assert caught.value.next_slot is None and "no further slot opens" in caught.value.message


def test_concurrent_submissions_never_overshoot_the_quota(tmp_path: Path) -> None:
    """Six threads race (each with its own store lock handle); the check under the lock lets exactly two in."""
    db = tmp_path / "board.duckdb"
    _quota(db, per_day=2, max_attempts=None)
    files = [variant(tmp_path, k) for k in range(6)]
    outcomes: list[str] = []

    def one(path: Path) -> None:
        try:
            submit_openpi(db, path, now=T0)
            outcomes.append("stored")
        except SubmissionRefused:
            outcomes.append("refused")

    threads = [threading.Thread(target=one, args=(p,)) for p in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["refused"] * 4 + ["stored"] * 2
    assert query(db, "SELECT count(*) FROM submissions")[0][0] == 2


def test_admin_quota_command(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    result = cli.invoke(
        app, ["admin", "quota", "openpi", "--per-day", "3", "--max-attempts", "10", "--db", str(db)]
    )
    assert result.exit_code == 0 and "per day 3, max attempts 10" in result.output
    assert query(db, "SELECT task, split, per_day, max_attempts FROM quotas") == [
        ("openpi", "", 3, 10)
    ]
    listing = cli.invoke(app, ["admin", "quotas", "--db", str(db)])
    assert "openpi" in listing.output and "per day 3" in listing.output
    assert (
        cli.invoke(app, ["admin", "quota", "openpi", "--per-day", "-1", "--db", str(db)]).exit_code
        == 5
    )
    cleared = cli.invoke(app, ["admin", "quota", "openpi", "--clear", "--db", str(db)])
    assert cleared.exit_code == 0 and query(db, "SELECT count(*) FROM quotas") == [(0,)]
