"""Issue #33: a partial file (fewer items answered than the split's) is stored whole, shown with its coverage on every
page, and listed unranked on its board (no rank, no tie group) unless the spec declares ``rank_partial = true``.

A store of the bundled PAGED samples on the sample dev split (6 items): two full files (careful-extractor,
activity-chain), the bundled partial one (sloppy-prompt, 5 of 6) and a partial copy of the best file without its
first record (careful-partial, 5 of 6, whose value falls among the full rows').
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from procbench.dsl.tasks import load_task
from procbench.leaderboard import boardview, overview
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, submit
from tests.site_app import info_of, page

SAMPLES = SAMPLE_SUBMISSIONS_DIR / "paged"
FULL = ("careful-extractor", "activity-chain")
PARTIAL = {"sloppy-prompt": "5 / 6 · partial", "careful-partial": "5 / 6 · partial"}


def _store(folder: Path, spec_path: str | Path) -> Path:
    spec, runner = load_task(spec_path)
    db = folder / "board.duckdb"
    cut = folder / "careful-partial.jsonl"
    lines = (
        (SAMPLES / "careful-extractor.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    )
    cut.write_text("".join(lines[1:]), encoding="utf-8")
    files = [SAMPLES / f"{name}.jsonl" for name in (*FULL, "sloppy-prompt")] + [cut]
    for path in files:
        submit(
            SubmissionRequest(split="dev", predictions=path, model=path.stem, team="demo"),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _store(tmp_path_factory.mktemp("partial"), "paged")


def _sid(db: Path, model: str) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT submission_id FROM submissions WHERE model = ?", [model]
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_the_store_keeps_each_files_coverage(store: Path) -> None:
    with duckdb.connect(str(store), read_only=True) as con:
        rows = dict(con.execute("SELECT model, n_answered FROM submissions").fetchall())
    assert rows == {
        "careful-extractor": 6,
        "activity-chain": 6,
        "sloppy-prompt": 5,
        "careful-partial": 5,
    }


def test_partial_rows_are_listed_unranked_after_the_full_rows(store: Path) -> None:
    info = info_of(store, "paged", "dev")
    assert info.rank_partial is False
    view = boardview.build(store, info, interval_rows=10)
    table = view.table
    ranks = dict(zip(table["Model"], table["Rank"]))
    # the full rows ranked 1..N without a gap where a partial row's value lies among them
    assert sorted(ranks[m] for m in FULL) == [1, 2]
    assert ranks["careful-extractor"] == 1 and ranks["activity-chain"] == 2
    assert all(ranks[m] is None for m in PARTIAL)
    assert table["Model"].to_list()[:2] == [
        "careful-extractor",
        "activity-chain",
    ]  # full rows first, partial ones below
    assert dict(zip(table["Model"], table["Coverage"])) == {
        "careful-extractor": "6 / 6",
        "activity-chain": "6 / 6",
        **PARTIAL,
    }
    ties = dict(zip(table["Model"], table["Tie group"]))
    assert all(ties[m] == "" for m in PARTIAL)
    assert view.leader in (None, _sid(store, "careful-extractor"))
    assert not set(view.tied) & {_sid(store, m) for m in PARTIAL}
    # the downloads' rows: the same ranks, the coverage in words and in numbers
    export = dict(
        zip(
            view.export["model"],
            zip(view.export["rank"], view.export["coverage"], view.export["n_answered"]),
        )
    )
    assert export["sloppy-prompt"] == (None, "5 / 6 · partial", 5) and export["activity-chain"] == (
        2,
        "6 / 6",
        6,
    )


def test_home_and_model_ranks_count_only_ranked_rows(store: Path) -> None:
    rows = overview.ranks(store).filter(pl.col("task") == "paged")
    assert set(rows["ranked"].to_list()) == {2}
    by_model = {r["model"]: (r["rank"], r["coverage"]) for r in rows.iter_rows(named=True)}
    assert by_model["careful-partial"] == (None, "5 / 6 · partial") and by_model[
        "activity-chain"
    ] == (2, "6 / 6")


def test_every_page_shows_the_coverage(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    board = page(store, monkeypatch, "board", task="paged", split="dev").dataframe[0].value
    row = board[board["Model"] == "sloppy-prompt"].iloc[0]
    assert (
        row["Coverage"] == "5 / 6 · partial" and row["Rank"] != row["Rank"]
    )  # no rank: an empty (NaN) cell
    assert sorted(board[board["Coverage"] == "6 / 6"]["Rank"].tolist()) == [1, 2]

    sub = page(store, monkeypatch, "submission", id=_sid(store, "sloppy-prompt"))
    assert any("coverage 5 / 6 · partial" in c.value for c in sub.caption)
    assert any("Partial file" in i.value and "not ranked" in i.value for i in sub.info)
    full = page(store, monkeypatch, "submission", id=_sid(store, "activity-chain"))
    assert any("coverage 6 / 6" in c.value for c in full.caption) and not any(
        "Partial file" in i.value for i in full.info
    )

    compare = page(
        store,
        monkeypatch,
        "compare",
        task="paged",
        split="dev",
        a=_sid(store, "careful-partial"),
        b=_sid(store, "activity-chain"),
    )
    sides = [m.value for m in compare.markdown]
    assert any(s.startswith("**A**") and "coverage 5 / 6 · partial" in s for s in sides)
    assert any(s.startswith("**B**") and "coverage 6 / 6" in s for s in sides)

    model = page(store, monkeypatch, "model", model="sloppy-prompt").dataframe[0].value
    assert model["Coverage"].tolist() == ["5 / 6 · partial"] and model["Rank"].isna().all()

    downloads = page(store, monkeypatch, "downloads", task="paged", split="dev").dataframe[0].value
    assert (
        dict(zip(downloads["model"], downloads["coverage"]))["careful-partial"] == "5 / 6 · partial"
    )


def _ranking_partial_spec(folder: Path) -> Path:
    """A copy of the shipped PAGED spec that ranks partial rows (``rank_partial = true``), with its lock."""
    shipped = Path(load_task("paged")[0].path)
    text = shipped.read_text(encoding="utf-8")
    assert "\n  primary     = action\n" in text
    copy = folder / "spec" / "paged.spec"
    copy.parent.mkdir()
    copy.write_text(
        text.replace(
            "\n  primary     = action\n", "\n  primary     = action\n  rank_partial = true\n"
        ),
        encoding="utf-8",
    )
    shutil.copy(shipped.with_suffix(".lock"), copy.with_suffix(".lock"))
    return copy


def test_a_spec_that_ranks_partial_rows_ranks_them_under_the_same_fingerprint(
    tmp_path: Path,
) -> None:
    copy = _ranking_partial_spec(tmp_path)
    spec, runner = load_task(copy)
    assert spec.rank_partial is True
    assert (
        runner.spec_digest == load_task("paged")[1].spec_digest
    )  # a ranking setting: the fingerprint is the shipped spec's

    db = _store(tmp_path, copy)
    info = info_of(db, "paged", "dev")
    assert info.rank_partial is True
    table = boardview.build(db, info, interval_rows=0).table
    ranks = dict(zip(table["Model"], table["Rank"]))
    assert sorted(ranks.values()) == [
        1,
        2,
        3,
        4,
    ]  # every row ranked, the partial ones among the full ones by value
    by_value = sorted(zip(table["Action F1"], table["Model"]), reverse=True)  # no two equal here
    assert [ranks[m] for _, m in by_value] == [1, 2, 3, 4] and ranks["sloppy-prompt"] == 4
    assert dict(zip(table["Model"], table["Coverage"]))["sloppy-prompt"] == "5 / 6 · partial"


def test_a_display_setting_changed_under_the_same_fingerprint_reaches_the_board_with_the_next_write(
    tmp_path: Path,
) -> None:
    # a store built under the shipped spec (partial rows unranked), then one more file submitted under a spec that
    # differs only in rank_partial: same fingerprint, so the stored spec is refreshed and the board follows it
    db = _store(tmp_path, "paged")
    assert info_of(db, "paged", "dev").rank_partial is False
    shipped = Path(load_task("paged")[0].path)
    copy = tmp_path / "spec" / "paged.spec"
    copy.parent.mkdir()
    copy.write_text(
        shipped.read_text(encoding="utf-8").replace(
            "\n  primary     = action\n", "\n  primary     = action\n  rank_partial = true\n"
        ),
        encoding="utf-8",
    )
    shutil.copy(shipped.with_suffix(".lock"), copy.with_suffix(".lock"))
    spec, runner = load_task(copy)
    other = (
        tmp_path / "careful-but-last.jsonl"
    )  # a file of its own (a stored file is refused as a duplicate)
    other.write_text(
        "".join(
            (SAMPLES / "careful-extractor.jsonl")
            .read_text(encoding="utf-8")
            .splitlines(keepends=True)[:-1]
        ),
        encoding="utf-8",
    )
    submit(
        SubmissionRequest(split="dev", predictions=other, model="again", team="demo"),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(
            "SELECT count(*) FROM tasks WHERE task = 'paged' AND split = 'dev'"
        ).fetchone() == (1,)  # no second fingerprint
    info = info_of(db, "paged", "dev")
    assert info.rank_partial is True
    ranks = dict(zip(*boardview.build(db, info, interval_rows=0).table.select("Model", "Rank")))
    assert ranks["sloppy-prompt"] is not None and ranks["careful-partial"] is not None


def test_rank_partial_ranks_partial_rows_by_the_primary_metric_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #30 (real-data review): PM-LLM ranks its text-only files by the text score (rank_partial); ranked by another
    metric (its image-question slice falls back to the total) their unanswered questions counted as answers, eight rows
    sharing rank 8 at 0.00. A spec's rank_partial ranks partial rows by its primary metric only; by any other they are
    listed unranked after the full rows, and the board says why."""
    db = _store(tmp_path, _ranking_partial_spec(tmp_path))
    info = info_of(db, "paged", "dev")
    assert info.rank_partial is True and info.primary == "action"

    by_primary = boardview.build(db, info, interval_rows=0)
    assert by_primary.partial_unranked == 0
    assert by_primary.table["Rank"].null_count() == 0  # every row ranked, as the spec says

    other = next(m.name for m in info.metrics if m.name != info.primary)
    by_other = boardview.build(db, info, sort_metric=other, interval_rows=0)
    table = by_other.table
    ranks = dict(zip(table["Model"], table["Rank"]))
    assert ranks["sloppy-prompt"] is None and ranks["careful-partial"] is None
    assert sorted(r for r in ranks.values() if r is not None) == [1, 2]  # the two full rows
    assert set(table["Model"].to_list()[-2:]) == set(PARTIAL)  # listed after the full rows
    assert by_other.partial_unranked == 2

    at = page(db, monkeypatch, "board", task="paged", split="dev", sort=other)
    said = [c.value for c in at.caption if "partial row" in c.value]
    assert said and said[0].startswith("2 partial rows are listed unranked")
    assert info.metric(info.primary).display in said[0]
    shown = at.dataframe[0].value
    assert shown[shown["Model"].isin(list(PARTIAL))]["Rank"].isna().all()
    assert not any(
        "partial row" in c.value
        for c in page(db, monkeypatch, "board", task="paged", split="dev").caption
    )
