"""Home's first view after a write rebuilds only what is new (issue #31), and reads the same rows it did.

* A whole-split board is read from ``board_packed`` (migration 011): the same frame as the ``board`` view gives
  (every current board of a store with papers' rows, a re-score, hidden and deleted rows, a hidden split).
* Building a board makes one model card per distinct card input (not one per row); building it again after one more
  submission makes one, for the new row; the cards of the rows it had are kept (``boardview._card``), as are their
  metadata's judging facts.
* Home's ranks (``build(display=False)``) are the board page's ranks, without its display table.
* ``ui.text_px`` measures a polars column as it measures the same values as a list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from procbench.bench.site_stores import generate
from procbench.leaderboard import boardview, cache, metadata, overview, queries, sitedata, ui
from procbench.leaderboard.model import TaskInfo
from procbench.submissions import admin
from procbench.submissions.store import reader
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
    monkeypatch.setattr(queries, "_reads_packed", lambda con, db: False)  # read as before 011
    for (task, split), got in packed.items():
        want = queries.board(store, task, split)
        assert got.height == want.height > 0, (task, split)
        assert_frame_equal(got.sort("submission_id"), want.sort("submission_id"), check_exact=True)


def test_a_board_built_again_after_a_write_makes_only_the_new_rows_card(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[tuple[object, ...]] = []
    real = metadata.card

    def counted(row: dict[str, object]) -> metadata.Card:
        made.append(tuple(row[c] for c in boardview.CARD_INPUTS))
        return real(row)

    monkeypatch.setattr(metadata, "card", counted)
    boardview._card.cache_clear()
    info = next(i for i in _infos(store) if i.task == "openpi" and i.split == "test")
    first = boardview.build(store, info, interval_rows=0, display=False)
    # the oracle: the card inputs of the board's rows as the store holds them, read here
    ids = first.export["submission_id"].to_list()
    with reader(store) as con:
        inputs = con.execute(
            f"SELECT {', '.join(boardview.CARD_INPUTS)} FROM submissions "
            f"WHERE submission_id IN ({', '.join('?' * len(ids))})",
            ids,
        ).fetchall()
    assert len(inputs) == first.export.height > 3
    assert len(made) == len(set(made)) == len(set(inputs))  # one card per distinct input
    assert set(made) == set(inputs)
    made.clear()
    submit_openpi(
        store, variant(tmp_path, 1), model="strong-again", metadata={"note": "home after write"}
    )
    cache.clear()
    info = next(i for i in _infos(store) if i.task == "openpi" and i.split == "test")
    again = boardview.build(store, info, interval_rows=0, display=False)
    assert again.export.height == first.export.height + 1
    assert len(made) == 1 and "home after write" in str(made[0][0])


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
    """Its rows, cards (with each row's coverage: one read, issue #31) and provenance are read together (issue #31: one DuckDB instance and attachment each
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
    assert cache.stats()["misses"] == 3 and cache.stats()["hits"] >= 3
    attached.clear()
    sitedata.prefetch_home(store)
    assert len(attached) == 1 and cache.stats()["misses"] == 3 + 5
    attached.clear()
    overview.ranks(
        store
    )  # Home's own reads are kept; each other board's three reads come in one attachment
    assert len(attached) == len(infos) - 1
    assert cache.stats()["misses"] == 3 + 5 + 3 * (len(infos) - 1)


def _grid_oracle(db: Path, query: str, benchmark: str) -> dict[str, dict[str, str]]:
    """Each model's grid cells, computed row by row from Home's ranks: per (model, column) the ranked row with the
    lowest rank (ties: more ranked rows, then task, split), its cell naming the board where the benchmark has several."""
    rows = [
        r
        for r in overview._with_cells(db).iter_rows(named=True)
        if query.lower() in r["model"].lower()
    ]
    boards: dict[str, set[str]] = {}
    for r in rows:
        boards.setdefault(r["benchmark"], set()).add(r["board"])
    best: dict[tuple[str, str], dict[str, object]] = {}
    for r in rows:
        if r["rank"] is None or (benchmark and r["benchmark"] != benchmark):
            continue
        key = (r["model"], r["board"] if benchmark else r["benchmark"])
        order = (r["rank"], -r["ranked"], r["task"], r["split"])
        if key not in best or order < best[key]["order"]:  # type: ignore[operator]
            best[key] = {"order": order, "row": r}
    cells: dict[str, dict[str, str]] = {}
    for (model, column), found in best.items():
        row = found["row"]
        several = not benchmark and len(overview.boards_of(db, column)) > 1
        cells.setdefault(model, {})[column] = row[
            overview.CELLS[1] if several else overview.CELLS[0]
        ]  # type: ignore[index]
    return cells


@pytest.mark.parametrize("query, benchmark", [("", ""), ("", "OpenPI"), ("a", ""), ("1", "PAGED")])
def test_the_models_by_boards_grid_is_each_models_best_ranked_row(
    store: Path, query: str, benchmark: str
) -> None:
    grid = overview.matrix(store, query, benchmark)
    expected = _grid_oracle(store, query, benchmark)
    columns = [c for c in grid.columns if c not in ("Model", "Page", "Boards")]
    shown = {
        r["Model"]: {c: r[c] for c in columns if r[c] is not None}
        for r in grid.iter_rows(named=True)
    }
    assert {m: cells for m, cells in shown.items() if cells} == expected
    assert grid["Model"].to_list() == [m for m in overview.models(store) if m in shown]


BOARDS = [("A", "a1", "test"), ("A", "a2", "test"), ("A", "a1", "dev"), ("B", "b1", "test")]
RANKED_ROWS = st.lists(
    st.tuples(
        st.sampled_from(["m0", "m1", "m2"]),
        st.sampled_from(BOARDS),
        st.one_of(st.none(), st.integers(1, 3)),
        st.integers(1, 3),
    ),
    min_size=1,
    max_size=14,
)


@settings(deadline=None)
@given(RANKED_ROWS, st.sampled_from(["", "A", "B"]))
def test_the_grid_keeps_each_models_best_ranked_row_on_generated_boards(
    generated: list[tuple[str, tuple[str, str, str], int | None, int]], benchmark: str
) -> None:
    """On generated rows (ties on rank, several boards of one benchmark, unranked rows), each cell is the row with the
    lowest rank, then the most ranked rows, then task and split; the board is named where the benchmark has several."""
    from unittest import mock

    rows: list[dict[str, Any]] = []
    places: dict[
        tuple[str, str], int
    ] = {}  # each row's place on its own board (overview.SCHEMA's position)
    for model, (bench, task, split), rank, ranked in generated:
        position = places[(task, split)] = places.get((task, split), -1) + 1
        text = f"#{rank} of {ranked} ({task}/{split})"  # a function of the tie-break keys, as the real cell is
        rows.append(
            {
                **dict.fromkeys(overview.SCHEMA),
                "benchmark": bench,
                "task": task,
                "split": split,
                "board": overview.board_label(task, split),
                "model": model,
                "rank": rank,
                "ranked": ranked,
                "metric": f"metric of {task}",
                "position": position,
                overview.CELLS[0]: text,
                overview.CELLS[1]: text + f" on {task}",
            }
        )
    frame = pl.DataFrame(
        rows, schema={**overview.SCHEMA, **dict.fromkeys(overview.CELLS, pl.String)}
    )
    expected: dict[str, dict[str, str]] = {}
    chosen: dict[tuple[str, str], tuple[tuple[int, int, str, str], str]] = {}
    on = {(r["benchmark"], r["board"]) for r in rows}  # the boards with a row, with their benchmark
    several = {b for b, _ in on if sum(1 for other, _ in on if other == b) > 1}
    for r in rows:
        if r["rank"] is None or (benchmark and r["benchmark"] != benchmark):
            continue
        column = r["board"] if benchmark else r["benchmark"]
        order = (r["rank"], -r["ranked"], r["task"], r["split"])
        named = not benchmark and r["benchmark"] in several
        text = r[overview.CELLS[1] if named else overview.CELLS[0]]
        if (r["model"], column) not in chosen or order < chosen[(r["model"], column)][0]:
            chosen[(r["model"], column)] = (order, text)
    for (model, column), (_, text) in chosen.items():
        expected.setdefault(model, {})[column] = text
    db = Path("generated.duckdb")
    with (
        mock.patch.object(cache, "memo", lambda _db, _name, _args, compute: compute()),
        mock.patch.object(overview, "_with_cells", lambda _db: frame),
    ):
        grid = overview._matrix(db, "", benchmark)
    columns = [c for c in grid.columns if c not in ("Model", "Page", "Boards")]
    shown = {
        r["Model"]: {c: r[c] for c in columns if r[c] is not None}
        for r in grid.iter_rows(named=True)
    }
    assert {m: cells for m, cells in shown.items() if cells} == expected


def test_homes_first_view_after_a_write_attaches_the_store_once(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Home's own five reads and the three reads of each board it builds come in one attachment of the store (issue #31:
    ``overview.prefetch_home``): every board in a fresh process; after a write, the board it touched alone, the other
    boards kept; a warm view attaches nothing.  Counted on the page itself (AppTest), not timed."""
    from streamlit.testing.v1 import AppTest

    from procbench.paths import PROJECT_ROOT
    from procbench.submissions import store as stores

    attached: list[str] = []
    real = stores._attach

    def counted(con: object, path: Path, alias: str, *, read_only: bool) -> None:
        attached.append(alias)
        real(con, path, alias, read_only=read_only)  # type: ignore[arg-type]

    def home() -> None:
        at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception, [e.value for e in at.exception]

    monkeypatch.setenv("PROCBENCH_DB", str(store))
    boards = len(_infos(store))
    cache.clear()
    monkeypatch.setattr(stores, "_attach", counted)
    home()
    assert len(attached) == 1 and cache.stats()["misses"] == 5 + 3 * boards
    submit_openpi(store, variant(tmp_path, 2), model="one-more")  # the write (its own attachments)
    attached.clear()
    misses = cache.stats()["misses"]
    home()
    assert len(attached) == 1 and cache.stats()["misses"] - misses == 5 + 3
    attached.clear()
    home()
    assert attached == [] and cache.stats()["misses"] - misses == 5 + 3
