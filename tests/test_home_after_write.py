"""Home's first view after a write rebuilds only what is new (issue #31), and reads the same rows it did.

* A whole-split board is read from ``board_packed`` (migration 011): the same frame as the ``board`` view gives
  (every current board of a store with papers' rows, a re-score, hidden and deleted rows, a hidden split).
* Building a board again after one more submission makes one model card, for the new row; the cards of the rows
  it had are kept (``boardview._card``), as are their metadata's judging facts.
* Home's ranks (``build(display=False)``) are the board page's ranks, without its display table.
* ``ui.text_px`` measures a polars column as it measures the same values as a list.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from procbench.bench.site_stores import generate
from procbench.leaderboard import boardview, cache, metadata, overview, queries, sitedata, ui
from procbench.leaderboard.model import TaskInfo
from procbench.submissions import admin
from tests.test_submissions_support import NO_CHANGE, STRONG, TEMPLATE, submit_openpi, variant


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("home-after-write") / "board.duckdb"
    generate(db, 24, seed=5, log=lambda _: None)
    ids = [submit_openpi(db, p, model=p.stem).submission_id for p in (STRONG, TEMPLATE, NO_CHANGE)]
    admin.apply(db, ids[1], "hide", reason="test", actor="op")
    admin.apply(db, ids[2], "delete", reason="test", actor="op")
    return db


def _infos(db: Path) -> list[TaskInfo]:
    return [TaskInfo.from_row(r) for r in sitedata.tasks(db).iter_rows(named=True)]


def test_a_whole_split_board_read_packed_is_the_board_views(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    infos = _infos(store)
    assert len(infos) >= 5
    packed = {(i.task, i.split): queries.board(store, i.task, i.split) for i in infos}
    monkeypatch.setattr(queries, "_has_view", lambda con, name: False)  # read as before 011
    for (task, split), got in packed.items():
        want = queries.board(store, task, split)
        assert got.height == want.height > 0, (task, split)
        assert_frame_equal(got.sort("submission_id"), want.sort("submission_id"), check_exact=True)


def test_a_board_built_again_after_a_write_makes_only_the_new_rows_card(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[object] = []
    real = metadata.card

    def counted(row: dict[str, object]) -> metadata.Card:
        made.append(row.get("metadata_json"))
        return real(row)

    monkeypatch.setattr(metadata, "card", counted)
    boardview._card.cache_clear()
    info = next(i for i in _infos(store) if i.task == "openpi" and i.split == "test")
    first = boardview.build(store, info, interval_rows=0, display=False)
    assert len(made) == first.export.height > 3
    made.clear()
    submit_openpi(
        store, variant(tmp_path, 1), model="strong-again", metadata={"note": "home after write"}
    )
    cache.clear()
    info = next(i for i in _infos(store) if i.task == "openpi" and i.split == "test")
    again = boardview.build(store, info, interval_rows=0, display=False)
    assert again.export.height == first.export.height + 1
    assert len(made) == 1 and "home after write" in str(made[0])


def test_home_ranks_are_the_board_pages_ranks_without_its_table(store: Path) -> None:
    for info in _infos(store):
        shown = boardview.build(store, info, interval_rows=0)
        ranks = boardview.build(store, info, interval_rows=0, display=False)
        assert ranks.table.is_empty() and not shown.table.is_empty()
        assert "above_range" not in ranks.export.columns
        assert_frame_equal(ranks.export, shown.export.drop("above_range"), check_exact=True)
        assert shown.table["Rank"].to_list() == ranks.export["rank"].to_list()


def test_a_model_pages_address_is_quoted_once_per_name() -> None:
    overview._page.cache_clear()
    names = ["a b", "x/y?z=1", "ünï", "a b"]
    assert [overview._page(n) for n in names] == [
        "model?model=a%20b",
        "model?model=x%2Fy%3Fz%3D1",
        "model?model=%C3%BCn%C3%AF",
        "model?model=a%20b",
    ]
    assert overview._page.cache_info().misses == 3


@given(st.lists(st.one_of(st.none(), st.text(max_size=80)), max_size=30))
def test_a_text_column_is_measured_alike_as_a_series_and_a_list(values: list[str | None]) -> None:
    series = pl.Series(values, dtype=pl.String)
    for bounds in ({}, {"min_px": 90, "max_px": 380}):
        assert ui.text_px(series, **bounds) == ui.text_px(values, **bounds)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=20))
def test_grid_page_addresses_match_url_quoting(names: list[str]) -> None:
    """Home's grid joins names quote() leaves alone and quotes only the others (issue #31): the same addresses."""
    from urllib.parse import quote

    got = overview._pages(pl.Series(names, dtype=pl.String)).to_list()
    assert got == [f"model?model={quote(n, safe='')}" for n in names]


def test_a_board_is_built_from_one_attachment_of_the_store(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its rows, cards, coverage and provenance are read together (issue #31: one DuckDB instance and attachment each
    cost ~0.03 s at 100k submissions), kept under their own keys, so the view's own calls are hits."""
    from procbench.submissions import store as stores

    attached: list[str] = []
    real = stores._attach

    def counted(con: object, path: Path, alias: str, *, read_only: bool) -> None:
        attached.append(alias)
        real(con, path, alias, read_only=read_only)  # type: ignore[arg-type]

    infos = _infos(store)
    info = next(i for i in infos if i.task == "openpi" and i.split == "test")
    cache.clear()
    monkeypatch.setattr(stores, "_attach", counted)
    view = boardview.build(store, info, interval_rows=0, display=False)
    assert len(attached) == 1 and view.provenance is not None and view.export.height > 3
    assert cache.stats()["misses"] == 4 and cache.stats()["hits"] >= 4
    attached.clear()
    sitedata.prefetch_home(store)
    assert len(attached) == 1 and cache.stats()["misses"] == 4 + 5
    attached.clear()
    overview.ranks(
        store
    )  # Home's own reads are kept; each other board's four reads come in one attachment
    assert len(attached) == len(infos) - 1
    assert cache.stats()["misses"] == 4 + 5 + 4 * (len(infos) - 1)
