"""The store's locking and connection sessions: readers wait for writers, nesting, release of the file."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from procbench.submissions import store
from tests.test_submissions_support import STRONG, submit_openpi


def test_readers_wait_for_a_writer_instead_of_failing(tmp_path: Path) -> None:
    """A reader in another thread blocks on the shared lock while the writer holds the store, then reads."""
    db = tmp_path / "b.duckdb"
    submit_openpi(db, STRONG)
    seen: list[int] = []

    def read() -> None:
        with store.reader(db) as con:
            seen.append(con.execute("SELECT count(*) FROM submissions").fetchone()[0])

    with store.writer(db) as con, store.transaction(con):
        con.execute("INSERT INTO teams (team, created_at) VALUES ('x', now())")
        thread = threading.Thread(target=read)
        thread.start()
        time.sleep(0.3)
        assert seen == []  # still waiting: it never sees the store mid-write
    thread.join(timeout=30)
    assert seen == [1]


def test_nested_blocks_in_one_thread_reuse_the_outer_attachment(tmp_path: Path) -> None:
    db = tmp_path / "b.duckdb"
    other = tmp_path / "other.duckdb"
    submit_openpi(db, STRONG)
    with store.writer(db) as con:
        with store.reader(db) as inner:  # would deadlock on the lock without reuse
            assert inner.execute("SELECT count(*) FROM submissions").fetchone() == (1,)
        with store.writer(other) as second:  # another file: its own attachment, then back
            assert second.execute("SELECT count(*) FROM submissions").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM submissions").fetchone() == (1,)
    with store.reader(db), pytest.raises(RuntimeError, match="inside a read"):
        with store.writer(db):
            pass


def test_the_file_is_released_after_each_block(tmp_path: Path) -> None:
    """Another process can open the database read-write as soon as a block ends (no lingering instance)."""
    db = tmp_path / "b.duckdb"
    with store.writer(db) as con:
        con.execute("INSERT INTO teams (team, created_at) VALUES ('x', now())")
    probe = f"import duckdb; c = duckdb.connect({str(db)!r}); print(c.execute('SELECT count(*) FROM teams').fetchone()[0])"
    assert (
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "1"
    )
    with store.reader(db) as con:
        assert con.execute("SELECT team FROM teams").fetchall() == [("x",)]


def test_a_block_that_leaves_a_transaction_open_still_releases_the_file(tmp_path: Path) -> None:
    db = tmp_path / "b.duckdb"
    with store.writer(db) as con:
        con.execute("BEGIN TRANSACTION")
        con.execute("INSERT INTO teams (team, created_at) VALUES ('never', now())")
    with store.writer(db) as con:  # the uncommitted row is gone, the store usable
        assert con.execute("SELECT count(*) FROM teams").fetchone() == (0,)


def test_no_replacement_scans_a_missing_table_is_an_error(tmp_path: Path) -> None:
    db = tmp_path / "b.duckdb"
    submissions_like = [1, 2, 3]  # noqa: F841 - a Python variable DuckDB must not pick up
    with store.writer(db) as con, pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM submissions_like")
