"""Reuse a slow baseline's prediction file across builds of the board, never a stale one.

The PARADISE embedding baseline takes about half a minute per task on a CPU, and the board is
rebuilt from scratch on every ``make leaderboard``.  Its predictions are a function of the items it
reads, its own code and the installed model and libraries, so a file is stored under a key made of
exactly those: the gold fingerprint of the (task, split) it predicted (spec and gold items), the
baseline's ``version``, its seed and the versions of the distributions it requires.  Any change to
one of them is a new key, and the baseline runs again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from procbench.runners.baselines import Baseline, BaselineInput, installed_versions


def cache_key(chosen: Baseline, given: BaselineInput, fingerprint: str) -> str:
    """A digest of everything the predictions depend on (see the module docstring)."""
    versions = installed_versions(chosen)
    if versions is None:
        raise RuntimeError(
            f"baseline {chosen.name!r} needs {', '.join(chosen.requires)}; one is not installed"
        )
    facts = {
        "baseline": chosen.name,
        "version": chosen.version,
        "task": given.task,
        "split": given.split,
        "seed": given.seed,
        "gold": fingerprint,
        "requires": versions,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Written:
    """The prediction file a build submits, and whether it was reused rather than predicted now."""

    path: Path
    reused: bool


def write_or_reuse(
    chosen: Baseline, given: BaselineInput, out: Path, *, fingerprint: str, cache_dir: Path
) -> Written:
    """``out`` holding ``chosen``'s predictions for ``given``: a copy of the stored file for the same key, else a new run (then stored)."""
    key = cache_key(chosen, given, fingerprint)
    stored = Path(cache_dir) / f"{chosen.name}.{given.task}.{given.split}.{key}.{chosen.suffix}"
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if stored.is_file():
        shutil.copyfile(stored, out)
        return Written(out, True)
    written = Path(chosen.write(given, out))
    stored.parent.mkdir(parents=True, exist_ok=True)
    partial = stored.with_name(stored.name + f".{os.getpid()}.partial")
    shutil.copyfile(written, partial)
    os.replace(partial, stored)  # a build stopped half-way leaves no truncated file under the key
    return Written(written, False)
