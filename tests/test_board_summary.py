"""Home's counts from the maintained board summary (migration 010, issue #31), and the generator's bounded batches.

* Home's read (``queries.home_counts``) and the per-board versions Home's ranks are kept under
  (``queries.board_versions``) read ``current_tasks`` and ``board_summary`` only: their query plans scan no
  submission, aggregate or item table, so their cost does not grow with the store.
* The summary always says what the full group-by of the ``board`` view says (``queries.home``, grouped here):
  after intake, a re-scoring that moves boards, hide / unhide / delete / restore, and any sequence of inserts,
  admin actions, bulk loads, edits behind the writers' backs and a split turning hidden (Hypothesis).
* The generator commits a batch at a time: its Python peak memory does not grow with the run's size.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procbench.bench.site_stores import generate
from procbench.leaderboard import queries
from procbench.rescore import rescore
from procbench.runners.runtime.paths import SCHEMA_DIR
from procbench.submissions import admin, store
from tests.rescore_stores import changed_root, sample_store

BIG_TABLES = {"submissions", "aggregates", "aggregates_packed", "item_scores", "status_history"}


def _tables_scanned(con: duckdb.DuckDBPyConnection, sql: str) -> set[str]:
    plan = json.loads(con.execute(f"EXPLAIN (FORMAT json) {sql}").fetchall()[0][1])
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for child in node:
                walk(child)
        elif isinstance(node, dict):
            table = node.get("extra_info", {}).get("Table")
            if table:
                found.add(str(table).rsplit(".", 1)[-1])
            walk(node.get("children", []))

    walk(plan)
    return found


def _counts_by_full_group_by(db: Path) -> pl.DataFrame:
    """The oracle: Home's counts as the full group-by of the board view gives them (queries.home, grouped per board)."""
    rows = queries.home(db)
    return (
        rows.group_by("task", "split")
        .agg(
            pl.len().cast(pl.Int64).alias("listed"),
            (~pl.col("is_reference")).sum().cast(pl.Int64).alias("submitted"),
            pl.col("created_at").max().alias("last_update"),
        )
        .sort("task", "split")
    )


def _summary_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    return con.execute("SELECT * FROM board_summary ORDER BY ALL").fetchall()


def _recomputed_from_scratch(db: Path) -> list[tuple[Any, ...]]:
    """The summary as migration 010's back-fill computes it from the whole store, in a scratch table."""
    sql = (SCHEMA_DIR / "010_board_summary.sql").read_text(encoding="utf-8")
    backfill = sql[sql.index("INSERT INTO board_summary") :].replace(
        "INSERT INTO board_summary", "INSERT INTO scratch_summary", 1
    )
    with store.writer(db) as con, store.transaction(con):
        con.execute("CREATE TEMP TABLE scratch_summary AS SELECT * FROM board_summary LIMIT 0")
        con.execute(backfill)
        rows = con.execute("SELECT * FROM scratch_summary ORDER BY ALL").fetchall()
        con.execute("DROP TABLE scratch_summary")
    return rows


def assert_summary_holds(db: Path) -> None:
    counts = queries.home_counts(db)
    expected = _counts_by_full_group_by(db)
    listed = counts.filter(pl.col("listed") > 0).select(
        "task", "split", "listed", "submitted", "last_update"
    )
    assert listed.to_dicts() == expected.to_dicts()
    assert counts.filter(pl.col("listed") == 0)["submitted"].to_list() == [0] * (
        counts.height - listed.height
    )
    with store.reader(db) as con:
        kept = _summary_rows(con)
    assert kept == _recomputed_from_scratch(db)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("summary") / "generated.duckdb"
    generate(db, 12, seed=5, log=lambda _: None, batch=5)
    return db


def test_home_reads_only_the_summary_and_the_current_boards(generated: Path) -> None:
    with store.reader(generated) as con:
        counts_tables = _tables_scanned(con, queries.HOME_COUNTS)
        assert "board_summary" in counts_tables
        assert not counts_tables & BIG_TABLES, counts_tables
        board_tables = _tables_scanned(con, queries.BOARD_VERSIONS)
        assert "board_summary" in board_tables
        assert not board_tables & BIG_TABLES, board_tables
        # the full group-by Home used to run reads the big tables: the check above can see them
        assert {"submissions", "aggregates_packed"} <= _tables_scanned(con, "SELECT * FROM board")


def test_the_generated_store_summary_is_the_full_group_by(generated: Path) -> None:
    assert_summary_holds(generated)
    assert queries.home_counts(generated)["listed"].sum() == 12


def test_a_store_older_than_010_that_cannot_be_upgraded_counts_the_same(
    generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.leaderboard import cache, overview

    expected, ranks = queries.home_counts(generated), overview.ranks(generated)
    old = tmp_path / "v9.duckdb"
    shutil.copyfile(generated, old)
    with duckdb.connect(str(old)) as con:
        con.execute("DROP TABLE board_summary")
        con.execute("DELETE FROM schema_version WHERE version >= 10")
    released = store.migrations()
    monkeypatch.setattr(store, "migrations", lambda: [m for m in released if m[0] < 10])
    cache.clear()
    assert queries.board_versions(old) is None
    assert queries.home_counts(old).to_dicts() == expected.to_dicts()
    assert overview.ranks(old).to_dicts() == ranks.to_dicts()


def test_intake_rescore_and_admin_keep_the_summary(tmp_path: Path) -> None:
    db = sample_store(tmp_path)
    assert_summary_holds(db)
    report = rescore(db, "openpi", data_root=changed_root(tmp_path))
    assert report.rescored  # the board moved to the new fingerprint, with re-scored rows
    assert_summary_holds(db)
    with store.reader(db) as con:
        ids = [
            r[0]
            for r in con.execute(
                "SELECT submission_id FROM submissions WHERE task = 'paradise-tip' AND submission_id = origin_id ORDER BY ALL"
            ).fetchall()
        ]
    before = queries.home_counts(db).filter(pl.col("task") == "paradise-tip")["listed"][0]
    admin.apply(db, ids[0], "hide", reason="test", actor="tester")
    assert_summary_holds(db)
    admin.apply(db, ids[1], "delete", reason="test", actor="tester")
    assert_summary_holds(db)
    assert (
        queries.home_counts(db).filter(pl.col("task") == "paradise-tip")["listed"][0] == before - 2
    )
    admin.apply(db, ids[0], "unhide", reason="test", actor="tester")
    assert_summary_holds(db)


# -- any sequence of writes ------------------------------------------------------------------------

ACTIONS = ("hide", "unhide", "delete", "restore")
operation = st.one_of(
    st.tuples(
        st.just("insert"),
        st.integers(0, 10_000),
        st.booleans(),  # reported row
        st.booleans(),  # hidden from the start
        st.sampled_from(["", "digest-a"]),  # reported on
        st.sampled_from(["all", "slices", "small", "none"]),  # which of its aggregates it keeps
    ),
    st.tuples(st.just("admin"), st.integers(0, 10_000), st.sampled_from(ACTIONS)),
    st.tuples(st.just("bulk"), st.integers(1, 3)),
    st.tuples(st.just("raw_hide"), st.integers(0, 10_000)),
    st.tuples(st.just("hide_split"), st.integers(0, 10_000)),
    st.tuples(st.just("real_data"), st.integers(0, 10_000)),
)


def _apply(db: Path, op: tuple[Any, ...], n: int) -> None:
    with store.reader(db) as con:
        ids = [
            r[0]
            for r in con.execute("SELECT submission_id FROM submissions ORDER BY ALL").fetchall()
        ]
        boards = con.execute("SELECT DISTINCT task, split FROM tasks ORDER BY ALL").fetchall()
    kind = op[0]
    if kind == "insert":
        _, pick, reference, hidden, reported_on, keep = op
        source = ids[pick % len(ids)]
        with store.writer(db) as con, store.transaction(con):
            task, split, fingerprint, n_items = con.execute(
                "SELECT task, split, fingerprint, n_items FROM submissions WHERE submission_id = ?",
                [source],
            ).fetchall()[0]
            aggregates = con.execute(
                "SELECT slice, slice_value, metric, value, n_items FROM aggregates WHERE submission_id = ? ORDER BY rowid",
                [source],
            ).fetchall()
            kept = {
                "all": aggregates,
                "slices": [a for a in aggregates if a[0] != ""],
                "small": [(*a[:4], 2) for a in aggregates if a[0] != ""],
                "none": [],
            }[keep]
            sid = f"op{n}-{source[:12]}"
            store.insert_submission(
                con,
                store.SubmissionRow(
                    submission_id=sid,
                    task=task,
                    split=split,
                    fingerprint=fingerprint,
                    team="ops",
                    model=f"op-{n}",
                    content_sha256=sid,
                    n_items=n_items,
                    created_at=datetime(2030, 1, 1) + timedelta(minutes=n),
                    is_reference=reference,
                    hidden=hidden,
                    reported_on=reported_on if reference else "",
                ),
                items=store.ScoreRows(sid),
                aggregates=store.ScoreRows(sid, tuple(kept)),
                history=(),
            )
    elif kind == "admin":
        _, pick, action = op
        admin.apply(db, ids[pick % len(ids)], action, reason="ops", actor="tester")
    elif (
        kind == "bulk"
    ):  # the generator's batches: no summary code of their own, the writer's sync keeps it
        generate(db, op[1], seed=1000 + n, log=lambda _: None, batch=2)
    elif kind == "raw_hide":  # an edit behind the writers' backs (another tool), in a writer block
        with store.writer(db) as con:
            con.execute(
                "UPDATE submissions SET hidden = NOT hidden WHERE submission_id = ?",
                [ids[op[1] % len(ids)]],
            )
    elif kind in ("hide_split", "real_data"):  # read from current_tasks at read time
        task, split = boards[op[1] % len(boards)]
        column = (
            "hidden = NOT hidden"
            if kind == "hide_split"
            else "data_kind = 'real', data_digest = 'digest-a'"
        )
        with store.writer(db) as con:
            con.execute(f"UPDATE tasks SET {column} WHERE task = ? AND split = ?", [task, split])


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=1, max_size=6))
def test_any_sequence_of_writes_keeps_the_summary(
    generated: Path, tmp_path: Path, ops: list[tuple[Any, ...]]
) -> None:
    db = tmp_path / f"ops-{abs(hash(tuple(ops)))}.duckdb"
    shutil.copyfile(generated, db)
    try:
        for n, op in enumerate(ops):
            _apply(db, op, n)
            assert_summary_holds(db)
    finally:
        for suffix in ("", ".wal", ".lock"):
            Path(str(db) + suffix).unlink(missing_ok=True)


# -- the generator's memory ------------------------------------------------------------------------


def _python_peak(db: Path, n: int) -> int:
    tracemalloc.start()
    try:
        generate(db, n, seed=9, log=lambda _: None, batch=10)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_generator_holds_one_batch_whatever_the_run(tmp_path: Path) -> None:
    generate(
        tmp_path / "warm.duckdb", 2, seed=9, log=lambda _: None
    )  # specs, pools and caches loaded once
    small = _python_peak(tmp_path / "small.duckdb", 20)
    large = _python_peak(tmp_path / "large.duckdb", 80)
    with store.reader(tmp_path / "large.duckdb") as con:
        assert con.execute("SELECT count(*) FROM submissions").fetchall()[0][0] == 80
    # four times the submissions, the same batches of 10: the peak is the pools plus one batch, not the run
    # (one transaction for the whole run, as before issue #31, peaks about twice as high at 80 as at 20)
    assert large < small * 1.3, (small, large)


def _contents(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with store.reader(db) as con:
        return {
            table: con.execute(f"SELECT {columns} FROM {table} ORDER BY ALL").fetchall()
            for table, columns in (
                ("submissions", "submission_id, task, split, team, model, n_items"),
                ("item_scores", "submission_id, item_id, metric, value"),
                ("aggregates", "submission_id, slice, slice_value, metric, value, n_items"),
            )
        }


def test_a_batch_holds_at_most_item_rows_and_the_store_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch closes at ITEM_ROWS item rows as well as at BATCH submissions (issue #31: 500 OpenPI-sized
    submissions were 4.7M rows, 1.5 GB in one batch); how the run is cut changes nothing stored."""
    from procbench.bench import site_stores

    whole = tmp_path / "whole.duckdb"
    generate(whole, 12, seed=4, log=lambda _: None)  # one batch: 12 < BATCH, rows < ITEM_ROWS
    held: list[int] = []
    write = site_stores.write_batch

    def counted(db: Path, rows: dict[str, list[Any]], *args: Any, **kwargs: Any) -> None:
        held.append(len(rows["item_scores"]))
        write(db, rows, *args, **kwargs)

    monkeypatch.setattr(site_stores, "write_batch", counted)
    monkeypatch.setattr(site_stores, "ITEM_ROWS", 2_000)
    cut = tmp_path / "cut.duckdb"
    generate(cut, 12, seed=4, log=lambda _: None)
    stored = _contents(whole)
    per_submission: dict[str, int] = {}
    for sid, *_ in stored["item_scores"]:
        per_submission[sid] = per_submission.get(sid, 0) + 1
    assert len(held) > 1 and sum(held) == len(stored["item_scores"])
    # a batch closes after the submission that reaches the bound: at most one submission past it
    assert max(held) < 2_000 + max(per_submission.values()), held
    assert _contents(cut) == stored
