"""Store reads cached for the whole site process, invalidated by the store's version (issue #19, part 5).

Every page view used to re-read the store (attach, query, detach, per query and per view).  Here a
query's result is kept, process-wide and across sessions, under the store's *version*: the identity,
size and modification time of the database file and its write-ahead log.  Any committed write
(an upload, ``procbench submit`` in another process, an admin action) changes one of them, so the
next view reads again; a warm view of an unchanged store costs two ``stat`` calls and no DuckDB work.

Misses run one at a time, each on a short-lived reader thread: the store's connection is per thread
(``procbench.submissions.store``: an in-memory DuckDB with the file attached for each read), so the site
process holds at most one such connection, not one per Streamlit script run, and none between reads.
:func:`prefetch` runs several known misses on one such thread, so they share one instance and attachment.  The file itself is attached
only for the duration of each read (read-only, under the shared lock), never held open: DuckDB
refuses a read-write open in another process while any process has the file open, and
``procbench submit`` must keep working beside a running site.

Results are shared between callers: treat them as read-only (polars frames are immutable).

:func:`memo` keeps what a page *computes* from those reads (a chart's Vega-Lite spec, a table of paired
tests) under the same version, so a warm view of Charts or Compare rebuilds neither (issue #19: those
were most of a warm view's server CPU on a 10 000-submission store).  It computes on the caller's
thread, outside the one-read-at-a-time lock: a slow first computation never holds up other pages' reads.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from procbench.submissions.store import reader

P = ParamSpec("P")
R = TypeVar("R")

MAX_ENTRIES = (
    4096  # per process; a board view needs a handful, a 10 000-row store's pages a few hundred
)
_READER_NAME = "procbench-store-reader"
_reading = threading.Lock()  # one store read at a time
_lock = threading.Lock()
_entries: OrderedDict[Hashable, Any] = OrderedDict()
_stats = {"hits": 0, "misses": 0, "memo_hits": 0, "memo_misses": 0}
_MISSING = object()  # a kept result may itself be None

Version = tuple[tuple[int, int, int], ...]


def _stat(path: Path) -> tuple[int, int, int]:
    try:
        s = path.stat()
    except OSError:
        return (0, 0, 0)
    return (s.st_ino, s.st_size, s.st_mtime_ns)


def store_version(db: str | Path) -> Version:
    """What changes whenever a write to the store commits: (inode, size, mtime) of the file and its WAL."""
    path = Path(db)
    return (_stat(path), _stat(path.with_name(path.name + ".wal")))


def _on_reader_thread() -> bool:
    return threading.current_thread().name.startswith(_READER_NAME)


def _run(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn`` on a short-lived reader thread, one at a time: its per-thread store connection closes when it ends.

    Not a pooled thread: a thread (and its DuckDB instance) left alive in the process makes a later
    ``fork`` unsafe (Ray's workers, ``multiprocessing``); a miss is rare, so a thread per miss is cheap.
    """
    if _on_reader_thread():  # a cached query calling another: already on the reader
        return fn(*args, **kwargs)
    outcome: dict[str, Any] = {}

    def read() -> None:
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # re-raised on the caller's thread
            outcome["error"] = exc

    with _reading:
        reader = threading.Thread(target=read, name=_READER_NAME)
        reader.start()
        reader.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _lookup(key: Hashable, counter: str) -> Any:
    """The entry kept under ``key`` (counted as a hit), or ``_MISSING``."""
    with _lock:
        if key not in _entries:
            return _MISSING
        _entries.move_to_end(key)
        _stats[counter] += 1
        return _entries[key]


def _keep(key: Hashable, value: R, counter: str) -> R:
    """Keep ``value`` under ``key`` (counted as a miss), the least recently used entries dropped past ``MAX_ENTRIES``."""
    with _lock:
        _stats[counter] += 1
        _entries[key] = value
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return value


def cached(fn: Callable[P, R]) -> Callable[P, R]:
    """Cache ``fn(db, *args)`` under (fn, db, store version, args); arguments must be hashable.

    The version is read *before* the query, so a write that lands during the read is seen by the
    next call (it changes the version again); a result is never kept under a version it predates.
    """
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(db: Any, *args: Any, **kwargs: Any) -> Any:
        resolved = os.path.realpath(db)
        key = (name, resolved, store_version(resolved), args, tuple(sorted(kwargs.items())))
        found = _lookup(key, "hits")
        if found is not _MISSING:
            return found
        return _keep(key, _run(fn, Path(db), *args, **kwargs), "misses")

    wrapper._cache_name = name  # type: ignore[attr-defined]  # read by prefetch()
    return wrapper  # type: ignore[return-value]


Calls = list[tuple[Callable[..., Any], tuple[Hashable, ...]]]


def prefetch(db: str | Path, calls: Calls, then: Callable[[], Calls] | None = None) -> None:
    """Read the misses among ``calls`` (functions :func:`cached` made, each with its arguments after ``db``) together.

    One reader thread, one DuckDB instance and one attachment of the file serve them all, where each miss
    alone pays its own (about 0.03 s at 100 000 submissions, several per board: issue #31, Home's first view
    after a write); they also read one snapshot.  Each result is kept under the key its own call would use,
    so the calls that follow are hits.  Keyword arguments are not supported (none of the batched reads has any).

    ``then`` names further calls once those are kept (e.g. the reads of the boards a write changed, known from the
    boards' versions read first); their misses are read in the same attachment (issue #31: Home's first view after a
    write made two).  It is called where the reads run, so its own cached calls find the first ones kept.
    """
    resolved = os.path.realpath(db)
    version = store_version(resolved)

    def missing(batch: Calls) -> list[tuple[Hashable, Callable[..., Any], tuple[Hashable, ...]]]:
        todo: list[tuple[Hashable, Callable[..., Any], tuple[Hashable, ...]]] = []
        for wrapper, args in batch:
            key = (wrapper._cache_name, resolved, version, args, ())  # type: ignore[attr-defined]
            with _lock:
                if key in _entries:
                    continue
            todo.append((key, wrapper.__wrapped__, args))  # type: ignore[attr-defined]
        return todo

    todo = missing(calls)
    if then is not None and not todo:  # the first calls are kept: the further ones alone
        todo, then = missing(then()), None
    if len(todo) < 2 and then is None:  # nothing to share: the calls themselves read it
        return

    def read_all() -> None:
        with reader(Path(db)):  # the reads below nest in this attachment (store._attached)
            for key, fn, args in todo:
                _keep(key, fn(Path(db), *args), "misses")
            for key, fn, args in missing(then()) if then is not None else []:
                _keep(key, fn(Path(db), *args), "misses")

    _run(read_all)


def memo_kept(db: str | Path, name: str, args: Hashable) -> bool:
    """Whether :func:`memo` keeps ``name`` with ``args`` for the store's current version (not counted as a hit)."""
    resolved = os.path.realpath(db)
    with _lock:
        return ("memo", name, resolved, store_version(resolved), args) in _entries


def versioned_kept(db: str | Path, name: str, args: Hashable, version: Hashable) -> bool:
    """Whether :func:`memo_versioned` keeps ``name`` with ``args`` at ``version`` (not counted as a hit)."""
    key = ("versioned", name, os.path.realpath(db), args)
    with _lock:
        found = _entries.get(key, _MISSING)
    return found is not _MISSING and found[0] == version


def memo(db: str | Path, name: str, args: Hashable, compute: Callable[[], R]) -> R:
    """``compute()``, kept under (``name``, db, store version, ``args``): ``args`` must name everything the result depends on
    besides the store's contents (the page's choices).  Computed on the caller's thread; the result is shared: read-only."""
    resolved = os.path.realpath(db)
    key = ("memo", name, resolved, store_version(resolved), args)
    found = _lookup(key, "memo_hits")
    if found is not _MISSING:
        return found
    return _keep(key, compute(), "memo_misses")


def memo_versioned(
    db: str | Path, name: str, args: Hashable, version: Hashable, compute: Callable[[], R]
) -> R:
    """``compute()``, kept under (``name``, db, ``args``) for as long as ``version`` stays the same, across store versions.

    For a result that depends on a small, known part of the store: ``version`` must name all of that part (e.g. one
    board's counts and id hash, migration 010), so a write elsewhere in the store leaves the result kept.  One entry per
    (``name``, db, ``args``): a new version replaces the old one.  Computed on the caller's thread; shared: read-only.
    """
    key = ("versioned", name, os.path.realpath(db), args)
    found = _lookup(key, "memo_hits")
    if found is not _MISSING and found[0] == version:
        return found[1]
    return _keep(key, (version, compute()), "memo_misses")[1]


def stats() -> dict[str, int]:
    """Hits and misses since the process started (or :func:`clear`): what the tests count, not time."""
    with _lock:
        return {**_stats, "entries": len(_entries)}


def clear() -> None:
    with _lock:
        _entries.clear()
        _stats.update(hits=0, misses=0, memo_hits=0, memo_misses=0)
