"""Where things live: defined once in :mod:`procbench.runners.runtime.paths` (the bottom layer), re-exported here."""

from procbench.runners.runtime.paths import (
    DEFAULT_DB,
    INSTALLED,
    PROJECT_ROOT,
    RESOURCE_ROOT,
    SAMPLE_DATA_ROOT,
    SAMPLE_SUBMISSIONS_DIR,
    SAMPLES_DIR,
    SCHEMA_DIR,
    SHARED_DIR,
    SPECS_DIR,
    default_cache_dir,
    default_data_root,
    default_fetch_root,
    parity_root,
    resolve_data_root,
    resource,
)

__all__ = [
    "DEFAULT_DB",
    "INSTALLED",
    "PROJECT_ROOT",
    "RESOURCE_ROOT",
    "SAMPLE_DATA_ROOT",
    "SAMPLE_SUBMISSIONS_DIR",
    "SAMPLES_DIR",
    "SCHEMA_DIR",
    "SHARED_DIR",
    "SPECS_DIR",
    "default_cache_dir",
    "default_data_root",
    "default_fetch_root",
    "parity_root",
    "resolve_data_root",
    "resource",
]
