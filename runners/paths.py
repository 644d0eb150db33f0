"""Where things live: the project root, the bundled samples, the data root and the default store.

The bottom of the layers (docs/architecture.md): every package reads these paths and defaults from
here, so each is defined once.  ``procbench.paths`` re-exports them for the CLI and the API.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SPECS_DIR = PROJECT_ROOT / "specs"
SCHEMA_DIR = PROJECT_ROOT / "schema"
SAMPLES_DIR = PROJECT_ROOT / "samples"
SAMPLE_DATA_ROOT = SAMPLES_DIR / "data"
SAMPLE_SUBMISSIONS_DIR = SAMPLES_DIR / "submissions"
SHARED_DIR = PROJECT_ROOT.parent / "shared"
DEFAULT_DB = Path("var/procbench.duckdb")  # the store when no --db / PROCBENCH_DB is given


def default_data_root() -> Path | None:
    """``PROCBENCH_DATA``, else ``../shared/data`` beside the checkout when it exists."""
    env = os.environ.get("PROCBENCH_DATA")
    if env:
        return Path(env).expanduser().resolve()
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
    return default_data_root() or (fetched if fetched.is_dir() and any(fetched.iterdir()) else SAMPLE_DATA_ROOT)


def parity_root() -> Path | None:
    """``PROCBENCH_PARITY``, else the ``parity`` folder beside the data root."""
    env = os.environ.get("PROCBENCH_PARITY")
    if env:
        return Path(env).expanduser().resolve()
    data = default_data_root()
    if data is not None and (data.parent / "parity").is_dir():
        return data.parent / "parity"
    return None
