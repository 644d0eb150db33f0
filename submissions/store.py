"""The DuckDB store: versioned migrations, one writer at a time, one transaction per submission.

DuckDB allows one read-write process per database file, and refuses a read-only open while another
process writes.  Every process therefore coordinates through ``flock`` on ``<db>.lock``:

* writers take it exclusively for their whole attach → write → detach cycle;
* readers (the site) take it shared for their attach → read → detach cycle, so they wait for a
  writer to finish instead of failing, and many readers run at once.

Each thread keeps one in-memory DuckDB connection and ATTACHes the store file for each cycle
(milliseconds, where a fresh ``duckdb.connect`` costs tens), then DETACHes it, which checkpoints
and releases the file for the next process.  A reader that cannot create the lock file (a read-only mount) opens without it and retries while a
writer holds the database.  Each submission commits in one transaction, so a reader sees all of it
or nothing; a process killed mid-write leaves only committed transactions (DuckDB's WAL), and the
kernel drops its lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import random
import signal
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import duckdb
import polars as pl

from procbench.paths import SCHEMA_DIR

LOCK_TIMEOUT_S = 300.0
READ_RETRIES = 50
CRASH_ENV = "PROCBENCH_CRASH_AT"  # fault injection for the crash-safety tests: the name of a crash point
# No replacement scans: a missing table must be an error, never a Python variable of the same name.
CONNECT_CONFIG = {"python_enable_replacements": False}


def migrations() -> list[tuple[int, str]]:
    """The migration files in ``schema/``, ``(version, sql)`` in order."""
    out = []
    for path in sorted(SCHEMA_DIR.glob("[0-9][0-9][0-9]_*.sql")):
        out.append((int(path.name[:3]), path.read_text(encoding="utf-8")))
    return out


def latest_version() -> int:
    return max((v for v, _ in migrations()), default=0)


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".lock")


def gated_path(db_path: Path) -> Path:
    """Present while any team has a token or any quota is set (see ``is_gated``)."""
    return db_path.with_name(db_path.name + ".gated")


def is_gated(db_path: Path) -> bool:
    """A hint, refreshed at the end of every write: may a submission be refused by auth or quota?

    Intake skips its early read-only check when the answer is no; the authoritative check runs
    inside the storing transaction either way, so a stale hint costs work, never correctness.
    """
    return gated_path(db_path).exists()


def _refresh_gate_hint(con: duckdb.DuckDBPyConnection, db_path: Path) -> None:
    try:
        gated = bool(con.execute("SELECT EXISTS (SELECT 1 FROM team_tokens) OR EXISTS (SELECT 1 FROM quotas)").fetchone()[0])  # type: ignore[index]
    except duckdb.Error:
        gated = True
    hint = gated_path(db_path)
    with contextlib.suppress(OSError):  # only a hint: never fail a committed write over it
        if gated and not hint.exists():
            hint.touch()
        elif not gated and hint.exists():
            hint.unlink(missing_ok=True)


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL when ``PROCBENCH_CRASH_AT`` names this point (tests only)."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _open_lock_file(db_path: Path, *, shared: bool) -> IO[str] | None:
    path = lock_path(db_path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("a")
    except OSError:
        if shared:
            return None  # read-only mount: readers fall back to retrying the open
        raise


@contextlib.contextmanager
def _flock(db_path: Path, *, shared: bool, timeout: float = LOCK_TIMEOUT_S) -> Iterator[bool]:
    """Hold ``<db>.lock`` (shared or exclusive); yields False when no lock file could be opened."""
    handle = _open_lock_file(db_path, shared=shared)
    if handle is None:
        yield False
        return
    with handle:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(handle, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the database {db_path} is busy (waited {timeout:.0f} s for {'readers and ' if not shared else ''}writers)") from None
                # jittered backoff, capped low so that many waiting processes take turns quickly
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.05)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The database's migration version (0 for a new file)."""
    try:
        row = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row else 0


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Apply the migrations newer than the database, each in its own transaction."""
    current = schema_version(con)
    pending = [(v, sql) for v, sql in migrations() if v > current]
    if not pending:
        return
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    for version, sql in pending:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(sql)
            con.execute("INSERT INTO schema_version (version) VALUES (?)", [version])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


class _Session(threading.local):
    """Per thread: one in-memory DuckDB connection to which store files are attached in turn.

    ``ATTACH``/``DETACH`` of a file costs a few milliseconds where ``duckdb.connect``/``close``
    costs tens (a new database instance each time); writers hold the store's lock only that long.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.open: dict[str, tuple[str, bool]] = {}  # resolved path -> (alias, read_only)

    def connection(self) -> duckdb.DuckDBPyConnection:
        if self.pid != os.getpid():  # a forked child must not share its parent's database instance
            self.pid, self.con, self.open = os.getpid(), None, {}
        if self.con is None:
            self.con = duckdb.connect(":memory:", config=CONNECT_CONFIG)
        return self.con

    def discard(self) -> None:
        if self.con is not None:
            with contextlib.suppress(duckdb.Error):
                self.con.close()  # closing the instance releases every file it had attached
        self.con, self.open = None, {}


_SESSION = _Session()


def _attach(con: duckdb.DuckDBPyConnection, path: Path, alias: str, *, read_only: bool) -> None:
    # Under the store's lock the first try succeeds; retries cover processes that ignore the lock
    # (the duckdb shell, or a reader on a read-only mount that could not create the lock file).
    options = " (READ_ONLY)" if read_only else ""
    for attempt in range(READ_RETRIES):
        try:
            con.execute(f"ATTACH ? AS {alias}{options}", [str(path)])  # alias: hex digits only
            return
        except duckdb.IOException:
            if attempt == READ_RETRIES - 1:
                break
            time.sleep(min(0.05 * (attempt + 1), 0.5))
    raise TimeoutError(f"could not open {path}: another process keeps it locked")


@contextlib.contextmanager
def _attached(path: Path, *, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """This thread's connection with ``path`` attached and in use; detached (file released) on exit."""
    key = str(path.resolve())
    con = _SESSION.connection()
    row = con.execute("SELECT current_database()").fetchone()
    previous = row[0] if row else "memory"
    if key in _SESSION.open:  # nested in this thread: the outer block holds the lock and the file
        alias, outer_read_only = _SESSION.open[key]
        if outer_read_only and not read_only:
            raise RuntimeError(f"cannot write to {path} inside a read of it in the same thread")
        con.execute(f"USE {alias}")
        try:
            yield con
        finally:
            con.execute(f"USE {previous}")
        return
    alias = "pb_" + hashlib.sha256(key.encode()).hexdigest()[:16]
    with _flock(path, shared=read_only):
        _attach(con, path, alias, read_only=read_only)
        _SESSION.open[key] = (alias, read_only)
        try:
            con.execute(f"USE {alias}")
            yield con
        finally:
            _SESSION.open.pop(key, None)
            try:
                con.execute(f"USE {previous}")
                con.execute(f"DETACH {alias}")
            except duckdb.Error:
                _SESSION.discard()  # e.g. a transaction left open: drop the instance, which frees the file


@contextlib.contextmanager
def writer(db_path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """An exclusive, migrated read-write connection to the store (released on exit).

    The connection is this thread's session with the store attached and selected (``USE``), so
    unqualified table names refer to the store; do not keep it beyond the ``with`` block.
    """
    path = Path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _attached(path, read_only=False) as con:
        _migrate(con)
        yield con
        crash_point("store.before_close")
        _refresh_gate_hint(con, path)


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, or ROLLBACK on any exception (including KeyboardInterrupt)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


_CURRENT: set[tuple[str, int]] = set()  # (path, inode) of databases seen at the latest version


def _ensure_current(path: Path) -> None:
    """Upgrade an older database before reading it (checked once per process and file)."""
    key = (str(path.resolve()), path.stat().st_ino)
    if key in _CURRENT or key[0] in _SESSION.open:
        return
    with _attached(path, read_only=True) as con:
        version = schema_version(con)
    if version < latest_version():
        try:
            with writer(path):
                pass
        except (OSError, duckdb.Error):
            return  # no write access: read what is there
    _CURRENT.add(key)


@contextlib.contextmanager
def reader(db_path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the store that only ever sees committed submissions.

    Waits (shared lock) while a writer holds the store; upgrades an older database first.  The
    database must exist (build it with ``procbench submit`` or ``procbench demo``).  Like
    ``writer``, the connection is only valid inside the ``with`` block.
    """
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"no procbench database at {path}")
    _ensure_current(path)
    with _attached(path, read_only=True) as con:
        yield con


# -- rows ------------------------------------------------------------------------------------------


def submission_id(task: str, split: str, team: str, content_sha256: str, fingerprint: str) -> str:
    return hashlib.sha256("\x1f".join([task, split, team, content_sha256, fingerprint]).encode()).hexdigest()[:20]


def now() -> datetime:
    """Naive UTC, the timestamp convention of the store."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


ITEM_SCHEMA = {"submission_id": pl.String, "item_id": pl.String, "metric": pl.String, "value": pl.Float64}
AGGREGATE_SCHEMA = {"submission_id": pl.String, "slice": pl.String, "slice_value": pl.String, "metric": pl.String, "value": pl.Float64, "n_items": pl.Int64}


@dataclass(frozen=True)
class SubmissionRow:
    """Everything stored in one ``submissions`` row."""

    submission_id: str
    task: str
    split: str
    fingerprint: str
    team: str
    model: str
    content_sha256: str
    n_items: int
    created_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)
    is_reference: bool = False
    origin_id: str = ""  # '' means itself
    receipt_id: str = ""
    filename: str = ""
    size_class: str = "unknown"
    weights: str = "unknown"
    method_family: str = "unknown"
    paper_url: str = ""
    code_url: str = ""
    description: str = ""
    hidden: bool = False
    deleted: bool = False


@dataclass(frozen=True)
class StatusEvent:
    status: str  # received | validated | scored | failed | hidden | unhidden | deleted | restored | rescored
    at: datetime
    reason: str = ""
    actor: str = ""


def register_task(con: duckdb.DuckDBPyConnection, *, task: str, split: str, fingerprint: str, title: str, benchmark: str, version: str, primary_metric: str, hidden: bool, spec_json: str, labels: Mapping[str, Mapping[str, str]], registered_at: datetime | None = None) -> None:
    """Record a task's fingerprint for a split (and its item labels) if it is new."""
    exists = con.execute("SELECT 1 FROM tasks WHERE task = ? AND split = ? AND fingerprint = ?", [task, split, fingerprint]).fetchone()
    if exists:
        return
    con.execute(
        "INSERT INTO tasks (task, split, fingerprint, title, benchmark, version, primary_metric, hidden, spec_json, registered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [task, split, fingerprint, title, benchmark, version, primary_metric, hidden, spec_json, registered_at or now()],
    )
    rows = [(task, split, fingerprint, item_id, dim, value) for item_id, dims in labels.items() for dim, value in dims.items()]
    if rows:
        frame = pl.DataFrame(rows, schema=["task", "split", "fingerprint", "item_id", "dimension", "value"], orient="row")
        con.register("new_labels", frame.to_arrow())
        con.execute("INSERT INTO item_labels SELECT * FROM new_labels")
        con.unregister("new_labels")


_SUBMISSION_COLUMNS = (
    "submission_id", "task", "split", "fingerprint", "team", "model", "content_sha256", "metadata_json", "is_reference",
    "hidden", "deleted", "n_items", "created_at", "origin_id", "receipt_id", "filename", "size_class", "weights",
    "method_family", "paper_url", "code_url", "description",
)


def insert_submission(con: duckdb.DuckDBPyConnection, row: SubmissionRow, *, items: pl.DataFrame, aggregates: pl.DataFrame, history: Sequence[StatusEvent]) -> None:
    """Insert one scored submission, its per-item scores, aggregates and status trail.

    The caller holds the transaction; ``items``/``aggregates`` follow ITEM_SCHEMA/AGGREGATE_SCHEMA.
    """
    values = [
        row.submission_id, row.task, row.split, row.fingerprint, row.team, row.model, row.content_sha256,
        json.dumps(dict(row.metadata), sort_keys=True, default=str), row.is_reference, row.hidden, row.deleted, row.n_items,
        row.created_at, row.origin_id or row.submission_id, row.receipt_id, row.filename, row.size_class, row.weights,
        row.method_family, row.paper_url, row.code_url, row.description,
    ]
    placeholders = ", ".join("?" for _ in _SUBMISSION_COLUMNS)
    con.execute(f"INSERT INTO submissions ({', '.join(_SUBMISSION_COLUMNS)}) VALUES ({placeholders})", values)
    if history:
        rows = ", ".join("(?, ?, ?, ?, ?)" for _ in history)
        con.execute(
            f"INSERT INTO status_history (submission_id, status, reason, changed_at, actor) VALUES {rows}",
            [v for e in history for v in (row.submission_id, e.status, e.reason, e.at, e.actor)],
        )
    if items.height:
        con.register("new_items", items.to_arrow())
        con.execute("INSERT INTO item_scores SELECT submission_id, item_id, metric, value FROM new_items")
        con.unregister("new_items")
    crash_point("store.between_inserts")
    if aggregates.height:
        con.register("new_aggregates", aggregates.to_arrow())
        con.execute("INSERT INTO aggregates SELECT submission_id, slice, slice_value, metric, value, n_items FROM new_aggregates")
        con.unregister("new_aggregates")


def add_status(con: duckdb.DuckDBPyConnection, sid: str, event: StatusEvent) -> None:
    con.execute(
        "INSERT INTO status_history (submission_id, status, reason, changed_at, actor) VALUES (?, ?, ?, ?, ?)",
        [sid, event.status, event.reason, event.at, event.actor],
    )


def record_failure(con: duckdb.DuckDBPyConnection, *, receipt_id: str, task: str, split: str, team: str, model: str, filename: str, content_sha256: str, stage: str, reason: str, at: datetime) -> None:
    """One row in ``failures``: an intake that stored no submission, with the reason shown to the user."""
    con.execute(
        "INSERT INTO failures (receipt_id, task, split, team, model, filename, content_sha256, stage, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [receipt_id, task, split, team, model, filename, content_sha256, stage, reason, at],
    )


def exists(con: duckdb.DuckDBPyConnection, sid: str) -> bool:
    return con.execute("SELECT 1 FROM submissions WHERE submission_id = ?", [sid]).fetchone() is not None
