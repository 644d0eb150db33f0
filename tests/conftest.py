"""Shared fixtures: the real data root and parity folder (skipped with a reason when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from procbench.paths import default_data_root, parity_root
from tests.legacy_names import install_legacy_names

# tests/parity/ is frozen (its tests must pass unchanged) and was written when the packages were imported
# by their top-level names (`from procbench.runners.runtime.registry import get`); the project imports only `procbench.*`.
# For those tests alone, the old names are aliases of the same module objects (one registry, one store).
install_legacy_names()

# CI draws Hypothesis's default number of examples per property (100) on every run; at 200 the suite ran past
# 20 minutes on CI's 2 cores (1202 s).  Local runs draw 50.
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = default_data_root()
    if root is None:
        pytest.skip(
            "real benchmark data absent: set PROCBENCH_DATA or place ../shared/data beside the checkout"
        )
    return root


@pytest.fixture(scope="session")
def parity_dir() -> Path:
    root = parity_root()
    if root is None:
        pytest.skip(
            "parity fixtures absent: set PROCBENCH_PARITY or place ../shared/parity beside the checkout"
        )
    return root
