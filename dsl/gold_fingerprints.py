"""Gold fingerprints remembered by the content of the split's files (issue #31).

A split's fingerprint is sha256 over the spec's digest and the canonical JSON of its gold
(``TaskRunner.gold``): writing that JSON costs about 5 ms of a 1x ``procbench score propara`` (0.08 s), in
every process, for a value that is the same as long as three things are: the spec (its digest), the
code that reads it (the spec cache's code signature: the spec language's and the components'
sources, and the installed distributions), and the bytes of the files the gold is read from.

So the value is kept in the cache folder under a key made of exactly those three, the files by their
sha256 (read once per process, procbench.runners.runtime.data_kind.file_sha256; the data lock's check
has usually read them already), never by size or time alone: a file edited back to its old size and
time gets a new key.  A reader component's files are its lock's (:func:`content_key`).  A file that
cannot be read, component files an operator allowed, or a cache that is off: nothing is remembered.
An entry that is not a fingerprint (a damaged or planted file) is ignored and written again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from procbench.dsl.cache import cache_dir, code_signature
from procbench.runners.runtime import digests, registry
from procbench.runners.runtime.data_kind import file_sha256, lock_entries

if TYPE_CHECKING:
    from procbench.runners.runtime.runner import FingerprintMemo, TaskRunner

FORMAT = "procbench-gold-fingerprint-1"
_HEX = frozenset("0123456789abcdef")


def remembered(
    runner: TaskRunner,
    data_root: Path,
    split: str,
    compute: Callable[[], str],
    *,
    spec_file: Path | None = None,
) -> str:
    """The gold fingerprint of ``split``: the one remembered for these files, else ``compute()`` (then remembered)."""
    folder = cache_dir()
    key = None if folder is None else content_key(runner, data_root, split, spec_file)
    if folder is None or key is None:
        return compute()
    entry = folder / "gold" / key[:2] / f"{key}.txt"
    try:
        text = entry.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        text = ""
    if len(text) == 64 and _HEX.issuperset(text):
        return text
    value = compute()
    _write(entry, value)
    return value


def for_spec(spec_file: Path) -> FingerprintMemo:
    """:func:`remembered` for the runner of the spec at ``spec_file`` (a reader component's files are its lock's)."""
    return functools.partial(remembered, spec_file=spec_file)


def content_key(
    runner: TaskRunner, data_root: Path, split: str, spec_file: Path | None = None
) -> str | None:
    """sha256 of the spec's digest, the code signature, the split and the files the gold is read from.

    Those files are the sources the spec declares for the split, by content.  A reader component's
    are not declared: they are taken to be its lock's (``procbench data lock`` lists every file the
    spec's fetch blocks bring), the split's by content and the other splits' by their status
    (size, times and inode: editing a file changes its ctime, which ``os.utime`` cannot set back),
    an absent file as absent.  None where the files or the code are not known: a reader component
    without a lock, a declared source absent or unreadable, component files an operator allowed
    (``--components``: they are not in the code signature).
    """
    if registry.operator_folders():
        return None
    digest = digests.sha256(
        f"{FORMAT}\0{runner.spec_digest}\0{code_signature()}\0{split}\n".encode()
    )
    sources = getattr(runner.read_gold, "sources", None)
    if sources:
        for source in sources:
            if source.splits and split not in source.splits:
                continue
            relative = source.path.format(split=split)
            try:
                sha256 = file_sha256(Path(data_root) / relative)
            except (OSError, ValueError):
                return None
            digest.update(f"{relative}\0{sha256}\n".encode())
        return digest.hexdigest()
    entries = lock_entries(spec_file) if spec_file is not None else []
    if not entries:
        return None
    for relative, splits, _, _ in entries:
        digest.update(
            f"{relative}\0{_state(Path(data_root, *relative.split('/')), not splits or split in splits)}\n".encode()
        )
    return digest.hexdigest()


def _state(path: Path, by_content: bool) -> str:
    """A file's sha256 (``by_content``) or its status, or ``absent``."""
    try:
        stat = path.stat()
        if by_content:
            return file_sha256(path, stat)
        return f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"
    except (OSError, ValueError):
        return "absent"


def _write(entry: Path, value: str) -> None:
    """Write the entry whole or not at all (a folder that cannot be written only costs the next run the JSON)."""
    partial = entry.with_name(f".{entry.name}.{os.getpid()}")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(value, encoding="ascii")
        os.replace(partial, entry)
    except OSError:
        try:
            partial.unlink(missing_ok=True)
        except OSError:
            pass
