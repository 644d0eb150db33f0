"""Issue #17, names and stored text: one name normaliser (impersonation, reserved names), stored text
escaped for the terminal and for Markdown, no store created by a refusal, orphan raw files found and
collected."""

from __future__ import annotations

import gzip
import hashlib
import unicodedata
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.cli import app
from procbench.export.hub_dataset import render_card
from procbench.submissions import auth, blobs, store
from procbench.submissions.details import MAX_NAME_CHARS, DetailError, check_name
from procbench.submissions.errors import RejectedPredictions, ScoringFailed, SubmissionRefused
from tests.test_submissions_support import (
    NO_CHANGE,
    STRONG,
    TEMPLATE,
    counts,
    failures,
    query,
    submit_openpi,
)

cli = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "board.duckdb"
    submit_openpi(path, NO_CHANGE, team="earlier")
    return path


def _create(db: Path, team: str) -> str:
    with store.writer(db) as con, store.transaction(con):
        return auth.create_team(con, team, now=store.now())


# -- 1. names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "ac\u200bme",  # zero-width space
        "acme\u202egpj.exe",  # right-to-left override
        "\ufeffacme",  # byte-order mark
        "ac\u2060me",  # word joiner
        "acme\U000e0041",  # tag character
        "acme\x1b[2J",  # terminal escape
        "acme\u2028x",  # line separator
        " acme",
        "acme ",
        "acme\u00a0",  # no-break space at the end
        "\u3000acme",  # ideographic space
    ],
)
def test_invisible_characters_and_edge_spaces_are_refused_in_names(name: str) -> None:
    for kind in ("team", "model"):
        with pytest.raises(DetailError):
            check_name(kind, name)


@given(
    st.text(min_size=1, max_size=20),
    st.characters(categories=["Cf", "Cc"]),
    st.integers(min_value=0, max_value=20),
)
@settings(max_examples=200, deadline=None)
def test_any_name_holding_a_format_or_control_character_is_refused(
    text: str, bad: str, at: int
) -> None:
    with pytest.raises(DetailError):
        check_name("team", text[:at] + bad + text[at:])


@pytest.mark.parametrize(
    "name",
    ["reference", "Reference", "REFERENCE", "r e f e r e n c e", "ｒｅｆｅｒｅｎｃｅ", "rеference"],
)  # last: Cyrillic е
def test_the_reference_team_is_reserved(name: str, db: Path) -> None:
    with pytest.raises(DetailError, match="reserved"):
        check_name("team", name)
    check_name("model", name)  # only a team name is reserved
    before = counts(db)
    with pytest.raises(SubmissionRefused) as refused:
        submit_openpi(db, TEMPLATE, team=name)
    assert refused.value.stage == "request" and "reserved" in refused.value.message
    assert counts(db) == before


@pytest.mark.parametrize(
    "variant",
    [
        "ACME",
        "Acme",
        "a c m e",
        "Ａｃｍｅ",
        "𝐚𝐜𝐦𝐞",
        "аcme",
        "acmе",
        "ÁCME",
        "acrne",
    ],  # fullwidth, maths bold, Cyrillic а / е, accent, rn for m
)
def test_look_alikes_of_a_token_protected_team_need_its_token(variant: str, db: Path) -> None:
    token = _create(db, "acme")
    before = counts(db)
    with pytest.raises(SubmissionRefused) as refused:
        submit_openpi(db, TEMPLATE, team=variant)
    assert (
        refused.value.stage == "auth"
        and "'acme'" in refused.value.message
        and "requires a token" in refused.value.message
    )
    assert counts(db) == before
    # with the team's own token the variant is the team itself, stored under its one spelling
    outcome = submit_openpi(db, TEMPLATE, team=variant, token=token)
    assert outcome.team == "acme" and query(
        db, "SELECT DISTINCT team FROM submissions WHERE team <> 'earlier'"
    ) == [("acme",)]
    # and no second team may be created under a look-alike name
    with pytest.raises(ValueError, match="too close to the existing team 'acme'"):
        _create(db, variant)


@pytest.mark.parametrize(
    "name",
    [
        "anonymous",
        "Anonymous",
        "ANONYMOUS",
        "a n o n y m o u s",
        "ａｎｏｎｙｍｏｕｓ",
        "an0nymous",
        "anоnymous",
    ],
)  # last: Cyrillic о
def test_the_anonymous_team_cannot_be_created_or_given_a_token(name: str, db: Path) -> None:
    """`anonymous` is where token-less submissions go: a token on it (or a look-alike) would lock everyone out."""
    result = cli.invoke(app, ["team", "create", name, "--db", str(db)])
    assert result.exit_code == 5 and "reserved" in result.output, result.output
    with pytest.raises(DetailError, match="reserved"):
        _create(db, name)
    with (
        store.writer(db) as con,
        store.transaction(con),
    ):  # a store from before the reservation may hold the team
        con.execute("INSERT INTO teams (team, created_at) VALUES (?, ?)", [name, store.now()])
    result = cli.invoke(app, ["team", "token", name, "--db", str(db)])
    assert result.exit_code == 5 and "reserved" in result.output, result.output
    # submitting under it needs no token, by default or by name
    assert submit_openpi(db, TEMPLATE, team=None).team == "anonymous"
    assert submit_openpi(db, NO_CHANGE, team="anonymous").team == "anonymous"


def test_unrelated_names_are_still_free(db: Path) -> None:
    _create(db, "acme")
    assert submit_openpi(db, TEMPLATE, team="acme labs").team == "acme labs"
    from procbench.submissions.details import name_key

    assert name_key("acme") != name_key("acme labs") and name_key("Beta Team") == name_key(
        "beta  team"
    )


def test_a_refused_over_long_name_is_stored_cut(db: Path) -> None:
    long_name = "x" * 5_000_000
    with pytest.raises(SubmissionRefused) as refused:
        submit_openpi(db, TEMPLATE, team=long_name, model=long_name)
    assert f"longer than {MAX_NAME_CHARS} characters" in refused.value.message
    (row,) = [r for r in failures(db) if r["receipt_id"] == refused.value.receipt]
    for column in ("team", "model"):
        assert (
            len(row[column]) <= MAX_NAME_CHARS + 40
            and row[column].startswith("x" * 100)
            and "more characters" in row[column]
        )


# -- 2. stored text in a terminal and in Markdown -----------------------------------------------------


def test_admin_receipt_escapes_what_the_submitter_wrote(db: Path, tmp_path: Path) -> None:
    model = "\x1b]0;pwned\x07\x1b[2J m\u202e"
    split = "te\x1b[31mst\rfake"
    with pytest.raises(SubmissionRefused) as refused:
        submit_openpi(db, TEMPLATE, model=model)
    with pytest.raises(SubmissionRefused) as bad_split:
        submit_openpi(db, TEMPLATE, split=split)
    bad_line = tmp_path / "p.jsonl"
    bad_line.write_text('{"id": "\x1b[31mred\x9b2J", "answers": 1}\n')
    with pytest.raises(RejectedPredictions) as rejected:
        submit_openpi(db, bad_line)
    for receipt in (refused.value.receipt, bad_split.value.receipt, rejected.value.receipt):
        result = cli.invoke(app, ["admin", "receipt", receipt, "--db", str(db)])
        assert result.exit_code == 0, result.output
        assert not any(
            unicodedata.category(c) in ("Cc", "Cf") for c in result.output if c != "\n"
        ), repr(result.output)
    shown = cli.invoke(app, ["admin", "receipt", refused.value.receipt, "--db", str(db)]).output
    assert "model \\x1b]0;pwned\\x07\\x1b[2J m\\u202e" in shown
    assert (
        len(
            cli.invoke(
                app, ["admin", "receipt", bad_split.value.receipt, "--db", str(db)]
            ).output.splitlines()
        )
        == 2
    )  # \r and \n stay escaped in the header


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_terminal_text_has_no_control_or_invisible_characters(text: str) -> None:
    from procbench.submissions.display import for_terminal

    for c in for_terminal(text):
        assert unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")
    kept = for_terminal(text, newlines=True)
    assert kept.count("\n") == text.count("\n") and "\r" not in kept


def _bare(text: str) -> str:
    """The characters of Markdown ``text`` that no backslash escapes (a backslash escapes the next character)."""
    out, escaped = "", False
    for c in text:
        if not escaped and c != "\\":
            out += c
        escaped = c == "\\" and not escaped
    return out


def _cells(row: str) -> list[str]:
    """A Markdown table row split at its unescaped pipes."""
    cells, cell, escaped = [], "", False
    for c in row:
        if c == "|" and not escaped:
            cells.append(cell)
            cell = ""
        else:
            cell += c
        escaped = c == "\\" and not escaped
    return [*cells, cell]


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_markdown_text_is_one_cell_of_plain_text(text: str) -> None:
    from procbench.submissions.display import for_markdown

    shown = for_markdown(text)
    assert "\n" not in shown and len(_cells(f"| {shown} |")) == 3
    assert not set(_bare(shown)) & set("[]<>`*_|!&$")  # every markup character is escaped


def _card_task(model: str, team: str) -> dict[str, object]:
    metric = {
        "name": "f1",
        "display": "F1",
        "group": "main",
        "description": "the F1",
        "higher_is_better": True,
        "percent": False,
    }
    best = {"model": model, "team": team, "f1": 0.5}
    split = {
        "file": "data/t/test.parquet",
        "fingerprint": "f",
        "hidden": False,
        "submissions": 1,
        "rows": 1,
        "best": best,
    }
    return {
        "task": "t",
        "title": "T",
        "benchmark": "B",
        "primary": "f1",
        "url": "",
        "citation": "",
        "spec_license": "MIT",
        "license": "mit",
        "data_licence": "MIT",
        "data_licence_source": "x",
        "metrics": [metric],
        "splits": {"test": split},
    }


def test_the_hub_card_escapes_names_in_its_tables() -> None:
    model = "m | evil | cells\nrow"
    team = "[click me](https://evil.example/) <img src=x onerror=alert(1)> **bold** ![i](https://evil.example/i.png)"
    card = render_card({"t": _card_task(model, team)})
    (row,) = [line for line in card.splitlines() if line.startswith("| `t` |")]
    cells = _cells(row)
    assert len(cells) == 8, row  # 6 columns, as in the header
    assert not set(_bare(cells[6])) & set("[]<>*!") and "**bold**" not in card
    assert "evil" in cells[6] and "click me" in cells[6]
    assert (
        len([line for line in card.splitlines() if "evil" in line]) == 1
    )  # the newline did not start a row


# -- 3. no store from a refusal; orphan raw files -------------------------------------------------------


@pytest.mark.parametrize("case", ["bad model name", "unknown split", "invalid file", "token"])
def test_a_refused_request_creates_no_store(case: str, tmp_path: Path) -> None:
    db = tmp_path / "new" / "board.duckdb"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    kwargs = {
        "bad model name": {"model": "m\x00"},
        "unknown split": {"split": "nope"},
        "invalid file": {},
        "token": {"token": "pbt_x"},
    }[case]
    with pytest.raises((SubmissionRefused, RejectedPredictions)):
        submit_openpi(db, bad if case == "invalid file" else TEMPLATE, **kwargs)
    assert not (tmp_path / "new").exists() or list((tmp_path / "new").iterdir()) == []
    # the same store is created by the first submission that succeeds
    assert submit_openpi(db, TEMPLATE).created and db.exists()


def test_admin_commands_on_a_missing_store_create_none(tmp_path: Path) -> None:
    db = tmp_path / "none.duckdb"
    for args in (
        ["admin", "hide", "abcdef"],
        ["team", "revoke", "acme"],
        ["team", "token", "acme"],
        ["team", "create", "reference"],
        ["team", "create", "Anonymous"],
        ["admin", "receipt", "abc"],
        ["admin", "check"],
        ["admin", "quota", "openpi", "--per-day=-1"],
        ["admin", "quota", "openpi", "--max-attempts=-3", "--split", "test"],
    ):
        result = cli.invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 5, (args, result.output)
        assert list(tmp_path.iterdir()) == [], args


def _fail_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise duckdb.IOException("disk trouble (test)")

    monkeypatch.setattr(store, "insert_submission", broken)


def test_admin_check_finds_orphan_and_missing_raw_files_and_fix_collects_orphans(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        _fail_the_store(patch)
        with pytest.raises(ScoringFailed):
            submit_openpi(db, STRONG)
    orphan = blobs.location_of(hashlib.sha256(STRONG.read_bytes()).hexdigest())
    assert blobs.blob_path(db, orphan).is_file()  # the failed store left its blob
    checked = cli.invoke(app, ["admin", "check", "--db", str(db)])
    assert checked.exit_code == 1 and f"orphan raw file {orphan}" in checked.output, checked.output
    # the other direction: a row whose blob is gone
    (stored,) = query(db, "SELECT location FROM raw_files")
    kept = blobs.blob_path(db, stored[0]).read_bytes()
    blobs.blob_path(db, stored[0]).unlink()
    both = cli.invoke(app, ["admin", "check", "--db", str(db)])
    assert (
        both.exit_code == 1
        and "is missing from" in both.output
        and f"orphan raw file {orphan}" in both.output
    )
    blobs.blob_path(db, stored[0]).write_bytes(kept)
    fixed = cli.invoke(app, ["admin", "check", "--fix", "--db", str(db)])
    assert (
        fixed.exit_code == 0
        and "removed 1 orphan raw file" in fixed.output
        and orphan in fixed.output
    ), fixed.output
    assert not blobs.blob_path(db, orphan).exists() and blobs.blob_path(db, stored[0]).is_file()
    assert cli.invoke(app, ["admin", "check", "--db", str(db)]).exit_code == 0
    # the file can still be stored, with its blob
    outcome = submit_openpi(db, STRONG)
    assert outcome.created and blobs.blob_path(db, orphan).is_file()
    with gzip.open(blobs.blob_path(db, orphan)) as packed:
        assert packed.read() == STRONG.read_bytes()


def test_a_blob_collected_between_writing_it_and_storing_is_written_again(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.submissions.admin import collect_orphans

    real_writer = store.writer
    collected: list[str] = []

    armed = [True]

    def writer_after_gc(path: Path, **kwargs: object):  # type: ignore[no-untyped-def]
        if armed.pop() if armed else False:
            collected.extend(
                collect_orphans(db)
            )  # an admin's `check --fix` just before intake takes the lock
        return real_writer(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "writer", writer_after_gc)
    outcome = submit_openpi(db, STRONG)
    monkeypatch.undo()
    assert outcome.created and collected  # the new blob was collected as an orphan...
    (location,) = query(
        db,
        "SELECT location FROM raw_files WHERE content_sha256 = ?",
        [hashlib.sha256(STRONG.read_bytes()).hexdigest()],
    )
    assert blobs.blob_path(db, location[0]).is_file()  # ...and written again under the lock
    assert cli.invoke(app, ["admin", "check", "--db", str(db)]).exit_code == 0
