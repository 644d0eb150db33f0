"""Teams and tokens: only hashes stored, the token printed once, wrong/expired/revoked tokens refused."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.submissions import auth, store
from procbench.submissions.errors import SubmissionRefused
from tests.test_submissions_support import STRONG, TEMPLATE, counts, failures, query, submit_openpi

cli = CliRunner()


def _create(db: Path, team: str, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with store.writer(db) as con, store.transaction(con):
        return auth.create_team(con, team, now=store.now(), **kwargs)


def test_team_create_prints_the_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    result = cli.invoke(app, ["team", "create", "acme", "--db", str(db)])
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    assert token.startswith(auth.TOKEN_PREFIX) and len(token) > 40
    assert query(db, "SELECT token_hash FROM team_tokens") == [(auth.hash_token(token),)]
    # the token itself appears nowhere in the database file, the WAL or the lock
    for path in tmp_path.iterdir():
        if path.is_file():
            assert token.encode() not in path.read_bytes()
    again = cli.invoke(app, ["team", "create", "acme", "--db", str(db)])
    assert again.exit_code == 5 and "already exists" in again.output


def test_submitting_with_the_token_stores_under_the_tokens_team(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    token = _create(db, "acme")
    outcome = submit_openpi(db, STRONG, team=None, token=token)
    assert outcome.created and outcome.team == "acme"
    assert query(db, "SELECT team FROM submissions") == [("acme",)]


def test_cli_submit_with_token(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    token = _create(db, "acme")
    args = [
        "submit",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(STRONG),
        "--model",
        "m",
        "--db",
        str(db),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    ]
    ok = cli.invoke(app, [*args, "--token", token])
    # the data root is said on stderr first (issue #29); the receipt is the stored line
    assert ok.exit_code == 0 and any(
        line.startswith("stored") and "team acme" in line for line in ok.output.splitlines()
    ), ok.output
    refused = cli.invoke(app, [*args, "--team", "acme"])
    assert (
        refused.exit_code == 5
        and "requires a token" in refused.output
        and "nothing was stored (receipt" in refused.output
    )


@pytest.mark.parametrize(
    "case", ["wrong", "expired", "revoked", "other team", "team without token"]
)
def test_bad_tokens_are_refused_and_nothing_is_stored(case: str, tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    token = _create(db, "acme")
    _create(db, "rival")
    submit_openpi(db, TEMPLATE, team=None, token=token)  # something stored already
    kwargs: dict[str, object] = {"team": None, "token": token}
    expected = ""
    if case == "wrong":
        kwargs["token"] = token[:-2] + ("xx" if not token.endswith("xx") else "yy")
        expected = "not valid"
    elif case == "expired":
        with store.writer(db) as con, store.transaction(con):
            kwargs["token"] = auth.issue_token(
                con, "acme", now=store.now(), expires_at=store.now() - timedelta(seconds=1)
            )
        expected = "expired"
    elif case == "revoked":
        with store.writer(db) as con, store.transaction(con):
            auth.revoke_tokens(con, "acme", now=store.now())
        expected = "revoked"
    elif case == "other team":
        kwargs["team"] = "rival"
        expected = "does not belong to team 'rival'"
    else:
        kwargs = {"team": "acme", "token": None}
        expected = "requires a token"
    before = counts(db)
    with pytest.raises(SubmissionRefused) as caught:
        submit_openpi(db, STRONG, **kwargs)
    assert expected in caught.value.message and caught.value.stage == "auth"
    assert counts(db) == before
    (row,) = [f for f in failures(db) if f["receipt_id"] == caught.value.receipt]
    assert row["stage"] == "auth" and expected in str(row["reason"])


def test_a_token_revoked_while_the_file_is_scored_is_refused_at_store_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early check passes; an admin revokes the token during scoring; the store's own check refuses."""
    from procbench.runners.runtime.runner import TaskRunner

    db = tmp_path / "board.duckdb"
    token = _create(db, "acme")
    real = TaskRunner.evaluate_records

    def revoke_then_score(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with store.writer(db) as con, store.transaction(con):
            auth.revoke_tokens(con, "acme", now=store.now())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TaskRunner, "evaluate_records", revoke_then_score)
    before = counts(db)
    with pytest.raises(SubmissionRefused, match="revoked") as caught:
        submit_openpi(db, STRONG, team=None, token=token)
    assert counts(db) == before
    assert [f["stage"] for f in failures(db)] == ["auth"] and failures(db)[0][
        "receipt_id"
    ] == caught.value.receipt


def test_an_expired_token_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    with store.writer(db) as con, store.transaction(con):
        con.execute("INSERT INTO teams (team, created_at) VALUES ('acme', ?)", [store.now()])
        token = auth.issue_token(
            con, "acme", now=store.now(), expires_at=store.now() + timedelta(hours=1)
        )
    assert submit_openpi(db, STRONG, team=None, token=token).created
    with pytest.raises(SubmissionRefused, match="expired"):
        submit_openpi(db, TEMPLATE, team=None, token=token, now=store.now() + timedelta(hours=2))
    assert counts(db)["submissions"] == 1


def test_local_use_without_tokens_keeps_working(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    _create(db, "acme")
    assert submit_openpi(db, STRONG, team="me").team == "me"  # a team without a token
    assert submit_openpi(db, TEMPLATE, team=None).team == "anonymous"
    assert store.is_gated(db)  # acme has a token: intake checks before scoring


def test_a_token_against_a_database_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SubmissionRefused, match="not valid"):
        submit_openpi(tmp_path / "new.duckdb", STRONG, team=None, token="pbt_made_up")


def test_team_token_rotation_and_list(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    first = _create(db, "acme")
    rotated = cli.invoke(app, ["team", "token", "acme", "--revoke-old", "--db", str(db)])
    assert rotated.exit_code == 0
    second = rotated.output.strip()
    with pytest.raises(SubmissionRefused, match="revoked"):
        submit_openpi(db, STRONG, team=None, token=first)
    assert submit_openpi(db, STRONG, team=None, token=second).created
    listing = cli.invoke(app, ["team", "list", "--db", str(db)])
    assert "acme" in listing.output and "1 live token" in listing.output
    revoke = cli.invoke(app, ["team", "revoke", "acme", "--db", str(db)])
    assert revoke.exit_code == 0 and "revoked 1 token" in revoke.output
