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

Two tables exist only to make reads fast (migration 003): ``aggregates_packed`` (what the board
view reads) and ``row_spans`` (where each submission's rows lie in ``item_scores`` and ``aggregates``).
Every write keeps them up to date: ``insert_submission`` packs a submission's aggregates in its own
transaction, and ``sync_read_paths`` runs at the end of every ``writer`` block for what was written
any other way.  Both rest on ``aggregates`` and ``item_scores`` being append-only: rows are written
once, with their submission, and never updated (hiding or deleting a submission flags it).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

# SHA-256 without OpenSSL for small inputs (issue #31)
from procbench.runners.runtime import digests
from procbench.runners.runtime.paths import SCHEMA_DIR
from procbench.submissions import boards
from procbench.submissions.details import ModelCard
from procbench.submissions.provenance import UNKNOWN, DataProvenance
from procbench.submissions.sql import duckdb, load_package

if TYPE_CHECKING:
    import pyarrow as pa

LOCK_TIMEOUT_S = 300.0
READ_RETRIES = 50
CRASH_ENV = (
    "PROCBENCH_CRASH_AT"  # fault injection for the crash-safety tests: the name of a crash point
)
# No replacement scans: a missing table must be an error, never a Python variable of the same name.
CONNECT_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "python_enable_replacements": False
}


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
        gated = bool(
            con.execute(  # type: ignore[index]
                "SELECT EXISTS (SELECT 1 FROM team_tokens) OR EXISTS (SELECT 1 FROM quotas)"
            ).fetchone()[0]
        )
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
                    raise TimeoutError(
                        f"the database {db_path} is busy (waited {timeout:.0f} s for {'readers and ' if not shared else ''}writers)"
                    ) from None
                # jittered backoff, capped low so that many waiting processes take turns quickly
                import random  # only when the lock is contended

                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.05)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The database's migration version (0 for a new file)."""
    try:
        rows = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()
    except duckdb.CatalogException:
        return 0
    return (
        int(rows[0][0]) if rows else 0
    )  # read to the end: the reader goes on with this connection (con.sql)


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Apply the migrations newer than the database, each in its own transaction."""
    current = schema_version(con)
    pending = [(v, sql) for v, sql in migrations() if v > current]
    if not pending:
        return
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
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
        self.using: list[str] = []  # aliases selected by the blocks entered (USE), innermost last

    def current(self) -> str:
        """The database selected now: the innermost block's, else the connection's own."""
        return self.using[-1] if self.using else "memory"

    def connection(self) -> duckdb.DuckDBPyConnection:
        if self.pid != os.getpid():  # a forked child must not share its parent's database instance
            self.pid, self.con, self.open, self.using = os.getpid(), None, {}, []
        if self.con is None:
            self.con = duckdb.connect(":memory:", config=CONNECT_CONFIG)
            self.con.execute(
                "SET enable_progress_bar = false"
            )  # long migrations must not draw on the user's terminal
        return self.con

    def discard(self) -> None:
        if self.con is not None:
            with contextlib.suppress(duckdb.Error):
                self.con.close()  # closing the instance releases every file it had attached
        self.con, self.open, self.using = None, {}, []


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
    load_package()  # the relational API for read paths that use it (not inside intake's sql.engine_only())
    key = str(path.resolve())
    con = _SESSION.connection()
    previous = _SESSION.current()  # tracked, not asked for: a statement less per block
    if key in _SESSION.open:  # nested in this thread: the outer block holds the lock and the file
        alias, outer_read_only = _SESSION.open[key]
        if outer_read_only and not read_only:
            raise RuntimeError(f"cannot write to {path} inside a read of it in the same thread")
        con.execute(f"USE {alias}")
        _SESSION.using.append(alias)
        try:
            yield con
        finally:
            if _SESSION.using[-1:] == [alias]:
                _SESSION.using.pop()
            con.execute(f"USE {previous}")
        return
    alias = "pb_" + digests.sha256(key.encode()).hexdigest()[:16]
    with _flock(path, shared=read_only):
        _attach(con, path, alias, read_only=read_only)
        _SESSION.open[key] = (alias, read_only)
        try:
            con.execute(f"USE {alias}")
            _SESSION.using.append(alias)
            yield con
        finally:
            _SESSION.open.pop(key, None)
            if _SESSION.using[-1:] == [alias]:
                _SESSION.using.pop()
            try:
                con.execute(f"USE {previous}")
                con.execute(f"DETACH {alias}")
            except duckdb.Error:
                _SESSION.discard()  # e.g. a transaction left open: drop the instance, which frees the file


@contextlib.contextmanager
def writer(db_path: str | Path, *, create: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """An exclusive, migrated read-write connection to the store (released on exit).

    The connection is this thread's session with the store attached and selected (``USE``), so
    unqualified table names refer to the store; do not keep it beyond the ``with`` block.  With
    ``create=False`` a missing store is a FileNotFoundError and nothing is created (no file, folder or
    lock): what records a refusal must not leave a new store behind (issue #17).
    """
    path = Path(db_path)
    if not create and not path.exists():
        raise FileNotFoundError(f"no procbench database at {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _attached(path, read_only=False) as con:
        _migrate(con)
        _CURRENT.add(_current_key(path))  # a read after this write needs no version check
        yield con
        crash_point("store.before_close")
        sync_read_paths(con)
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


def _current_key(path: Path) -> tuple[str, int]:
    return (str(path.resolve()), path.stat().st_ino)


def is_current(db_path: str | Path) -> bool:
    """Whether this process has seen the store at the latest schema version (every ``reader`` checks)."""
    return _current_key(Path(db_path)) in _CURRENT


def _upgrade(path: Path) -> None:
    """Upgrade an older database (a writer migrates it); without write access, what is there is read."""
    try:
        with writer(path):
            pass
    except (OSError, duckdb.Error):
        return  # no write access: read what is there
    _CURRENT.add(_current_key(path))


@contextlib.contextmanager
def reader(db_path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the store that only ever sees committed submissions.

    Waits (shared lock) while a writer holds the store; upgrades an older database first (checked
    once per process and file, in the read's own attachment: issue #31, one attach where a first
    read took two).  The database must exist (build it with ``procbench submit`` or ``procbench
    demo``).  Like ``writer``, the connection is only valid inside the ``with`` block.
    """
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"no procbench database at {path}")
    key = _current_key(path)
    if key not in _CURRENT and key[0] not in _SESSION.open:
        with _attached(path, read_only=True) as con:
            if schema_version(con) >= latest_version():
                _CURRENT.add(key)
                yield con
                return
        _upgrade(path)
    with _attached(path, read_only=True) as con:
        yield con


# -- rows ------------------------------------------------------------------------------------------


def submission_id(task: str, split: str, team: str, content_sha256: str, fingerprint: str) -> str:
    return digests.sha256(
        "\x1f".join([task, split, team, content_sha256, fingerprint]).encode()
    ).hexdigest()[:20]


def now() -> datetime:
    """Naive UTC, the timestamp convention of the store."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass(frozen=True)
class ScoreRows:
    """One submission's rows of ``item_scores`` ((item_id, metric, value) each) or of ``aggregates`` ((slice, slice_value,
    metric, value, n_items) each), in order, as :func:`insert_submission` takes them.

    Plain tuples, inserted through DuckDB's own list parameters: writing a submission needs no data-frame
    library (issue #31: ``procbench submit`` imports neither polars nor pyarrow).  Or, for item rows that came
    from another process as columns (the processes engine's, ``procbench.submissions.rows.ItemColumns``), an
    Arrow ``table`` of them (columns item_id, metric, value) in place of ``rows``: inserted by DuckDB's Arrow scan,
    with no Python object per row (a list parameter converts each value from Python: ten times the time).
    """

    submission_id: str
    rows: tuple[tuple[Any, ...], ...] = ()
    table: pa.Table | None = None  # the rows as an Arrow table instead (``rows`` is then empty)

    @property
    def height(self) -> int:
        return len(self.rows) if self.table is None else self.table.num_rows

    def columns(self, width: int) -> list[list[Any]]:
        """The rows as ``width`` column lists."""
        if self.table is not None:
            return [column.to_pylist() for column in self.table.columns]
        return (
            [list(column) for column in zip(*self.rows)]
            if self.rows
            else [[] for _ in range(width)]
        )


# one submission's aggregates (a ScoreRows) as a relation, with each row's position: parameters id, n, slices, values, metrics, values, counts
_AGGREGATE_ROWS = (
    "SELECT ?::VARCHAR AS submission_id, unnest(range(?)) AS position, unnest(?::VARCHAR[]) AS slice, unnest(?::VARCHAR[]) AS slice_value,"
    " unnest(?::VARCHAR[]) AS metric, unnest(?::DOUBLE[]) AS value, unnest(?::BIGINT[]) AS n_items"
)


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
    card: ModelCard = field(default_factory=ModelCard)
    hidden: bool = False
    deleted: bool = False
    reported_on: str = (
        ""  # a reported row: the data digest of the split it was reported on (migration 004)
    )
    n_answered: int | None = (
        None  # items with a prediction record (migration 007); None: not known (a reported row)
    )
    run_by: str = "submitter"  # who ran the model (migration 009): submitter | operator | paper (procbench.submissions.details.RUN_BY)
    judge_prompt_digest: str = ""  # sha256 of the prompts an LLM judge graded it with (migration 009); '' when no judge graded it


@dataclass(frozen=True)
class StatusEvent:
    status: str  # received | validated | scored | failed | hidden | unhidden | deleted | restored | rescored
    at: datetime
    reason: str = ""
    actor: str = ""


def register_task(
    con: duckdb.DuckDBPyConnection,
    *,
    task: str,
    split: str,
    fingerprint: str,
    title: str,
    benchmark: str,
    version: str,
    primary_metric: str,
    hidden: bool,
    spec_json: str,
    labels: Mapping[str, Mapping[str, str]],
    registered_at: datetime | None = None,
    provenance: DataProvenance | Callable[[], DataProvenance | None] | None = None,
) -> None:
    """Record a task's fingerprint for a split (its item labels, and what its gold is: migration 004) if it is new.

    ``provenance`` may be a function, called only for a new fingerprint (what the gold is costs its files' hashes).

    Registering never moves a board that exists (issue #29): only the first fingerprint of a task and
    split makes its board (``procbench.submissions.boards``); later ones are shown after a re-scoring or an
    explicit ``procbench admin board point``.
    """
    # one statement for a known fingerprint whose spec text is unchanged, a submission's usual case (issue #31)
    same = con.execute(  # fetched to the end: the caller's next call may be other work on the connection
        "SELECT spec_json IS NOT DISTINCT FROM ? FROM tasks WHERE task = ? AND split = ? AND fingerprint = ?",
        [spec_json, task, split, fingerprint],
    ).fetchall()
    if same:
        if not same[0][0]:
            # Same fingerprint, same scoring: what the spec says about showing it (title, names, decimals, rank_partial, ...)
            # follows the spec registering it now, so a display change reaches the board with the next write.
            con.execute(
                "UPDATE tasks SET title = ?, benchmark = ?, version = ?, primary_metric = ?, spec_json = ?"
                " WHERE task = ? AND split = ? AND fingerprint = ?",
                [title, benchmark, version, primary_metric, spec_json, task, split, fingerprint],
            )
        return
    if callable(provenance):
        provenance = provenance()
    known = provenance or DataProvenance(UNKNOWN, None, "", "")
    stamp = registered_at or now()
    boards.before_registering(con, task, split, fingerprint, at=stamp)
    con.execute(
        "INSERT INTO tasks (task, split, fingerprint, title, benchmark, version, primary_metric, hidden, spec_json, registered_at,"
        " data_kind, gold_items, data_digest, scorer_digest, data_root) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            task,
            split,
            fingerprint,
            title,
            benchmark,
            version,
            primary_metric,
            hidden,
            spec_json,
            stamp,
        ]
        + [known.kind, known.gold_items, known.data_digest, known.scorer_digest, known.data_root],
    )
    rows = [
        (item_id, dim, value) for item_id, dims in labels.items() for dim, value in dims.items()
    ]
    if rows:
        item_ids, dimensions, values = ([str(v) for v in column] for column in zip(*rows))
        con.execute(
            "INSERT INTO item_labels (task, split, fingerprint, item_id, dimension, value)"
            " SELECT ?, ?, ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[])",
            [task, split, fingerprint, item_ids, dimensions, values],
        )


_SUBMISSION_COLUMNS = (
    "submission_id",
    "task",
    "split",
    "fingerprint",
    "team",
    "model",
    "content_sha256",
    "metadata_json",
    "is_reference",
    "hidden",
    "deleted",
    "n_items",
    "created_at",
    "origin_id",
    "receipt_id",
    "filename",
    "size_class",
    "weights",
    "method_family",
    "paper_url",
    "code_url",
    "description",
    "reported_on",
    "n_answered",
    "contamination",
    "contamination_source",
    "run_by",
    "judge_prompt_digest",
)


def insert_submission(
    con: duckdb.DuckDBPyConnection,
    row: SubmissionRow,
    *,
    items: ScoreRows,
    aggregates: ScoreRows,
    history: Sequence[StatusEvent],
) -> None:
    """Insert one scored submission, its per-item scores, aggregates (also packed) and status trail.

    The caller holds the transaction; ``items`` and ``aggregates`` are the submission's :class:`ScoreRows`.
    """
    values = [
        row.submission_id,
        row.task,
        row.split,
        row.fingerprint,
        row.team,
        row.model,
        row.content_sha256,
        json.dumps(dict(row.metadata), sort_keys=True, default=str),
        row.is_reference,
        row.hidden,
        row.deleted,
        row.n_items,
        row.created_at,
        row.origin_id or row.submission_id,
        row.receipt_id,
        row.filename,
        row.card.size_class,
        row.card.weights,
        row.card.method_family,
        row.card.paper_url,
        row.card.code_url,
        row.card.description,
        row.reported_on,
        row.n_answered,
        row.card.contamination,
        row.card.contamination_source,
        "paper" if row.is_reference else row.run_by,
        row.judge_prompt_digest,
    ]
    placeholders = ", ".join("?" for _ in _SUBMISSION_COLUMNS)
    con.execute(
        f"INSERT INTO submissions ({', '.join(_SUBMISSION_COLUMNS)}) VALUES ({placeholders})",
        values,
    )
    if history:
        rows = ", ".join("(?, ?, ?, ?, ?)" for _ in history)
        con.execute(
            f"INSERT INTO status_history (submission_id, status, reason, changed_at, actor) VALUES {rows}",
            [v for e in history for v in (row.submission_id, e.status, e.reason, e.at, e.actor)],
        )
    if items.height and items.table is not None:
        _insert_item_table(con, items.submission_id, items.table)
    elif items.height:
        con.execute(
            "INSERT INTO item_scores (submission_id, item_id, metric, value) SELECT ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::DOUBLE[])",
            [items.submission_id, *items.columns(3)],
        )
    crash_point("store.between_inserts")
    if aggregates.height:
        params = [aggregates.submission_id, aggregates.height, *aggregates.columns(5)]
        con.execute(
            "INSERT INTO aggregates (submission_id, slice, slice_value, metric, value, n_items)"
            f" SELECT submission_id, slice, slice_value, metric, value, n_items FROM ({_AGGREGATE_ROWS}) ORDER BY position",
            params,
        )
        con.execute(
            f"""
            INSERT INTO aggregates_packed (submission_id, task, split, fingerprint, slice, slice_value, metric, value, n_items)
            SELECT submission_id, ?, ?, ?, slice, slice_value,
                   list(metric ORDER BY position), list(value ORDER BY position), list(n_items ORDER BY position)
            FROM ({_AGGREGATE_ROWS}) GROUP BY submission_id, slice, slice_value ORDER BY min(position)
            """,
            [row.task, row.split, row.fingerprint, *params],
        )
    if not (row.hidden or row.deleted):
        _count_on_boards(con, row, aggregates)


_ITEM_TABLE = (
    "pb_item_rows"  # the name an Arrow table of item rows is scanned under, for one statement
)


def _insert_item_table(con: duckdb.DuckDBPyConnection, sid: str, table: pa.Table) -> None:
    """Insert one submission's item rows from an Arrow table (item_id, metric, value), in the table's order."""
    importlib.import_module(
        "duckdb"
    )  # DuckDB's Arrow scan is set up by the package (procbench.submissions.sql); pyarrow is loaded already
    con.register(_ITEM_TABLE, table)
    try:
        con.execute(
            f"INSERT INTO item_scores (submission_id, item_id, metric, value) SELECT ?, item_id, metric, value FROM {_ITEM_TABLE}",
            [sid],
        )
    finally:
        con.unregister(_ITEM_TABLE)


def _count_on_boards(
    con: duckdb.DuckDBPyConnection, row: SubmissionRow, aggregates: ScoreRows
) -> None:
    """Add one visible submission to ``board_summary`` (migration 010), in the caller's transaction: O(1), no scan."""
    on_board = aggregates.height > 0
    on_hidden = on_board and (
        row.is_reference or any(a[0] == "" or a[4] >= HIDDEN_SLICE_MIN for a in aggregates.rows)
    )
    con.execute(
        """
        INSERT INTO board_summary VALUES (?, ?, ?, ?, ?, 1, hash(?::VARCHAR), ?, ?, ?, ?)
        ON CONFLICT (task, split, fingerprint, is_reference, reported_on) DO UPDATE SET
            n_visible = n_visible + 1, id_hash = xor(id_hash, excluded.id_hash),
            on_board = on_board + excluded.on_board, on_hidden = on_hidden + excluded.on_hidden,
            last_on_board = greatest(last_on_board, excluded.last_on_board),
            last_on_hidden = greatest(last_on_hidden, excluded.last_on_hidden)
        """,
        [
            row.task,
            row.split,
            row.fingerprint,
            row.is_reference,
            row.reported_on or "",
            row.submission_id,
            int(on_board),
            int(on_hidden),
            row.created_at if on_board else None,
            row.created_at if on_hidden else None,
        ],
    )


def add_status(con: duckdb.DuckDBPyConnection, sid: str, event: StatusEvent) -> None:
    con.execute(
        "INSERT INTO status_history (submission_id, status, reason, changed_at, actor) VALUES (?, ?, ?, ?, ?)",
        [sid, event.status, event.reason, event.at, event.actor],
    )


def record_failure(
    con: duckdb.DuckDBPyConnection,
    *,
    receipt_id: str,
    task: str,
    split: str,
    team: str,
    model: str,
    filename: str,
    content_sha256: str,
    stage: str,
    reason: str,
    at: datetime,
) -> None:
    """One row in ``failures``: an intake that stored no submission, with the reason shown to the user."""
    con.execute(
        "INSERT INTO failures (receipt_id, task, split, team, model, filename, content_sha256, stage, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?) ON CONFLICT DO NOTHING",
        [receipt_id, task, split, team, model, filename, content_sha256, stage, reason, at],
    )


def exists(con: duckdb.DuckDBPyConnection, sid: str) -> bool:
    return (
        con.execute("SELECT 1 FROM submissions WHERE submission_id = ?", [sid]).fetchone()
        is not None
    )


# -- read paths (migration 003) --------------------------------------------------------------------

_PACK = """
    INSERT INTO aggregates_packed (submission_id, task, split, fingerprint, slice, slice_value, metric, value, n_items)
    SELECT a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value,
           list(a.metric ORDER BY a.rowid), list(a.value ORDER BY a.rowid), list(a.n_items ORDER BY a.rowid)
    FROM aggregates a JOIN submissions s ON s.submission_id = a.submission_id
    WHERE a.submission_id IN (SELECT unnest(?))
    GROUP BY a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value
    ORDER BY min(a.rowid)
"""

ITEM_COLUMNS = ("item_id", "metric", "value")
AGGREGATE_COLUMNS = ("slice", "slice_value", "metric", "value", "n_items")
SPANNED = {
    "item_scores": ITEM_COLUMNS,
    "aggregates": AGGREGATE_COLUMNS,
}  # tables row_spans locates rows in -> what a reader gets


HIDDEN_SLICE_MIN = 5  # the board view (migration 002) leaves out a submitted row's slices under this many items on a hidden split

# board_summary (migration 010) recomputed for some (task, split, fingerprint) keys: parameter, a list of [task, split, fingerprint]
_SUMMARY_OF_KEYS = """
    INSERT INTO board_summary
    SELECT v.task, v.split, v.fingerprint, v.is_reference, v.reported_on,
           count(*), bit_xor(hash(v.submission_id)),
           count(*) FILTER (WHERE p.on_board),
           count(*) FILTER (WHERE p.on_board AND (v.is_reference OR p.on_hidden)),
           max(v.created_at) FILTER (WHERE p.on_board),
           max(v.created_at) FILTER (WHERE p.on_board AND (v.is_reference OR p.on_hidden))
    FROM (
        SELECT submission_id, task, split, fingerprint, is_reference, coalesce(reported_on, '') AS reported_on, created_at
        FROM submissions
        WHERE NOT hidden AND NOT deleted AND [task, split, fingerprint] IN (SELECT unnest(?::VARCHAR[][]))
    ) v
    LEFT JOIN (
        SELECT submission_id, bool_or(len(n_items) > 0) AS on_board,
               bool_or(len(n_items) > 0 AND (slice = '' OR list_max(n_items) >= 5)) AS on_hidden
        FROM aggregates_packed
        WHERE [task, split, fingerprint] IN (SELECT unnest(?::VARCHAR[][]))
        GROUP BY submission_id
    ) p USING (submission_id)
    GROUP BY v.task, v.split, v.fingerprint, v.is_reference, v.reported_on
"""


def refresh_board_summary(con: duckdb.DuckDBPyConnection, submission_ids: Sequence[str]) -> None:
    """Recompute the ``board_summary`` keys of these submissions (hide, unhide, delete, restore), in the caller's transaction.

    Reads the submissions and packed aggregates of those boards' fingerprints only.
    """
    keys = [
        list(r)
        for r in con.execute(
            "SELECT DISTINCT task, split, fingerprint FROM submissions WHERE submission_id IN (SELECT unnest(?::VARCHAR[]))",
            [list(submission_ids)],
        ).fetchall()
    ]
    _resummarise(con, keys)


def _resummarise(con: duckdb.DuckDBPyConnection, keys: list[list[str]]) -> None:
    if not keys:
        return
    con.execute(
        "DELETE FROM board_summary WHERE [task, split, fingerprint] IN (SELECT unnest(?::VARCHAR[][]))",
        [keys],
    )
    con.execute(_SUMMARY_OF_KEYS, [keys, keys])


def _sync_board_summary(con: duckdb.DuckDBPyConnection, repacked: Sequence[str]) -> None:
    """Recompute the ``board_summary`` keys whose visible submissions changed behind the writers' backs (bulk loads, other
    tools), and those of ``repacked`` submissions: one pass over ``submissions`` (no aggregate is read unless a key is stale)."""
    stale = con.execute(
        """
        SELECT DISTINCT task, split, fingerprint FROM (
            SELECT task, split, fingerprint, is_reference, coalesce(reported_on, '') AS reported_on,
                   count(*) AS n, bit_xor(hash(submission_id)) AS h
            FROM submissions WHERE NOT hidden AND NOT deleted
            GROUP BY task, split, fingerprint, is_reference, coalesce(reported_on, '')
        ) a
        FULL JOIN board_summary b USING (task, split, fingerprint, is_reference, reported_on)
        WHERE a.n IS DISTINCT FROM b.n_visible OR a.h IS DISTINCT FROM b.id_hash
        UNION
        SELECT DISTINCT task, split, fingerprint FROM submissions WHERE submission_id IN (SELECT unnest(?::VARCHAR[]))
        """,
        [list(repacked)],
    ).fetchall()
    _resummarise(con, [list(r) for r in stale])


def _spanned(table: str) -> str:
    if table not in SPANNED:  # table names are interpolated: only these constants ever are
        raise ValueError(f"row_spans does not cover {table!r}")
    return table


def sync_read_paths(con: duckdb.DuckDBPyConnection) -> None:
    """Bring ``aggregates_packed`` and ``row_spans`` up to date with the committed rows.

    ``writer`` calls this at the end of every block.  After ``insert_submission`` only the new
    rows' spans are left to record; aggregates inserted any other way (bulk loads, other tools) are
    packed here.  Cheap counts decide what to do, so a write that added nothing costs little.
    """
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.TransactionException:
        return  # the block left its transaction open: leaving the block discards it, nothing to sync
    try:
        # what decides both packed-row steps, in one statement (issue #31: each is a statement of every write)
        stored, packed, rows, appended = con.execute(
            "SELECT (SELECT count(*) FROM aggregates), coalesce(sum(len(n_items)), 0), count(*),"
            " count(*) FILTER (WHERE NOT clustered) FROM aggregates_packed"
        ).fetchall()[0]
        repacked = _sync_packed(con, stored, packed)
        _cluster_packed(con, None if repacked else (rows, appended))
        _sync_board_summary(con, repacked)
        stale = _sync_spans(con)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    if stale:  # rows were deleted or moved by something else: let row ids settle, measure again
        con.execute("CHECKPOINT")
        with transaction(con):
            for table in stale:
                con.execute("DELETE FROM row_spans WHERE table_name = ?", [table])
                con.execute(f"INSERT INTO row_spans {_spans_sql(table)}", [table, 0])


def _sync_packed(con: duckdb.DuckDBPyConnection, stored: int, packed: int) -> list[str]:
    """Pack aggregates written without their packed rows (``stored`` aggregate rows, ``packed`` in packed rows); the
    submissions repacked."""
    if stored == packed:
        return []
    # Repack the submissions whose packed rows disagree with their aggregates (aggregates of a
    # submission that does not exist are never packed: the board leaves them out either way).
    stale = [
        r[0]
        for r in con.execute(
            """
            SELECT submission_id FROM (SELECT submission_id, count(*) AS n FROM aggregates GROUP BY submission_id) a
            FULL JOIN (SELECT submission_id, sum(len(n_items)) AS n FROM aggregates_packed GROUP BY submission_id) p USING (submission_id)
            WHERE a.n IS DISTINCT FROM p.n
            """
        ).fetchall()
    ]
    con.execute("DELETE FROM aggregates_packed WHERE submission_id IN (SELECT unnest(?))", [stale])
    con.execute(_PACK, [stale])
    return stale


CLUSTER_SHARE = (
    0.05  # re-cluster aggregates_packed once rows appended since are more than this share of it
)
CLUSTER_MIN_ROWS = (
    4096  # ... and more than this many (scanning fewer costs nothing worth a rewrite)
)


def _cluster_packed(con: duckdb.DuckDBPyConnection, counts: tuple[int, int] | None) -> None:
    """Rewrite ``aggregates_packed`` in (task, split, slice, slice_value) order when enough rows were appended since.

    Clustered, the board of one task and slice value reads a few vectors of the table instead of
    all of it (the appended rows of every task are interleaved, one submission after another).
    ``counts`` is the table's (rows, rows appended since), counted here when None (after a repack).
    """
    rows, appended = (
        counts
        if counts is not None
        else con.execute(
            "SELECT count(*), count(*) FILTER (WHERE NOT clustered) FROM aggregates_packed"
        ).fetchall()[0]
    )
    if appended <= max(CLUSTER_MIN_ROWS, CLUSTER_SHARE * rows):
        return
    # sorted one task and split at a time (the same order as sorting the whole table): a sort holds one board's rows,
    # not the table's (issue #31: at 30 000 generated submissions this rewrite peaked at 348 MB RSS sorted whole, 237
    # MB a board at a time; the copy itself, in one transaction, still grows with the table)
    con.execute(
        "CREATE TABLE aggregates_packed_clustered AS SELECT * FROM aggregates_packed LIMIT 0"
    )
    for task, split in con.execute(
        "SELECT DISTINCT task, split FROM aggregates_packed ORDER BY task, split"
    ).fetchall():
        con.execute(
            "INSERT INTO aggregates_packed_clustered SELECT * FROM aggregates_packed WHERE task = ? AND split = ?"
            " ORDER BY slice, slice_value, rowid",
            [task, split],
        )
    con.execute("DELETE FROM aggregates_packed")
    con.execute(
        "INSERT INTO aggregates_packed SELECT * REPLACE (TRUE AS clustered) FROM aggregates_packed_clustered"
    )
    con.execute("DROP TABLE aggregates_packed_clustered")


def _spans_sql(table: str) -> str:
    """The spans of the rows of ``table`` from a rowid on (parameters: table name, first rowid)."""
    return f"SELECT ?, submission_id, min(rowid), max(rowid), count(*) FROM {_spanned(table)} WHERE rowid >= ? GROUP BY submission_id"


def _sync_spans(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Record the spans of the rows appended to each :data:`SPANNED` table since the last sync; the tables whose spans
    no longer hold.

    Three statements for all the tables (issue #31: it took four per table, each a DuckDB statement of a submit's):
    each table's row count with its spans' coverage, watermark and latest span; then each latest span's rows and the
    rows from each watermark on, counted with their bounds as constants (rowid range scans); then one insert of the
    new spans of every table that has some.
    """
    tables = list(SPANNED)
    state = con.execute(
        " UNION ALL ".join(
            f"""SELECT (SELECT count(*) FROM {_spanned(table)}), coalesce(sum(n_rows), 0), coalesce(max(last_row) + 1, 0),
                arg_max({{'sid': submission_id, 'first': first_row, 'last': last_row, 'n': n_rows}}, last_row)
            FROM row_spans WHERE table_name = ?"""
            for table in tables
        ),
        tables,
    ).fetchall()
    probes, params = [], []
    for table, (_, _, watermark, latest) in zip(tables, state):
        probes.append(f"(SELECT count(*) FROM {table} WHERE rowid >= ?)")
        params.append(watermark)
        if (
            latest is not None
        ):  # a cheap probe for rows deleted or moved by something else: does the last span still hold its rows?
            probes.append(
                f"(SELECT count(*) FROM {table} WHERE rowid BETWEEN ? AND ? AND submission_id = ?)"
            )
            params += [latest["first"], latest["last"], latest["sid"]]
    counted = iter(con.execute(f"SELECT {', '.join(probes)}", params).fetchall()[0])
    stale, appended, appended_params = [], [], []
    for table, (total, covered, watermark, latest) in zip(tables, state):
        tail = next(counted)
        held = next(counted) if latest is not None else None
        if held is not None and held != latest["n"]:
            stale.append(table)
        elif total == covered:
            continue
        elif covered + tail != total:
            stale.append(table)
        else:
            appended.append(_spans_sql(table))
            appended_params += [table, watermark]
    if appended:
        con.execute(
            f"""
            INSERT INTO row_spans {" UNION ALL ".join(appended)}
            ON CONFLICT (table_name, submission_id) DO UPDATE SET first_row = least(first_row, excluded.first_row),
                last_row = greatest(last_row, excluded.last_row), n_rows = n_rows + excluded.n_rows
            """,
            appended_params,
        )
    return stale


_ROWS_PER_SCAN = 32  # submissions read by one scan (each adds a rowid range to its filter)


def submission_rows(
    con: duckdb.DuckDBPyConnection, table: str, sids: Sequence[str]
) -> dict[str, pa.Table]:
    """Each submission's rows of ``item_scores`` (ITEM_COLUMNS) or ``aggregates`` (AGGREGATE_COLUMNS), in no particular order.

    A scan reads only where the submissions' spans point (a row group each, typically) and the
    rows appended since the last sync.  A submission that finds before the watermark another
    number of rows than its span counts (rows deleted or moved by something else) is read again
    with a full scan, as is every submission of a store older than migration 003.
    """
    wanted = list(dict.fromkeys(sids))
    out: dict[str, pa.Table] = {}
    for start in range(0, len(wanted), _ROWS_PER_SCAN):
        out |= _rows_of(con, table, wanted[start : start + _ROWS_PER_SCAN])
    return out


def _rows_of(con: duckdb.DuckDBPyConnection, table: str, wanted: list[str]) -> dict[str, pa.Table]:
    import pyarrow.compute as pc  # the read paths' (the site's), never the writers'

    columns = SPANNED[_spanned(table)]
    plain = f"SELECT {', '.join(columns)} FROM {table} WHERE submission_id = ?"
    try:
        watermark, spans = con.execute(
            "SELECT coalesce(max(last_row) + 1, 0), list((submission_id, first_row, last_row, n_rows)) FILTER (WHERE list_contains(?, submission_id)) FROM "
            "row_spans WHERE table_name = ?",
            [wanted, table],
        ).fetchall()[0]
    except duckdb.CatalogException:
        return {sid: con.sql(plain, params=[sid]).to_arrow_table() for sid in wanted}
    spans = spans or []
    counted = {sid: 0 for sid in wanted} | {sid: n_rows for sid, _, _, n_rows in spans}
    ranges = " OR ".join(
        ["rowid BETWEEN ? AND ?"] * len(spans) + ["rowid >= ?"]
    )  # rows at or past the watermark: not synced yet
    found = con.sql(
        f"""
        SELECT submission_id, {", ".join(columns)}, rowid < ? AS spanned FROM {table}
        WHERE submission_id IN ({", ".join("?" for _ in wanted)}) AND ({ranges})
        """,
        params=[
            watermark,
            *wanted,
            *(v for _, first, last, _ in spans for v in (first, last)),
            watermark,
        ],
    ).to_arrow_table()
    out: dict[str, pa.Table] = {}
    for sid in wanted:
        rows = found.filter(pc.equal(found["submission_id"], sid)) if len(wanted) > 1 else found
        if (pc.sum(rows["spanned"]).as_py() or 0) == counted[sid]:
            out[sid] = rows.select(list(columns))
        else:
            out[sid] = con.sql(plain, params=[sid]).to_arrow_table()
    return out
