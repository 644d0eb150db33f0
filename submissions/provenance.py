"""What a task's gold *is* when it is scored: real split, bundled sample or unverified data (migration 004).

A fingerprint hashes spec + gold, so rows under one fingerprint were scored on the same items by the
same scorer; it does not say what those items are.  :func:`of` says it, from the spec's data lock
(``specs/<task>.lock``, in ``spec.fetch``):

* ``real``: every file the lock lists for the split is under the data root with the lock's size and
  sha256; ``data_digest`` then identifies the split's data (:func:`lock_digest`);
* ``sample``: the data root is the bundled sample data (``samples/data``), a handful of items;
* ``unverified``: any other data root (files that differ from the lock);
* ``unlocked``: the spec has no data lock for the split (no ``fetch`` blocks: a new task keeps its data
  where its maintainer does), so there is nothing to verify the files against and nothing to warn about.

A reported (paper) row declares the data it was reported on: :func:`lock_digest` of its split, which
the lock gives without the data, so a board over the real split shows it and a sample board does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# SHA-256 without OpenSSL for small inputs (issue #31)
from procbench.runners.runtime import digests
from procbench.runners.runtime import data_kind

if TYPE_CHECKING:  # intake imports this module; its spec comes from the plan unless a new fingerprint needs the whole one
    from procbench.dsl.model import TaskSpec

REAL, SAMPLE, UNVERIFIED, UNLOCKED, UNKNOWN = "real", "sample", "unverified", "unlocked", "unknown"
KINDS = (REAL, SAMPLE, UNVERIFIED, UNLOCKED, UNKNOWN)


@dataclass(frozen=True)
class DataProvenance:
    """What one task and split was scored on, and by which scorer."""

    kind: str  # one of KINDS
    gold_items: int | None
    data_digest: str  # lock_digest(spec, split) when real, else ''
    scorer_digest: str  # the runner's spec_digest: canonical spec + component versions
    data_root: str = ""  # the data root it was read from (migration 006: a refusal names it)


def lock_digest(spec: TaskSpec, split: str) -> str:
    """sha256 over the sorted ``"<path> <sha256>"`` lines of the lock's files for ``split`` ('' without a lock)."""
    lines = sorted(f"{f.path} {f.sha256}" for f in spec.fetch if not f.splits or split in f.splits)
    return digests.sha256("\n".join(lines).encode()).hexdigest() if lines else ""


def _matches_lock(spec: TaskSpec, split: str, data_root: Path) -> bool:
    return data_kind.matches(
        ((f.path, f.size, f.sha256) for f in spec.fetch if not f.splits or split in f.splits),
        data_root,
    )


def of(
    spec: TaskSpec, split: str, data_root: Path, *, gold_items: int | None, scorer_digest: str
) -> DataProvenance:
    """The provenance of ``split`` read from ``data_root`` (hashes the lock's files once per process)."""
    root = str(data_root)
    if data_kind.is_sample_root(data_root):
        return DataProvenance(SAMPLE, gold_items, "", scorer_digest, root)
    if not any(
        not f.splits or split in f.splits for f in spec.fetch
    ):  # no lock for this split: nothing differs from it
        return DataProvenance(UNLOCKED, gold_items, "", scorer_digest, root)
    if _matches_lock(spec, split, data_root):
        return DataProvenance(REAL, gold_items, lock_digest(spec, split), scorer_digest, root)
    return DataProvenance(UNVERIFIED, gold_items, "", scorer_digest, root)
