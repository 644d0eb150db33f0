"""Migration 003's read paths (packed aggregates, item spans).

Every writer keeps them in step with the tables they describe, an older store upgrades to them
with its data intact, and every site query returns exactly what it returned over the released 002
board view and plain table scans.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from procbench.leaderboard import queries as site
from procbench.bench.site_stores import generate
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SCHEMA_DIR
from procbench.submissions import load_reported, queries as admin_queries, store
from procbench.submissions.admin import apply, check_consistency
from procbench.rescore import rescore
from tests.test_submissions_support import (
    NO_CHANGE,
    STRONG,
    TEMPLATE,
    dev_predictions,
    hidden_test_spec,
    openpi_spec_variant,
    query,
    submit_openpi,
)

BOARD_002 = re.search(
    r"CREATE OR REPLACE VIEW board AS.*?;",
    (SCHEMA_DIR / "002_trust.sql").read_text(encoding="utf-8"),
    re.S,
).group(0)  # type: ignore[union-attr]
UNORDERED = {
    "home",
    "board",
    "slice_table",
    "figures",
    "submissions_of",
}  # queries without ORDER BY: rows compared as sets


def _read_path_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Where ``aggregates_packed`` or ``row_spans`` disagree with the rows they describe.

    Rows past a table's last span are not a problem: readers scan them, and the next write records
    their spans.
    """
    problems = [
        f"aggregates_packed does not match the aggregates of submission {sid}"
        for (sid,) in con.execute(
            """
            WITH want AS (
                SELECT a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value,
                       list(a.metric ORDER BY a.rowid) AS metric, list(a.value ORDER BY a.rowid) AS value, list(a.n_items ORDER BY a.rowid) AS n_items
                FROM aggregates a JOIN submissions s ON s.submission_id = a.submission_id
                GROUP BY a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value
            ), have AS (
                SELECT submission_id, task, split, fingerprint, slice, slice_value, metric, value, n_items FROM aggregates_packed
            )
            SELECT DISTINCT submission_id FROM ((FROM want EXCEPT ALL FROM have) UNION ALL (FROM have EXCEPT ALL FROM want)) ORDER BY 1
            """
        ).fetchall()
    ]
    for table in store.SPANNED:
        (watermark,) = con.execute(
            "SELECT coalesce(max(last_row) + 1, 0) FROM row_spans WHERE table_name = ?", [table]
        ).fetchone()  # type: ignore[misc]
        problems += [
            f"row_spans does not match the {table} rows of submission {sid}"
            for (sid,) in con.execute(
                f"""
                SELECT coalesce(i.submission_id, s.submission_id) FROM (
                    SELECT submission_id, min(rowid) AS first_row, max(rowid) AS last_row, count(*) AS n_rows
                    FROM {table} WHERE rowid < ? GROUP BY submission_id
                ) i FULL JOIN (SELECT * FROM row_spans WHERE table_name = ?) s ON s.submission_id = i.submission_id
                WHERE (i.first_row, i.last_row, i.n_rows) IS DISTINCT FROM (s.first_row, s.last_row, s.n_rows)
                ORDER BY 1
                """,
                [watermark, table],
            ).fetchall()
        ]
    return problems


def _in_step(db: Path) -> None:
    """The read paths describe the rows exactly, and the board is the 002 board."""
    with store.reader(db) as con:
        assert _read_path_problems(con) == []
    con = duckdb.connect(str(db), read_only=True)
    try:
        con.execute(f"CREATE TEMP VIEW board_002_all AS {BOARD_002.split(' AS', 1)[1]}")
        # migration 004: a reported row shows only over the data it was reported on (boards registered before 004: all of them)
        con.execute(
            """
            CREATE TEMP VIEW board_002 AS SELECT b.* FROM board_002_all b
            JOIN submissions s USING (submission_id) JOIN current_tasks t ON t.task = b.task AND t.split = b.split
            WHERE NOT b.is_reference OR t.data_kind = 'unknown' OR (s.reported_on <> '' AND s.reported_on = t.data_digest)
            """
        )
        assert con.execute(
            "SELECT count(*) FROM (FROM board EXCEPT ALL FROM board_002)"
        ).fetchone() == (0,)
        assert con.execute(
            "SELECT count(*) FROM (FROM board_002 EXCEPT ALL FROM board)"
        ).fetchone() == (0,)
    finally:
        con.close()


@pytest.fixture(scope="module")
def store_v3(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Nine tasks (bulk-loaded around insert_submission), intake, paper rows, a re-score (second
    fingerprint of openpi), a hidden split, hidden and deleted submissions; in step after each write."""
    folder = tmp_path_factory.mktemp("read-paths")
    db = folder / "board.duckdb"
    generate(db, 18, seed=3, log=lambda _: None)
    _in_step(db)
    ids = {
        p.stem: submit_openpi(db, p, model=p.stem).submission_id
        for p in (STRONG, TEMPLATE, NO_CHANGE)
    }
    _in_step(db)
    spec, runner = load_task("openpi")
    ids["reference"] = load_reported(spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db)[0]
    _in_step(db)
    changed = openpi_spec_variant(
        folder / "specs", old="params { dedup = false", new="params { dedup = true", name="openpi"
    )
    report = rescore(db, changed, data_root=SAMPLE_DATA_ROOT)
    assert len(report.rescored) == 3
    ids["rescored"] = report.rescored[0]
    _in_step(db)
    ids["hidden-split"] = submit_openpi(
        db,
        dev_predictions(folder),
        spec_file=hidden_test_spec(folder, "dev"),
        split="dev",
        model="dev-gold",
    ).submission_id
    _in_step(db)
    apply(db, ids["template-guesser"], "hide")
    apply(db, ids["no-change-baseline"], "delete")
    apply(db, ids["strong-model"], "hide")
    apply(db, ids["strong-model"], "unhide")
    _in_step(db)
    assert check_consistency(db) == []
    assert query(
        db,
        "SELECT count(DISTINCT fingerprint) FROM submissions WHERE task = 'openpi' AND split = 'test'",
    ) == [(2,)]
    return db, ids


def _results(db: Path) -> dict[str, Any]:
    """What every query of the site (and the admin read helpers) returns on this store."""
    out: dict[str, Any] = {
        "tasks": site.tasks(db),
        "home": site.home(db),
        "board_columns": site.board_columns(db),
    }
    sids = [r[0] for r in query(db, "SELECT submission_id FROM submissions ORDER BY submission_id")]
    for task, split, fingerprint in query(
        db, "SELECT task, split, fingerprint FROM current_tasks ORDER BY ALL"
    ):
        key = f"{task}/{split}"
        out[f"task_row {key}"] = site.task_row(db, task, split)  # type: ignore[arg-type]
        out[f"board {key}"] = site.board(db, task, split)  # type: ignore[arg-type]
        out[f"submissions_of {key}"] = site.submissions_of(db, task, split)  # type: ignore[arg-type]
        picks = [
            r[0]
            for r in query(
                db,
                "SELECT submission_id FROM submissions WHERE task = ? AND split = ? ORDER BY submission_id LIMIT 3",
                [task, split],
            )
        ]
        metric = out[f"task_row {key}"]["primary_metric"]
        out[f"figures {key}"] = site.figures(db, task, split, picks, metric)  # type: ignore[arg-type]
        for (slice_name,) in query(
            db,
            "SELECT DISTINCT slice FROM aggregates a JOIN submissions s USING (submission_id) WHERE s.task = ? AND s.split = ? AND slice <> '' ORDER BY 1",
            [task, split],
        ):
            values = site.slice_values(db, task, split, slice_name)  # type: ignore[arg-type]
            out[f"slice_values {key} {slice_name}"] = values
            out[f"slice_table {key} {slice_name}"] = site.slice_table(db, task, split, slice_name)  # type: ignore[arg-type]
            out[f"slice_table {key} {slice_name} picks"] = site.slice_table(
                db, task, split, slice_name, picks
            )  # type: ignore[arg-type]
            out[f"item_labels {key} {slice_name}"] = site.item_labels(
                db, task, split, fingerprint, slice_name
            )  # type: ignore[arg-type]
            for value in values:
                out[f"board {key} {slice_name}={value}"] = site.board(
                    db, task, split, slice_name, value
                )  # type: ignore[arg-type]
    out["item_scores"] = site.item_scores(
        db, sids, for_aggregates=True
    )  # hidden splits too: the bootstrap's read path
    for sid in sids:
        out[f"submission {sid}"] = site.submission(db, sid)  # type: ignore[arg-type]
        out[f"aggregates {sid}"] = site.aggregates(db, sid)  # type: ignore[arg-type]
        out[f"status_history {sid}"] = site.status_history(db, sid)  # type: ignore[arg-type]
        out[f"admin item_scores {sid}"] = admin_queries.item_scores(db, sid, admin=True)  # type: ignore[arg-type]
        out[f"admin aggregates {sid}"] = admin_queries.aggregates(db, sid, admin=True)  # type: ignore[arg-type]
    return out


def _same(expected: dict[str, Any], got: dict[str, Any]) -> None:
    assert expected.keys() == got.keys()
    for name, want in expected.items():
        have = got[name]
        if not isinstance(want, pl.DataFrame):
            assert have == want, name
            continue
        kind = name.split(" ", 1)[0]
        assert have.columns == want.columns, name
        if kind in UNORDERED:
            want, have = want.sort(pl.all()), have.sort(pl.all())
        try:
            assert_frame_equal(have, want, check_exact=True)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None


def _as_version_2(src: Path, dst: Path) -> Path:
    """The same store as the 002 release wrote it: no read-path tables, the 002 board view."""
    shutil.copy(src, dst)
    con = duckdb.connect(str(dst))
    try:
        con.execute("DROP VIEW IF EXISTS board_packed")  # migration 011's, over aggregates_packed
        con.execute("DROP TABLE aggregates_packed")
        con.execute("DROP TABLE row_spans")
        con.execute(BOARD_002)
        con.execute("DELETE FROM schema_version WHERE version > 2")
    finally:
        con.close()
    return dst


def test_writers_keep_the_read_paths_in_step(store_v3: tuple[Path, dict[str, str]]) -> None:
    db, ids = store_v3
    _in_step(db)
    assert (
        query(
            db,
            "SELECT (SELECT count(*) FROM aggregates), (SELECT sum(len(value)) FROM aggregates_packed)",
        )[0][0]
        > 0
    )
    # hidden, deleted and superseded rows stay packed (the board view filters them), and show nowhere on the board
    board_ids = {r[0] for r in query(db, "SELECT DISTINCT submission_id FROM board")}
    assert (
        ids["template-guesser"] not in board_ids
        and ids["no-change-baseline"] not in board_ids
        and ids["strong-model"] not in board_ids
    )
    assert ids["rescored"] in board_ids and ids["hidden-split"] in board_ids
    assert (
        query(
            db,
            "SELECT count(*) FROM aggregates_packed WHERE submission_id = ?",
            [ids["template-guesser"]],
        )[0][0]
        > 0
    )


def test_site_queries_are_unchanged_by_migration_003(
    store_v3: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = store_v3
    old = _as_version_2(db, tmp_path / "v2.duckdb")
    upgraded = tmp_path / "upgraded.duckdb"
    shutil.copy(old, upgraded)
    with store.writer(upgraded) as con:  # a writer opening a 002 store applies 003, data and all
        assert store.schema_version(con) == store.latest_version() >= 3
    _in_step(upgraded)
    native, migrated = _results(db), _results(upgraded)
    _same(native, migrated)
    released = store.migrations()
    monkeypatch.setattr(
        store, "migrations", lambda: [m for m in released if m[0] <= 2]
    )  # read the 002 store as 002 code would find it
    assert query(
        old,
        "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('aggregates_packed', 'row_spans')",
    ) == [(0,)]
    # migration 004 (not 003) leaves out reported rows that were not reported on the board's data: the 002 board still shows them
    unshown = [
        r[0]
        for r in query(
            db,
            "SELECT submission_id FROM submissions WHERE is_reference AND submission_id NOT IN (SELECT submission_id FROM board)",
        )
    ]
    assert unshown  # the paper row loaded beside the bundled samples, once the current openpi board is over sample data
    as_002 = {
        k: v.filter(~pl.col("submission_id").is_in(unshown))
        if isinstance(v, pl.DataFrame) and "submission_id" in v.columns
        else v
        for k, v in _results(old).items()
    }
    _same(native, as_002)


def test_rows_written_around_the_store_are_read_and_then_synced(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    strong = submit_openpi(db, STRONG, model="strong").submission_id
    template = submit_openpi(db, TEMPLATE, model="template").submission_id
    spec, runner = load_task("openpi")
    reference = load_reported(spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db)[0]
    before = site.item_scores(db, [strong, template])

    raw = duckdb.connect(
        str(db)
    )  # another tool, not the store's writer: no spans recorded, nothing packed
    raw.execute(
        "INSERT INTO item_scores VALUES (?, 'zz-extra', 'rouge_f1', 0.25), (?, 'zz-extra', 'rouge_f1', 0.5)",
        [template, reference],
    )
    raw.execute("INSERT INTO aggregates VALUES (?, 'extra', 'x', 'rouge_f1', 0.5, 7)", [strong])
    raw.close()
    with store.reader(db) as con:
        assert _read_path_problems(con) == [
            f"aggregates_packed does not match the aggregates of submission {strong}"
        ]  # the unsynced tail of item_scores is no problem
    assert ("extra", "x", "rouge_f1", 0.5, 7) in site.aggregates(
        db, strong
    ).rows()  # past the last aggregates span: scanned too
    items = site.item_scores(db, [strong, template, reference])
    assert items[strong] == before[strong]
    assert items[template][-1].item_id == "zz-extra" and items[template][:-1] == before[template]
    assert [(i.item_id, dict(i.values)) for i in items[reference]] == [
        ("zz-extra", {"rouge_f1": 0.5})
    ]

    with store.writer(db):  # any write syncs
        pass
    _in_step(db)
    assert query(
        db, "SELECT slice_n_items FROM board WHERE submission_id = ? AND slice = 'extra'", [strong]
    ) == [(7,)]
    assert query(
        db,
        "SELECT n_rows FROM row_spans WHERE table_name = 'item_scores' AND submission_id = ?",
        [reference],
    ) == [(1,)]
    assert site.item_scores(db, [strong, template, reference]) == items

    raw = duckdb.connect(
        str(db)
    )  # the table rewritten in another order behind the store's back: the spans point at other rows
    raw.execute(
        "CREATE TABLE moved AS SELECT * FROM item_scores ORDER BY item_id DESC, submission_id"
    )
    raw.execute("DROP TABLE item_scores")
    raw.execute("ALTER TABLE moved RENAME TO item_scores")
    raw.close()
    assert (
        query(
            db,
            "SELECT count(*) FROM row_spans s WHERE s.table_name = 'item_scores' AND s.n_rows <> (SELECT count(*) FROM item_scores i WHERE i.submission_id = "
            "s.submission_id AND i.rowid BETWEEN s.first_row AND s.last_row)",
        )[0][0]
        > 0
    )
    assert site.item_scores(db, [strong, template, reference]) == items
    for sid in (
        strong,
        template,
        reference,
    ):  # alone, each span misses some of its rows: read by a full scan, still right
        assert site.item_scores(db, [sid]) == {sid: items[sid]}
    with store.writer(db):  # the next write notices and measures the spans again
        pass
    _in_step(db)

    raw = duckdb.connect(str(db))  # rows deleted behind the store's back
    raw.execute(
        "DELETE FROM item_scores WHERE submission_id = ? AND item_id = 'zz-extra'", [template]
    )
    raw.close()
    expected = {**items, template: before[template]}
    assert site.item_scores(db, [strong, template, reference]) == expected
    assert admin_queries.item_scores(db, template, admin=True).height == sum(
        len(i.values) for i in before[template]
    )
    with store.writer(db):
        pass
    _in_step(db)
    assert site.item_scores(db, [strong, template, reference]) == expected


def test_appended_packed_rows_are_reclustered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "CLUSTER_MIN_ROWS", 0)
    monkeypatch.setattr(store, "CLUSTER_SHARE", 0.0)
    db = tmp_path / "board.duckdb"
    generate(db, 9, seed=1, log=lambda _: None)
    submit_openpi(db, STRONG, model="strong")
    submit_openpi(db, dev_predictions(tmp_path), split="dev", model="dev-gold")
    rows = query(
        db,
        "SELECT task, split, slice, slice_value, clustered FROM aggregates_packed ORDER BY rowid",
    )
    assert all(r[4] for r in rows)
    keys = [r[:4] for r in rows]
    assert keys == sorted(keys) and len({r[0] for r in rows}) == 9
    _in_step(db)


def test_a_block_left_in_a_transaction_syncs_nothing(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    strong = submit_openpi(db, STRONG, model="strong").submission_id
    with store.writer(db) as con:
        con.execute("BEGIN TRANSACTION")
        con.execute("INSERT INTO aggregates VALUES (?, 'extra', 'x', 'rouge_f1', 0.5, 7)", [strong])
    _in_step(db)
    assert query(db, "SELECT count(*) FROM aggregates WHERE slice = 'extra'") == [(0,)]


class _Counting:
    """A connection that counts the statements it is given (an operation count, never a time)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.statements = con, 0

    def execute(self, sql: str, parameters: Any = None) -> duckdb.DuckDBPyConnection:
        self.statements += 1
        return self.con.execute(sql, parameters)


def test_a_span_sync_reads_every_table_in_two_statements(tmp_path: Path) -> None:
    """Issue #31 (submit beyond score): what decides the span sync of every spanned table is read in two statements
    (each table's row count with its spans' coverage, watermark and latest span; then each latest span's rows and the
    rows past each watermark), and the spans of rows appended since are then recorded, in one more, as they were."""
    db = tmp_path / "board.duckdb"
    submit_openpi(db, STRONG, model="strong")
    template = submit_openpi(db, TEMPLATE, model="template").submission_id
    with store.writer(db) as con:
        spans = con.execute("SELECT * FROM row_spans ORDER BY ALL").fetchall()
        assert {r[1] for r in spans} >= {template}
        assert {r[0] for r in spans} == set(store.SPANNED)
        # as if the template's rows had been appended to every table since the last sync
        con.execute("DELETE FROM row_spans WHERE submission_id = ?", [template])
        counting = _Counting(con)
        assert store._sync_spans(counting) == []  # type: ignore[arg-type]
        assert counting.statements == 3  # two reads, then the appended rows' spans of both tables
        assert con.execute("SELECT * FROM row_spans ORDER BY ALL").fetchall() == spans
        counting = _Counting(con)
        assert store._sync_spans(counting) == []  # type: ignore[arg-type]
        assert counting.statements == 2  # in step: two reads, nothing written
        # only one table's rows appended since: its span alone is recorded
        con.execute(
            "DELETE FROM row_spans WHERE submission_id = ? AND table_name = 'aggregates'",
            [template],
        )
        counting = _Counting(con)
        assert store._sync_spans(counting) == []  # type: ignore[arg-type]
        assert counting.statements == 3
        assert con.execute("SELECT * FROM row_spans ORDER BY ALL").fetchall() == spans
        # rows moved behind the store's back: the latest span no longer holds its rows, still two reads
        con.execute(
            "UPDATE row_spans SET n_rows = n_rows + 1 WHERE table_name = 'item_scores' AND submission_id = ?",
            [template],
        )
        counting = _Counting(con)
        assert store._sync_spans(counting) == ["item_scores"]  # type: ignore[arg-type]
        assert counting.statements == 2
    _in_step(db)  # the writer measured the spans again
