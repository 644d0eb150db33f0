"""Fingerprints are stable across processes (no hash-order dependence) and move when the spec does."""

from __future__ import annotations

import os
import subprocess
import sys

from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT

SCRIPT = "from procbench.api import load_task; from pathlib import Path; import sys; print(load_task(sys.argv[1])[1].gold(Path(sys.argv[2]), sys.argv[3])[1])"


def _fingerprint(task: str, split: str, seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", SCRIPT, task, str(SAMPLE_DATA_ROOT), split], env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_fingerprint_is_the_same_in_every_process() -> None:
    # propara-naacl18 gold holds frozensets: their str() order follows the per-process hash seed
    assert _fingerprint("propara-naacl18", "test", "1") == _fingerprint("propara-naacl18", "test", "2")


def test_variants_have_different_fingerprints() -> None:
    assert _fingerprint("openpi", "test", "0") != _fingerprint("openpi-head", "test", "0")
