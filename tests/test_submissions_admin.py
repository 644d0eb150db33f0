"""Admin: hide / unhide / delete / restore with history, the consistency check, receipts, export."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.submissions import load_reported, queries
from procbench.submissions.admin import apply, check_consistency
from procbench.submissions.export import board_frame
from tests.test_submissions_support import NO_CHANGE, STRONG, TEMPLATE, query, submit_openpi

cli = CliRunner()


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "board.duckdb"
    for sample in (STRONG, TEMPLATE, NO_CHANGE):
        submit_openpi(path, sample, model=sample.stem, team="demo")
    spec, runner = load_task("openpi")
    load_reported(spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=path)
    return path


def _board_models(db: Path) -> set[str]:
    return {r[0] for r in query(db, "SELECT DISTINCT model FROM board")}


def _sid(db: Path, model: str) -> str:
    return query(db, "SELECT submission_id FROM submissions WHERE model = ?", [model])[0][0]  # type: ignore[return-value]


def test_hide_unhide_delete_restore_keep_rows_and_history(db: Path) -> None:
    sid = _sid(db, "strong-model")
    for command, on_board in (
        ("hide", False),
        ("unhide", True),
        ("delete", False),
        ("restore", True),
    ):
        result = cli.invoke(
            app, ["admin", command, sid[:8], "--reason", f"because {command}", "--db", str(db)]
        )
        assert result.exit_code == 0, result.output
        assert ("strong-model" in _board_models(db)) is on_board
    assert query(db, "SELECT count(*) FROM submissions WHERE submission_id = ?", [sid]) == [(1,)]
    history = queries.status_history(db, sid)
    assert history["status"].to_list() == [
        "received",
        "validated",
        "scored",
        "hidden",
        "unhidden",
        "deleted",
        "restored",
    ]
    assert (
        history["reason"].to_list()[-1] == "because restore"
        and history["actor"].to_list()[-1] != ""
    )


def test_admin_actions_on_unknown_or_ambiguous_ids(db: Path) -> None:
    with pytest.raises(LookupError, match="no submission"):
        apply(db, "ffffffffffff", "hide")
    assert cli.invoke(app, ["admin", "hide", "nope", "--db", str(db)]).exit_code == 5
    with pytest.raises(ValueError, match="unknown action"):
        apply(db, _sid(db, "strong-model"), "drop")


def test_a_consistent_store_checks_clean_and_a_torn_one_does_not(db: Path) -> None:
    assert check_consistency(db) == []
    assert cli.invoke(app, ["admin", "check", "--db", str(db)]).exit_code == 0
    import duckdb

    torn = _sid(db, "template-guesser")
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM aggregates WHERE submission_id = ?", [torn])
    con.close()
    assert check_consistency(db) == [f"submission {torn} has no aggregates"]
    assert cli.invoke(app, ["admin", "check", "--db", str(db)]).exit_code == 1


def test_reference_rows_are_flagged_and_reloading_them_is_idempotent(db: Path) -> None:
    spec, runner = load_task("openpi")
    before = query(db, "SELECT count(*) FROM submissions")[0][0]
    ids = load_reported(spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db)
    assert ids and query(db, "SELECT count(*) FROM submissions")[0][0] == before
    assert query(
        db,
        "SELECT DISTINCT is_reference, team FROM submissions WHERE submission_id IN (SELECT unnest(?))",
        [ids],
    ) == [(True, "reference")]


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_export_round_trips_the_board(fmt: str, db: Path, tmp_path: Path) -> None:
    apply(db, _sid(db, "no-change-baseline"), "hide")
    out = tmp_path / f"board.{fmt}"
    result = cli.invoke(
        app, ["export", "board", "--format", fmt, "--out", str(out), "--db", str(db)]
    )
    assert result.exit_code == 0, result.output
    expected = board_frame(db)
    read = {"csv": pl.read_csv, "parquet": pl.read_parquet, "json": pl.read_json}[fmt](out)
    assert read.height == expected.height and f"wrote {expected.height} rows" in result.output
    assert set(read["model"].to_list()) == {
        "strong-model",
        "template-guesser",
        *[m for m in expected["model"].unique().to_list()],
    }
    assert "no-change-baseline" not in read["model"].to_list()
    assert sorted(read["value"].to_list()) == pytest.approx(sorted(expected["value"].to_list()))
    if fmt == "json":
        assert isinstance(json.loads(out.read_text()), list)


def test_export_one_task_and_unknown_task(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    assert (
        cli.invoke(
            app, ["export", "board", "--task", "openpi", "--out", str(out), "--db", str(db)]
        ).exit_code
        == 0
    )
    assert set(pl.read_csv(out)["task"].to_list()) == {"openpi"}
    missing = cli.invoke(
        app, ["export", "board", "--task", "nope", "--out", str(out), "--db", str(db)]
    )
    assert missing.exit_code == 5 and "no task 'nope'" in missing.output
    assert (
        cli.invoke(
            app, ["export", "board", "--format", "xlsx", "--out", str(out), "--db", str(db)]
        ).exit_code
        == 5
    )


def test_model_card_is_stored_and_exported(tmp_path: Path) -> None:
    from procbench.submissions.details import DetailError, ModelCard

    db = tmp_path / "b.duckdb"
    card = ModelCard(
        size_class="Medium",
        weights="open",
        method_family="llm",
        paper_url="https://arxiv.org/abs/1",
        code_url="http://github.com/x/y",
        description="line one\nline two",
    )
    sid = submit_openpi(db, STRONG, card=card).submission_id
    row = queries.submission(db, sid)
    assert (row["size_class"], row["weights"], row["method_family"], row["description"]) == (
        "medium",
        "open",
        "llm",
        "line one\nline two",
    )
    assert set(board_frame(db)["method_family"].unique().to_list()) == {"llm"}
    for bad in (
        ModelCard(paper_url="javascript:alert(1)"),
        ModelCard(code_url="file:///etc/passwd"),
        ModelCard(size_class="huge"),
        ModelCard(weights="leaked"),
    ):
        with pytest.raises(DetailError):
            bad.checked()
