"""Bootstraps kept on disk beside the store, so a restarted site does not resample again (issue #19, part 5).

A bootstrap depends only on a submission's stored items (fixed: the submission's id hashes its file
and the task's fingerprint), the slice, the metrics, the number of resamples and the seed; its key
hashes all of these and the board's fingerprint.  Files live in ``<db>.cache/bootstraps/`` as
``.npz`` (numpy arrays, no pickle), written atomically; the folder is safe to delete (everything is
recomputed, with the same numbers: the seed is fixed), and a store on a read-only mount simply
computes without keeping.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from procbench.runners.runtime.stats import Bootstrap

FORMAT = 1  # bump when the file layout or what a bootstrap means changes


def folder(db: str | Path) -> Path:
    path = Path(db)
    return path.with_name(path.name + ".cache") / "bootstraps"


def key(parts: tuple[object, ...], n_resamples: int, seed: int) -> str:
    text = json.dumps([FORMAT, list(parts), n_resamples, seed], default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load(path: Path) -> Bootstrap | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            return Bootstrap(
                item_ids=tuple(str(i) for i in data["item_ids"]),
                metrics=tuple(str(m) for m in data["metrics"]),
                estimate=data["estimate"],
                replicates=data["replicates"],
                seed=int(data["seed"]),
            )
    except (OSError, KeyError, ValueError):  # absent, partial or foreign: recompute
        return None


def save(path: Path, boot: Bootstrap) -> None:
    with contextlib.suppress(OSError):  # only a cache: never fail a page over it
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(
                    out,
                    item_ids=np.array(boot.item_ids, dtype=str),
                    metrics=np.array(boot.metrics, dtype=str),
                    estimate=boot.estimate,
                    replicates=boot.replicates,
                    seed=np.array(boot.seed),
                )
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


def load_or_compute(
    db: str | Path,
    parts: tuple[object, ...],
    n_resamples: int,
    seed: int,
    compute: Callable[[], Bootstrap],
) -> Bootstrap:
    """The bootstrap stored under ``parts`` (and the resampling settings), else ``compute()`` it and keep it."""
    path = folder(db) / f"{key(parts, n_resamples, seed)}.npz"
    found = load(path)
    if found is not None and found.replicates.shape[0] == n_resamples and found.seed == seed:
        return found
    boot = compute()
    save(path, boot)
    return boot
