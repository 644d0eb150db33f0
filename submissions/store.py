"""The DuckDB store: versioned migrations, one writer at a time, one transaction per submission.

DuckDB allows a single writing process per database file.  Writers therefore take an exclusive
``flock`` on ``<db>.lock`` (waiting with retries) for the whole open-write-close cycle; readers
(the site) open the file read-only and only ever see committed transactions.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from procbench.paths import SCHEMA_DIR

LOCK_TIMEOUT_S = 120.0


def migrations() -> list[tuple[int, str]]:
    out = []
    for path in sorted(SCHEMA_DIR.glob("[0-9][0-9][0-9]_*.sql")):
        out.append((int(path.name[:3]), path.read_text(encoding="utf-8")))
    return out


@contextlib.contextmanager
def _exclusive(db_path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    lock_path = db_path.with_name(db_path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as handle:
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the database {db_path} is busy (another writer held it for {timeout:.0f} s)") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    current = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]
    for version, sql in migrations():
        if version > current:
            con.execute("BEGIN TRANSACTION")
            con.execute(sql)
            con.execute("INSERT INTO schema_version (version) VALUES (?)", [version])
            con.execute("COMMIT")


@contextlib.contextmanager
def writer(db_path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """An exclusive, migrated read-write connection (closed, and the lock released, on exit)."""
    path = Path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path):
        con = duckdb.connect(str(path))
        try:
            _migrate(con)
            yield con
        finally:
            con.close()


@contextlib.contextmanager
def reader(db_path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection; the database must exist (build it with ``procbench submit``)."""
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"no procbench database at {path}")
    for attempt in range(50):
        try:
            con = duckdb.connect(str(path), read_only=True)
            break
        except duckdb.IOException:  # a writer holds the file right now
            time.sleep(0.1 * (attempt + 1))
    else:
        raise TimeoutError(f"could not open {path} for reading: a writer keeps it locked")
    try:
        yield con
    finally:
        con.close()


@dataclass(frozen=True)
class StoredSubmission:
    submission_id: str
    created: bool  # False when the same file was already stored (idempotent resubmission)


def submission_id(task: str, split: str, team: str, content_sha256: str, fingerprint: str) -> str:
    return hashlib.sha256("\x1f".join([task, split, team, content_sha256, fingerprint]).encode()).hexdigest()[:20]


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def register_task(con: duckdb.DuckDBPyConnection, *, task: str, split: str, fingerprint: str, title: str, benchmark: str, version: str, primary_metric: str, hidden: bool, spec_json: str, labels: Mapping[str, Mapping[str, str]]) -> None:
    """Record a task's fingerprint for a split (and its item labels) if it is new."""
    exists = con.execute("SELECT 1 FROM tasks WHERE task = ? AND split = ? AND fingerprint = ?", [task, split, fingerprint]).fetchone()
    if exists:
        return
    con.execute(
        "INSERT INTO tasks (task, split, fingerprint, title, benchmark, version, primary_metric, hidden, spec_json, registered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [task, split, fingerprint, title, benchmark, version, primary_metric, hidden, spec_json, now()],
    )
    rows = [(task, split, fingerprint, item_id, dim, value) for item_id, dims in labels.items() for dim, value in dims.items()]
    if rows:
        frame = pl.DataFrame(rows, schema=["task", "split", "fingerprint", "item_id", "dimension", "value"], orient="row")
        con.register("new_labels", frame.to_arrow())
        con.execute("INSERT INTO item_labels SELECT * FROM new_labels")
        con.unregister("new_labels")


def insert_scored(
    con: duckdb.DuckDBPyConnection,
    *,
    sid: str,
    task: str,
    split: str,
    fingerprint: str,
    team: str,
    model: str,
    content_sha256: str,
    metadata: Mapping[str, Any],
    is_reference: bool,
    item_values: pl.DataFrame,
    aggregates: pl.DataFrame,
    n_items: int,
) -> None:
    """Insert one scored submission and its status trail; the caller holds the transaction."""
    stamp = now()
    con.execute(
        "INSERT INTO submissions (submission_id, task, split, fingerprint, team, model, content_sha256, metadata_json, is_reference, n_items, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [sid, task, split, fingerprint, team, model, content_sha256, json.dumps(dict(metadata), sort_keys=True), is_reference, n_items, stamp],
    )
    for status in ("received", "validated", "scored"):
        con.execute("INSERT INTO status_history (submission_id, status, changed_at) VALUES (?, ?, ?)", [sid, status, stamp])
    if item_values.height:
        con.register("new_items", item_values.to_arrow())
        con.execute("INSERT INTO item_scores SELECT submission_id, item_id, metric, value FROM new_items")
        con.unregister("new_items")
    con.register("new_aggregates", aggregates.to_arrow())
    con.execute("INSERT INTO aggregates SELECT submission_id, slice, slice_value, metric, value, n_items FROM new_aggregates")
    con.unregister("new_aggregates")


def record_failure(con: duckdb.DuckDBPyConnection, sid: str, reason: str) -> None:
    con.execute("INSERT INTO status_history (submission_id, status, reason, changed_at) VALUES (?, 'failed', ?, ?)", [sid, reason, now()])
