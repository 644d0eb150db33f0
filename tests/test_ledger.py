"""Issue #34: the public submission ledger (attempts, refusals, hidden and retracted rows) and its export.

Real intake on the bundled OpenPI samples: files stored, a file refused at validation, a row hidden and one
deleted by the admin commands; one store with a hidden split, whose figures must not reach the ledger.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.runners.runtime._types import InvalidPredictions
from procbench.submissions import queries
from procbench.submissions.admin import apply
from procbench.submissions.ledger import EVENT_COLUMNS, SUMMARY_COLUMNS, export_ledger, ledger
from tests.test_submissions_support import (
    STRONG,
    TEMPLATE,
    dev_predictions,
    hidden_test_spec,
    query,
    submit_openpi,
    variant,
)

cli = CliRunner()
DAY = datetime(2026, 3, 1, 12, 0)


def _broken(folder: Path) -> Path:
    path = folder / "broken.jsonl"
    path.write_text(
        '{"id": "x", "answers": ["refused answer text 4711"]}\nnot json at all\n', encoding="utf-8"
    )
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("ledger")
    db = folder / "board.duckdb"
    ids = {
        "a1": submit_openpi(db, STRONG, team="acme", model="alpha").submission_id,
        "a2": submit_openpi(db, variant(folder, 1), team="acme", model="alpha").submission_id,
        "b1": submit_openpi(db, TEMPLATE, team="beta", model="bravo").submission_id,
    }
    for _ in range(2):
        with pytest.raises(InvalidPredictions):
            submit_openpi(db, _broken(folder), team="acme", model="alpha")
    apply(db, ids["a2"], "hide", reason="duplicate of alpha's first file", actor="op", now=DAY)
    apply(db, ids["b1"], "delete", reason="the team asked to retract it", actor="op", now=DAY)
    return db, ids


def test_the_ledger_counts_attempts_refusals_hides_and_retractions(
    store: tuple[Path, dict[str, str]],
) -> None:
    db, _ = store
    found = ledger(db)
    rows = {(r["team"], r["model"]): r for r in found.summary.to_dicts()}
    assert set(rows) == {
        ("acme", "alpha"),
        ("beta", "bravo"),
    }  # papers' rows (team reference) are not submissions
    alpha, bravo = rows["acme", "alpha"], rows["beta", "bravo"]
    assert (
        alpha["attempts"],
        alpha["stored"],
        alpha["refused"],
        alpha["hidden"],
        alpha["retracted"],
    ) == (4, 2, 2, 1, 0)
    assert (
        bravo["attempts"],
        bravo["stored"],
        bravo["refused"],
        bravo["hidden"],
        bravo["retracted"],
    ) == (1, 1, 0, 0, 1)
    # the same numbers as the store's own tables, counted another way
    assert query(
        db, "SELECT count(*) FROM failures WHERE team = 'acme' AND stage = 'validate'"
    ) == [(2,)]
    events = found.events.to_dicts()
    assert [(e["team"], e["action"], e["reason"], e["at"]) for e in events] == [
        ("acme", "hidden", "duplicate of alpha's first file", DAY),
        ("beta", "deleted", "the team asked to retract it", DAY),
    ]
    assert (
        tuple(found.summary.columns) == SUMMARY_COLUMNS
        and tuple(found.events.columns) == EVENT_COLUMNS
    )


def test_a_rescored_copy_is_not_another_attempt_and_unhiding_is_an_event(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    sid = submit_openpi(db, STRONG, team="acme", model="alpha").submission_id
    apply(db, sid, "hide", reason="checking", now=DAY)
    apply(db, sid, "unhide", reason="checked", now=DAY.replace(hour=13))
    found = ledger(db)
    assert found.summary.select("attempts", "stored", "hidden").rows() == [(1, 1, 0)]
    assert found.events.select("action", "reason").rows() == [
        ("hidden", "checking"),
        ("unhidden", "checked"),
    ]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_export_ledger_writes_what_the_ledger_holds(
    store: tuple[Path, dict[str, str]], tmp_path: Path, fmt: str
) -> None:
    db, _ = store
    out = tmp_path / f"ledger.{fmt}"
    result = cli.invoke(app, ["export", "ledger", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 2 rows" in result.output
    if fmt == "json":
        document = json.loads(out.read_text(encoding="utf-8"))
        assert [(r["team"], r["attempts"], r["refused"]) for r in document["summary"]] == [
            ("acme", 4, 2),
            ("beta", 1, 0),
        ]
        assert [e["action"] for e in document["events"]] == ["hidden", "deleted"]
    else:
        rows = list(csv.DictReader(out.open(encoding="utf-8")))
        assert [(r["team"], r["attempts"], r["hidden"], r["retracted"]) for r in rows] == [
            ("acme", "4", "1", "0"),
            ("beta", "1", "0", "1"),
        ]
        assert rows[0]["events"] == "2026-03-01 hidden: duplicate of alpha's first file"
        assert rows[1]["events"] == "2026-03-01 deleted: the team asked to retract it"


def test_export_ledger_refuses_an_unknown_format_and_a_missing_store(
    store: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db, _ = store
    result = cli.invoke(
        app, ["export", "ledger", "--db", str(db), "--out", str(tmp_path / "ledger.xlsx")]
    )
    assert result.exit_code == 5 and "unknown ledger format 'xlsx'" in result.output
    missing = tmp_path / "none.duckdb"
    result = cli.invoke(
        app, ["export", "ledger", "--db", str(missing), "--out", str(tmp_path / "l.json")]
    )
    assert (
        result.exit_code == 5 and "no procbench database" in result.output and not missing.exists()
    )


def test_the_ledger_publishes_no_figure_of_a_hidden_split(tmp_path: Path) -> None:
    """A hidden split's scores, slices and items, a refused file's reason and a submission id never reach the ledger."""
    db = tmp_path / "board.duckdb"
    spec_file = hidden_test_spec(tmp_path)
    hidden = submit_openpi(
        db, STRONG, spec_file=spec_file, split="test", team="acme", model="alpha"
    ).submission_id
    kept = submit_openpi(
        db, variant(tmp_path, 2), spec_file=spec_file, split="test", team="acme", model="alpha"
    ).submission_id
    submit_openpi(
        db, dev_predictions(tmp_path), spec_file=spec_file, split="dev", team="acme", model="alpha"
    )
    with pytest.raises(InvalidPredictions):
        submit_openpi(
            db, _broken(tmp_path), spec_file=spec_file, split="test", team="acme", model="alpha"
        )
    apply(db, hidden, "hide", reason="withdrawn by the team", now=DAY)
    assert queries.split_is_hidden(db, "openpi", "test")
    for fmt in ("json", "csv"):
        out = tmp_path / f"ledger.{fmt}"
        export_ledger(db, out)
        text = out.read_text(encoding="utf-8")
        # every stored figure of the hidden split (the hidden submission's and the visible one's, whole split and slices), in any spelling
        figures = {
            v
            for (v,) in query(
                db,
                "SELECT value FROM aggregates a JOIN submissions s USING (submission_id) WHERE s.split = 'test'",
            )
        }
        figures |= {
            v
            for (v,) in query(
                db,
                "SELECT value FROM item_scores i JOIN submissions s USING (submission_id) WHERE s.split = 'test'",
            )
        }
        spelled = {f"{v!r}" for v in figures if v not in (0.0, 1.0)} | {
            f"{v:.4f}" for v in figures if v not in (0.0, 1.0)
        }
        assert not [s for s in spelled if s in text], fmt
        assert hidden not in text and kept not in text  # no submission ids
        assert (
            "refused answer text 4711" not in text and "not json" not in text
        )  # a refusal's reason stays with its receipt
        items = [
            i
            for (i,) in query(
                db,
                "SELECT DISTINCT item_id FROM item_scores i JOIN submissions s USING (submission_id) WHERE s.split = 'test'",
            )
        ]
        assert not [i for i in items if f'"{i}"' in text or f",{i}," in text]
    found = ledger(db)
    test_row = found.summary.filter(found.summary["split"] == "test").row(0, named=True)
    assert (test_row["attempts"], test_row["stored"], test_row["refused"], test_row["hidden"]) == (
        3,
        2,
        1,
        1,
    )
    # the ledger's columns are counts, names, dates and reasons: nothing that could hold a figure
    assert {c for c, t in found.summary.schema.items() if t.is_float()} == set()


def test_the_ledger_page_shows_the_counts_and_events_and_filters_by_team(
    store: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.site_app import page

    db, _ = store
    at = page(db, monkeypatch, "ledger")
    summary, events = (pl.from_pandas(frame.value) for frame in at.dataframe[:2])
    assert summary.select("Team", "Model", "Attempts", "Refused", "Hidden", "Retracted").rows() == [
        ("acme", "alpha", 4, 2, 1, 0),
        ("beta", "bravo", 1, 0, 0, 1),
    ]
    assert events.select("Team", "Action", "Reason").rows() == [
        ("acme", "hidden", "duplicate of alpha's first file"),
        ("beta", "deleted", "the team asked to retract it"),
    ]
    assert not [c for c in summary.columns if c.lower() in ("value", "score", "submission_id")]
    narrowed = page(db, monkeypatch, "ledger", team="beta")
    assert pl.from_pandas(narrowed.dataframe[0].value)["Team"].to_list() == ["beta"]
    assert pl.from_pandas(narrowed.dataframe[1].value)["Action"].to_list() == ["deleted"]
    assert any("1 attempts" in c.value for c in narrowed.caption)
