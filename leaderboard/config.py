"""Where the site reads from, and the fixed settings of its statistics."""

from __future__ import annotations

import os
from pathlib import Path

from procbench.runners.runtime import stats
from procbench.runners.runtime.paths import DEFAULT_DB

N_RESAMPLES = stats.DEFAULT_RESAMPLES  # resamples per bootstrap (intervals, paired tests)
SEED = stats.DEFAULT_SEED  # one seed for every bootstrap: same items -> same resamples -> paired
CONFIDENCE = stats.DEFAULT_CONFIDENCE
ALPHA = stats.DEFAULT_ALPHA  # tie with the leader when the paired test gives p >= ALPHA
MIN_ITEMS = (
    5  # fewer items: no interval or test (a bootstrap of 1-4 items says nothing about uncertainty)
)
DEFAULT_INTERVAL_ROWS = (
    10  # the board bootstraps its top rows (cached per submission); more on request
)
MAX_INTERVAL_ROWS = 200


def database() -> Path:
    """The store the site reads: ``PROCBENCH_DB``, else ``var/procbench.duckdb``."""
    return Path(os.environ.get("PROCBENCH_DB") or DEFAULT_DB)
