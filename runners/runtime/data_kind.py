"""What kind of data a data root holds for a task's split: the real split, the bundled samples, or other data.

One answer for every command (issue #29: no silent sample data): ``procbench score`` and ``submit`` say
which data root they read and its kind, the store records it with each fingerprint
(``procbench.submissions.provenance``), and re-scoring compares it.  The answer comes from the data lock beside
the spec (``<spec stem>.lock``, written by ``procbench data lock``):

* ``real``: every file the lock lists for the split is under the data root with the lock's size and sha256;
* ``sample``: the data root is the bundled sample data (a handful of items per split);
* ``unverified``: any other data root (files that differ from the lock);
* ``unlocked``: the spec has no lock for the split, so there is nothing to verify its files against.

It reads the lock as JSON, without the spec language, so the lean ``score`` path can ask it.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path

from procbench.runners.runtime import digests
from procbench.runners.runtime._types import MoreProblems, Problem
from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT

REAL, SAMPLE, UNVERIFIED, UNLOCKED = "real", "sample", "unverified", "unlocked"

DATA_ENV = "PROCBENCH_DATA"


def file_sha256(path: Path, stat: os.stat_result | None = None) -> str:
    """A file's sha256, read once per process while the file stays as it is (its ``stat``, when given, is current).

    Raises OSError when the file cannot be read.  The lock's check and the gold fingerprints known by
    content (procbench/dsl/gold_fingerprints.py) share it.
    """
    stat = os.stat(path) if stat is None else stat
    # ctime and inode as well: os.utime can set a file's mtime back, not its ctime
    return _file_sha256(str(path), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


@functools.lru_cache(maxsize=4096)
def _file_sha256(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> str:
    return digests.file_sha256(path)


def matches(files: Iterable[tuple[str, int, str]], data_root: Path) -> bool:
    """Whether every ``(path under the root, size, sha256)`` is present with that size and hash (False for none)."""
    listed = list(files)
    if not listed:
        return False
    for relative, size, sha256 in listed:
        path = Path(data_root, *relative.split("/"))
        try:
            stat = path.stat()
        except OSError:
            return False
        if stat.st_size != size or file_sha256(path, stat) != sha256:
            return False
    return True


def is_sample_root(data_root: Path) -> bool:
    try:
        return Path(data_root).resolve() == SAMPLE_DATA_ROOT.resolve()
    except OSError:
        return False


def lock_files(spec_file: Path, split: str) -> list[tuple[str, int, str]]:
    """The lock's ``(path, size, sha256)`` of ``split``'s files (none when the spec has no readable lock)."""
    return [
        (path, size, sha256)
        for path, splits, size, sha256 in lock_entries(spec_file)
        if not splits or split in splits
    ]


def lock_entries(spec_file: Path) -> list[tuple[str, tuple[str, ...], int, str]]:
    """Every file of the lock: ``(path, its splits, size, sha256)``, no splits for a file of every split
    (none when the spec has no readable lock)."""
    lock = spec_file.with_name(spec_file.stem + ".lock")
    try:
        listed = json.loads(lock.read_text(encoding="utf-8")).get("files", [])
        return [
            (
                str(f["path"]),
                tuple(map(str, f.get("splits") or ())),
                int(f["size"]),
                str(f["sha256"]),
            )
            for f in listed
        ]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return []


def kind_of(spec_file: Path, split: str, data_root: Path) -> str:
    """``real``, ``sample``, ``unverified`` or ``unlocked``: what ``data_root`` holds for ``split`` of the spec at ``spec_file``."""
    if is_sample_root(data_root):
        return SAMPLE
    files = lock_files(spec_file, split)
    if not files:
        return UNLOCKED
    return REAL if matches(files, data_root) else UNVERIFIED


def describe(data_root: Path, kind: str, task: str, split: str) -> str:
    """One line for stderr: the data root a command reads, and what it is."""
    if kind == SAMPLE:
        return (
            f"data root: {data_root} (the bundled sample data: a few items of {task} / {split}, not the real split; "
            f"set {DATA_ENV} or --data-dir to the real data, e.g. after `procbench data fetch {task}`)"
        )
    if kind == REAL:
        return f"data root: {data_root} (the real data of {task} / {split}: its files match the spec's lock)"
    if kind == UNLOCKED:
        return f"data root: {data_root} (the spec has no data lock for {task} / {split} to verify its files against)"
    return f"data root: {data_root} (unverified data for {task} / {split}: its files do not match the spec's lock)"


def sample_mismatch(
    problems: list[Problem], total: int, *, items: int | None, task: str, split: str, source: str
) -> str:
    """The one message for a file whose ids are not sample ids, scored against the bundled samples ('' when none is).

    ``problems`` are a refused file's ``procbench.runners.runtime._types.Problem`` list (the readers say ``unknown id …`` for
    an id the split does not have) and ``total`` every problem found, counted ones included.
    """
    unknown = sum(1 for p in problems if p.message.startswith("unknown id"))
    if not unknown:
        return ""
    listed = [p for p in problems if not isinstance(p, MoreProblems)]
    if unknown == len(
        listed
    ):  # every listed problem is an unknown id: the counted rest are taken to be too
        unknown = max(unknown, total)
    among = f"the {items} items" if items is not None else "the items"
    return (
        f"error: {source or 'the prediction file'} is not a file for the bundled sample data: {unknown} of its ids are not among {among} of "
        f"{task} / {split} in the samples\n"
        f"  hint: the data root is the bundled samples ({SAMPLE_DATA_ROOT}); to score a file for the real split, set {DATA_ENV} (or --data-dir) to "
        f"the real data root, e.g. after `procbench data fetch {task}`"
    )
