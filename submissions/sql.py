"""DuckDB as the store's modules use it: the engine's extension module, the package's Python layer when wanted.

``import duckdb`` runs the package's ``__init__``: its relational API (``con.sql``, ``con.table``, Arrow and
Polars results and scans, set on the connection class) and its version lookup through
``importlib.metadata`` (which imports ``email``, ``zipfile``, ``calendar``, ...) -- about 0.08 s CPU of
every ``procbench submit`` (issue #31).  Intake's SQL goes through ``execute`` and ``fetch*`` alone, which
the extension module ``_duckdb`` has by itself.  The connection, its exceptions and its types are that
module's, which the package re-exports unchanged (``duckdb.Error is _duckdb.Error``), so code that imports
``duckdb`` itself (the site, the exports) catches and passes the same objects.

Every store block (``procbench.submissions.store``'s ``reader`` and ``writer``) loads the package first
(:func:`load_package`: a no-op once it is imported), so a read path that asks for ``con.sql`` or an Arrow
table finds it, unless the block runs inside :func:`engine_only`, which intake's own work does.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import sys
from collections.abc import Iterator

try:
    import _duckdb as duckdb
except ImportError:  # pragma: no cover - another DuckDB layout: the package, whole
    import duckdb  # type: ignore[no-redef]

__all__ = ["duckdb", "engine_only", "load_package"]

_ENGINE_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "procbench_duckdb_engine_only", default=False
)


def load_package() -> None:
    """Import the ``duckdb`` package (its relational API and Arrow support), unless inside :func:`engine_only`."""
    if "duckdb" not in sys.modules and not _ENGINE_ONLY.get():
        importlib.import_module("duckdb")


@contextlib.contextmanager
def engine_only() -> Iterator[None]:
    """Store blocks opened inside need DuckDB's engine only (``execute`` and ``fetch*``): the package is not imported for them."""
    token = _ENGINE_ONLY.set(True)
    try:
        yield
    finally:
        _ENGINE_ONLY.reset(token)
