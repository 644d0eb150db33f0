"""Shared fixtures: the real data root and parity folder (skipped with a reason when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from procbench.paths import default_data_root, parity_root

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def data_root() -> Path:
    root = default_data_root()
    if root is None:
        pytest.skip("real benchmark data absent: set PROCBENCH_DATA or place ../shared/data beside the checkout")
    return root


@pytest.fixture(scope="session")
def parity_dir() -> Path:
    root = parity_root()
    if root is None:
        pytest.skip("parity fixtures absent: set PROCBENCH_PARITY or place ../shared/parity beside the checkout")
    return root
