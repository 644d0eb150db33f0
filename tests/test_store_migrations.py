"""Versioned migrations: a database built at version 1 (with the released 001 file) upgrades on open."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

from procbench.paths import SCHEMA_DIR
from procbench.submissions import store
from procbench.submissions.admin import check_consistency
from tests.test_submissions_support import STRONG, query, submit_openpi

V1_BOARD_COLUMNS = [
    "submission_id",
    "task",
    "split",
    "team",
    "model",
    "is_reference",
    "metadata_json",
    "created_at",
    "n_items",
    "slice",
    "slice_value",
    "metric",
    "value",
    "slice_n_items",
]


def _version_1(db: Path) -> None:
    """What the first release wrote: 001 applied, version 1 recorded, one submission."""
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    con.execute((SCHEMA_DIR / "001_initial.sql").read_text())
    con.execute("INSERT INTO schema_version (version) VALUES (1)")
    now = datetime(2026, 1, 1)
    con.execute(
        "INSERT INTO tasks VALUES ('openpi', 'fp1', 'test', 'OpenPI', 'OpenPI', '1.0', 'rouge_f1', FALSE, '{}', ?)",
        [now],
    )
    con.execute(
        "INSERT INTO submissions (submission_id, task, split, fingerprint, team, model, content_sha256, metadata_json, n_items, created_at) VALUES ('old1', "
        "'openpi', 'test', 'fp1', 'demo', 'old-model', 'abc', ?, 2, ?)",
        [json.dumps({"source": "sample"}), now],
    )
    con.execute(
        "INSERT INTO status_history (submission_id, status, changed_at) VALUES ('old1', 'scored', ?)",
        [now],
    )
    con.execute(
        "INSERT INTO item_scores VALUES ('old1', 'i1', 'rouge_f1', 0.5), ('old1', 'i2', 'rouge_f1', 0.7)"
    )
    con.execute("INSERT INTO aggregates VALUES ('old1', '', '', 'rouge_f1', 0.6, 2)")
    con.close()


def test_migrations_are_numbered_without_gaps() -> None:
    versions = [v for v, _ in store.migrations()]
    assert (
        versions == list(range(1, len(versions) + 1))
        and versions[-1] == store.latest_version() >= 2
    )


def test_a_version_1_database_upgrades_when_a_writer_opens_it(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    _version_1(db)
    with store.writer(db) as con:
        assert store.schema_version(con) == store.latest_version()
    assert query(db, "SELECT origin_id, size_class, receipt_id FROM submissions") == [
        ("old1", "unknown", "")
    ]
    board = duckdb.connect(str(db), read_only=True)
    try:
        columns = [d[0] for d in board.execute("SELECT * FROM board").description]
        assert (
            columns[: len(V1_BOARD_COLUMNS)] == V1_BOARD_COLUMNS
        )  # the site's columns are all still there, in order
        assert board.execute("SELECT model, value FROM board").fetchall() == [("old-model", 0.6)]
    finally:
        board.close()
    assert check_consistency(db) == []
    # and the upgraded database takes new submissions
    assert submit_openpi(db, STRONG).created


def test_a_version_1_database_upgrades_when_a_reader_opens_it(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    _version_1(db)
    with store.reader(db) as con:
        assert store.schema_version(con) == store.latest_version()
        assert con.execute("SELECT count(*) FROM failures").fetchone() == (0,)


def test_a_failed_migration_leaves_the_database_at_its_old_version(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "old.duckdb"
    _version_1(db)
    real = store.migrations()
    monkeypatch.setattr(
        store,
        "migrations",
        lambda: [
            *real,
            (len(real) + 1, "CREATE TABLE broken (x INTEGER); SELECT * FROM no_such_table;"),
        ],
    )
    try:
        with store.writer(db):
            pass
    except duckdb.Error:
        pass
    else:
        raise AssertionError("the broken migration should have failed")
    monkeypatch.setattr(store, "migrations", lambda: real)
    assert query(db, "SELECT max(version) FROM schema_version") == [(len(real),)]
    assert query(
        db, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'broken'"
    ) == [(0,)]
