"""Where things live: the shipped resources, the data root, the default store and the caches.

The bottom of the layers (docs/architecture.md): every package reads these paths and defaults from
here, so each is defined once.  ``procbench.paths`` re-exports them for the CLI and the API.

Shipped resources (specs, migrations and prediction schemas, samples, the grammar, the leaderboard's
app) are found in the ``procbench`` package folder.  In a checkout, ``procbench/`` holds links to the
top-level folders the repository keeps (``procbench/runners`` -> ``runners/``, ``procbench/specs`` ->
``specs/``; docs/architecture.md "One import name"); in an installed wheel the same names are real
folders.  They are read, never written: what procbench generates goes to a folder the user names, the
current directory (``var/``) or the user's cache folder.
"""

from __future__ import annotations

import os
from pathlib import Path


def _resource_root() -> Path:
    # procbench/ (this module is procbench/runners/runtime/paths.py), found from __file__ as
    # ``importlib.resources.files`` would; that module itself (zipfile, tempfile, shutil) costs every
    # command several milliseconds of start-up (issue #19).  __file__ keeps the link's path: in a
    # checkout it is <checkout>/procbench/runners/runtime/paths.py, not <checkout>/runners/runtime/paths.py.
    package = Path(__file__).parent.parent  # procbench/runners
    if (
        not package.is_dir()
    ):  # e.g. a zip import: resources are read as files (DuckDB, Polars, glob)
        raise RuntimeError(f"procbench must be installed as files, not from an archive ({package})")
    return package.parent


RESOURCE_ROOT = _resource_root()  # the procbench package: specs/, schema/, samples/ and the sources
# A checkout's procbench/runners is a link to the top-level runners/ beside pyproject.toml; a wheel's is a folder.
INSTALLED = not (RESOURCE_ROOT / "runners").is_symlink()
PROJECT_ROOT = (
    RESOURCE_ROOT if INSTALLED else RESOURCE_ROOT.parent
)  # the checkout (docs/, bench/, var/); installed, the package
SPECS_DIR = RESOURCE_ROOT / "specs"
SCHEMA_DIR = RESOURCE_ROOT / "schema"
SAMPLES_DIR = RESOURCE_ROOT / "samples"
SAMPLE_DATA_ROOT = SAMPLES_DIR / "data"
SAMPLE_SUBMISSIONS_DIR = SAMPLES_DIR / "submissions"
SHARED_DIR = PROJECT_ROOT.parent / "shared"  # beside a checkout only (see default_data_root)
DEFAULT_DB = Path(
    "var/procbench.duckdb"
)  # the store when no --db / PROCBENCH_DB is given (in the current directory)


def resource(*parts: str) -> Path:
    """A shipped file or folder, e.g. ``resource("dsl", "procbench.lark")``: read it, never write it."""
    return RESOURCE_ROOT.joinpath(*parts)


def default_cache_dir(kind: str) -> Path:
    """A cache folder: ``var/cache/<kind>`` in a checkout, ``$XDG_CACHE_HOME/procbench/<kind>`` when installed."""
    if not INSTALLED:
        return PROJECT_ROOT / "var" / "cache" / kind
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "procbench" / kind


def default_data_root() -> Path | None:
    """``PROCBENCH_DATA``, else ``../shared/data`` beside a checkout (not an installed wheel) when it exists."""
    env = os.environ.get("PROCBENCH_DATA")
    if env:
        return Path(env).expanduser().resolve()
    if INSTALLED:
        return None
    candidate = SHARED_DIR / "data"
    return candidate if candidate.is_dir() else None


def default_fetch_root() -> Path:
    """Where ``procbench data fetch`` puts files: ``PROCBENCH_DATA``, else ``$XDG_DATA_HOME/procbench/data``."""
    env = os.environ.get("PROCBENCH_DATA")
    if env:
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser().resolve() / "procbench" / "data"


def resolve_data_root(explicit: str | os.PathLike[str] | None) -> Path:
    """``--data-dir``, ``PROCBENCH_DATA``, ``../shared/data``, what ``data fetch`` fetched, the samples."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    fetched = default_fetch_root()
    return default_data_root() or (
        fetched if fetched.is_dir() and any(fetched.iterdir()) else SAMPLE_DATA_ROOT
    )


def parity_root() -> Path | None:
    """``PROCBENCH_PARITY``, else the ``parity`` folder beside the data root."""
    env = os.environ.get("PROCBENCH_PARITY")
    if env:
        return Path(env).expanduser().resolve()
    data = default_data_root()
    if data is not None and (data.parent / "parity").is_dir():
        return data.parent / "parity"
    return None


# -- data paths stay under the data root -----------------------------------------------------------------
# A spec names its data files relative to the data root; the checker refuses any that could leave it (procbench.dsl.lock and
# dsl/checker.py), the plan built from the spec cache is checked the same way (dsl/plan.py), and every file a table
# reader opens is checked again here once resolved, so neither a planted cache entry nor a linked folder or a split
# name reads gold from elsewhere (docs/submissions.md, threat model).


def relative_path_problems(what: str, value: str, *, folder: bool = False) -> list[str]:
    """Why ``value`` could not be a path inside the data root ('' allowed for a folder: the root itself)."""
    import re

    if not isinstance(value, str):
        return [f"{what} is {type(value).__name__}, not a path"]
    if not value:
        return [] if folder else [f"{what} is empty"]
    problems = []
    if "\\" in value:
        problems.append(f"{what} {value!r} contains a backslash; write paths with '/'")
    if value.startswith("/") or re.match(r"^[A-Za-z]:", value):
        problems.append(
            f"{what} {value!r} is absolute; it must be relative (to the data root or the origin)"
        )
    parts = value.removesuffix("/").split("/") if folder else value.split("/")
    if ".." in parts:
        problems.append(f"{what} {value!r} contains '..', which would leave the data root")
    if any(part in ("", ".") for part in parts) and not value.startswith("/"):
        problems.append(
            f"{what} {value!r} has an empty or '.' segment; write it without '//' or './'"
        )
    if any(ord(ch) < 32 for ch in value):
        problems.append(f"{what} {value!r} contains a control character")
    return problems


class OutsideDataRoot(ValueError):
    """A data file that would be read from outside the data root (refused before it is opened)."""


def under_data_root(root: Path, relative: str, what: str) -> Path:
    """``root / relative``, once ``relative`` is a plain relative path and the resolved file lies inside the resolved
    root (no link leads out of it); raises OutsideDataRoot with the reason."""
    problems = relative_path_problems(what, relative)
    if problems:
        raise OutsideDataRoot(f"{problems[0]}; nothing is read from outside the data root {root}")
    path = root / relative
    inside, resolved = root.resolve(), path.resolve()
    if not resolved.is_relative_to(inside):
        raise OutsideDataRoot(
            f"{what} {relative!r} resolves to {resolved}, outside the data root {inside} (a link?); nothing is read from it"
        )
    return path
