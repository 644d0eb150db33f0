"""Staging an uploaded prediction file: resource limits, safe names, gzip, and the content hash.

One streaming pass in fixed-size chunks (memory does not grow with the file): the size cap, the
longest-line cap (line-iterating readers hold one line in memory), the expanded size of a gzip
upload, and sha256 of the (decompressed) bytes, written to a private copy that is all intake
reads from then on (the reader, the raw-file store).  Encoding, BOM and line endings are deliberately
left to the task's own reader, which reproduces what the official scorer accepts.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gzip
import os
import shutil
import stat
import tempfile
import time
import unicodedata
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

# SHA-256 without OpenSSL for small inputs (issue #31)
from procbench.runners.runtime import digests
from procbench.runners.runtime._types import Problem

MiB = 1 << 20
CHUNK = MiB
GZIP_MAGIC = b"\x1f\x8b"
MAX_FILENAME_CHARS = 200


@dataclass(frozen=True)
class IntakeLimits:
    """Resource limits of one upload (defaults suit every shipped benchmark by a wide margin)."""

    max_bytes: int = 256 * MiB  # the file, and a gzip upload once expanded
    max_line_bytes: int = 64 * MiB
    max_score_seconds: float = (
        600.0  # reading and scoring the staged file (procbench.submissions.intake); 0 = no limit
    )

    @classmethod
    def from_env(cls) -> IntakeLimits:
        """``PROCBENCH_MAX_UPLOAD_MB``, ``PROCBENCH_MAX_LINE_MB`` and ``PROCBENCH_MAX_SCORE_SECONDS`` override the defaults."""
        default = cls()
        upload = os.environ.get("PROCBENCH_MAX_UPLOAD_MB")
        line = os.environ.get("PROCBENCH_MAX_LINE_MB")
        seconds = os.environ.get("PROCBENCH_MAX_SCORE_SECONDS")
        return cls(
            max_bytes=int(float(upload) * MiB) if upload else default.max_bytes,
            max_line_bytes=int(float(line) * MiB) if line else default.max_line_bytes,
            max_score_seconds=float(seconds) if seconds else default.max_score_seconds,
        )


class FileRefused(Exception):
    """The upload breaks a limit or cannot be read; ``problem`` says where and why."""

    def __init__(self, problem: Problem, sha256: str = ""):
        self.problem = problem
        self.sha256 = sha256
        super().__init__(problem.message)


class BadFileName(ValueError):
    """An upload's name that is not a plain file name."""


class StagingFailed(Exception):
    """issue #29: the private copy could not be written (a full disk, a quota, a read-only folder): the board's
    fault, not the file's.  ``reason`` is the system's word for it (never a path: the paths are temporary)."""

    def __init__(self, error: OSError):
        self.errno = error.errno
        self.reason = error.strerror or type(error).__name__
        super().__init__(self.reason)


STAGING_PREFIX = (
    "procbench-intake-"  # the folder of one upload being staged, under the store's scratch folder
)
OWNER_FILE = (
    ".owner"  # held locked (flock) by the intake that staged the folder, for as long as it lives
)
ORPHAN_AGE_S = (
    600.0  # a staging folder without an owner file this old was left by a crash before it got one
)


class _Sink:
    """The private copy: a write that fails (ENOSPC …) is StagingFailed, which readers' ``except OSError`` cannot swallow."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle

    def write(self, chunk: bytes) -> int:
        try:
            return self.handle.write(chunk)
        except OSError as exc:
            raise StagingFailed(exc) from None


@contextlib.contextmanager
def _staging_folder(scratch: Path | None) -> Iterator[str]:
    """A fresh 0700 folder (under ``scratch``) whose owner file stays locked while it is in use.

    A process killed while staging leaves the folder; the kernel drops its lock, which is how
    ``leftovers`` tells it from one in use (``procbench admin check --fix`` removes it)."""
    try:
        if scratch is not None:
            scratch.mkdir(parents=True, exist_ok=True)
        folder = tempfile.TemporaryDirectory(prefix=STAGING_PREFIX, dir=scratch)
    except OSError as exc:
        raise StagingFailed(exc) from None
    with folder as tmp:
        # locked under another name, then renamed: `leftovers` never sees an owner file that is not locked yet
        fresh = os.path.join(tmp, OWNER_FILE + ".new")
        try:
            owner = open(fresh, "wb")  # noqa: SIM115 - held open (and locked) for the folder's life
        except OSError as exc:
            raise StagingFailed(exc) from None
        with owner:
            try:
                fcntl.flock(owner.fileno(), fcntl.LOCK_EX)
                os.rename(fresh, os.path.join(tmp, OWNER_FILE))
            except OSError as exc:
                raise StagingFailed(exc) from None
            yield tmp


@dataclass(frozen=True)
class Leftover:
    """A staging folder a killed intake left behind: its name under the scratch folder, and its size."""

    name: str
    size_bytes: int


def _tree_size(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _abandoned(folder: Path, now: float) -> bool:
    """Whether no live intake owns ``folder``: its owner file can be locked, or it never got one and is old."""
    try:
        fd = os.open(folder / OWNER_FILE, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        with contextlib.suppress(OSError):
            return now - folder.lstat().st_mtime > ORPHAN_AGE_S
        return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # an intake is staging there now
    finally:
        os.close(fd)
    return True


def leftovers(scratch: Path) -> list[Leftover]:
    """Staging folders under ``scratch`` that no running intake owns (left by a killed process)."""
    if not scratch.is_dir() or scratch.is_symlink():
        return []
    now = time.time()
    found = []
    for entry in sorted(scratch.iterdir()):
        if (
            entry.name.startswith(STAGING_PREFIX)
            and entry.is_dir()
            and not entry.is_symlink()
            and _abandoned(entry, now)
        ):
            found.append(Leftover(entry.name, _tree_size(entry)))
    return found


def remove_leftovers(scratch: Path) -> list[Leftover]:
    """Delete the staging folders ``leftovers`` lists; returns them."""
    removed = []
    for leftover in leftovers(scratch):
        shutil.rmtree(scratch / leftover.name, ignore_errors=True)
        if not (scratch / leftover.name).exists():
            removed.append(leftover)
    return removed


def _mib(n: int) -> str:
    return f"{n / MiB:.0f} MiB" if n >= MiB else f"{n} bytes"


def safe_filename(name: str) -> str:
    """The upload's name if it is a plain file name, else BadFileName.

    Names are only ever shown and used as the suffix of a scratch file, never as a path into the
    store, but a name such as ``../../etc/passwd`` is refused outright so that nobody downstream
    (site, export, a future engine) can be tricked by one.
    """
    if not name or not name.strip():
        raise BadFileName("the file name is empty")
    if len(name) > MAX_FILENAME_CHARS:
        raise BadFileName(f"the file name is longer than {MAX_FILENAME_CHARS} characters")
    if name in (".", "..") or "/" in name or "\\" in name or name.startswith(".."):
        raise BadFileName(f"the file name {name!r} must be a plain name, without folders or '..'")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise BadFileName(f"the file name {name!r} contains control or formatting characters")
    return name


@dataclass(frozen=True)
class StagedFile:
    """A file ready for the task's reader: ``path`` is named like the upload (without ``.gz``)."""

    path: Path
    filename: str
    sha256: str
    size_bytes: int
    was_gzip: bool


class _Scanner:
    """sha256, size and longest-line checks over a stream of chunks."""

    def __init__(self, limits: IntakeLimits, what: str):
        self.limits = limits
        self.what = what
        self.digest = digests.sha256()
        self.size = 0
        self.newlines = 0
        self.run = 0  # bytes since the last newline

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limits.max_bytes:
            raise FileRefused(
                Problem(
                    None,
                    f"{self.what} is larger than {_mib(self.limits.max_bytes)} (the upload limit)",
                )
            )
        first = chunk.find(b"\n")
        if first < 0:
            self.run += len(chunk)
        else:
            self._check_run(self.run + first)
            # Lines wholly inside a chunk are shorter than the chunk; only the last partial one carries over.
            if len(chunk) > self.limits.max_line_bytes:
                self._check_inner(chunk, first)
            self.newlines += chunk.count(b"\n")
            self.run = len(chunk) - chunk.rfind(b"\n") - 1
        self._check_run(self.run)
        self.digest.update(chunk)

    def _check_inner(self, chunk: bytes, first: int) -> None:
        start = first + 1
        line = self.newlines + 1
        while (end := chunk.find(b"\n", start)) >= 0:
            line += 1
            if end - start > self.limits.max_line_bytes:
                self._refuse_line(line)
            start = end + 1

    def _check_run(self, run: int) -> None:
        if run > self.limits.max_line_bytes:
            self._refuse_line(self.newlines + 1)

    def _refuse_line(self, line: int) -> None:
        raise FileRefused(
            Problem(
                line,
                f"line is longer than {_mib(self.limits.max_line_bytes)} (the line limit); is this the right file?",
            )
        )


def scan(
    handle: BinaryIO,
    limits: IntakeLimits,
    *,
    sink: BinaryIO | None = None,
    what: str = "the file",
    chunk_size: int = CHUNK,
) -> tuple[str, int]:
    """Stream ``handle`` through the limits (copying to ``sink``); returns (sha256, size)."""
    scanner = _Scanner(limits, what)
    while chunk := handle.read(chunk_size):
        scanner.feed(chunk)
        if sink is not None:
            sink.write(chunk)
    return scanner.digest.hexdigest(), scanner.size


def _open_private(source: Path) -> BinaryIO:
    """The upload opened once, read-only, without following a link (O_NOFOLLOW), and only if it is a regular file."""
    flags = (
        os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    )  # O_NONBLOCK: a FIFO swapped in must not block the open
    try:
        fd = os.open(source, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the path became a link after the check in stage()
            raise FileRefused(
                Problem(
                    None,
                    "the file is a symbolic link; symbolic links are not followed: upload the file itself",
                )
            ) from None
        raise FileRefused(Problem(None, f"the file cannot be read ({exc.strerror})")) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileRefused(Problem(None, "not a regular file"))
    return os.fdopen(fd, "rb")


def _copy_capped(handle: BinaryIO, out: BinaryIO, limit: int) -> None:
    """Copy the (compressed) upload as it is, refusing it past ``limit`` bytes (it may grow while read)."""
    copied = 0
    while chunk := handle.read(CHUNK):
        copied += len(chunk)
        if copied > limit:
            raise FileRefused(
                Problem(None, f"the file is larger than {_mib(limit)} (the upload limit)")
            )
        out.write(chunk)


@contextlib.contextmanager
def stage(
    source: Path, *, filename: str | None, limits: IntakeLimits, scratch: Path | None = None
) -> Iterator[StagedFile]:
    """Check, copy and hash ``source``; yields a StagedFile whose private copy vanishes on exit.

    issue #17: ``source`` is read exactly once, into a private copy in a fresh 0700 folder, and the
    hash, the task's reader and the raw-file store all use that copy only, so a file changed (or
    replaced) during intake cannot be stored with the scores of one content and the hash of another.
    Raises BadFileName, FileRefused (with the line when a line is too long), or StagingFailed when the
    copy cannot be written (issue #29: a full disk is the board's refusal, with a receipt, not a traceback).
    """
    name = safe_filename(filename if filename is not None else source.name)
    # issue #17: a symbolic link is refused, never followed (it could point at gold, a key, any file the
    # intake process may read); checked on the path itself (lstat), and again by O_NOFOLLOW when opening
    if source.is_symlink():
        raise FileRefused(
            Problem(
                None,
                "the file is a symbolic link; symbolic links are not followed: upload the file itself",
            )
        )
    if not source.is_file():
        raise FileRefused(Problem(None, "not a regular file"))
    with _open_private(source) as handle, _staging_folder(scratch) as tmp:
        size = os.fstat(handle.fileno()).st_size
        if size > limits.max_bytes:
            raise FileRefused(
                Problem(
                    None,
                    f"the file is {_mib(size)}, larger than {_mib(limits.max_bytes)} (the upload limit)",
                )
            )
        folder = Path(tmp) / "upload"  # holds the staged file only, under the upload's name
        try:
            folder.mkdir()
        except OSError as exc:
            raise StagingFailed(exc) from None
        if handle.read(2) == GZIP_MAGIC:
            handle.seek(0)
            packed = Path(tmp) / "packed.gz"
            with _private(packed) as out:
                _copy_capped(handle, out, limits.max_bytes)
            inner = name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name
            target = folder / inner
            try:
                with gzip.open(packed, "rb") as expanding, _private(target) as out:
                    digest, expanded = scan(
                        cast(BinaryIO, expanding), limits, sink=out, what="the gzip file, expanded,"
                    )  # GzipFile reads bytes
            except (OSError, EOFError, zlib.error) as exc:
                raise FileRefused(Problem(None, f"not a valid gzip file ({exc})")) from None
            packed.unlink()
            yield StagedFile(target, inner, digest, expanded, True)
            return
        handle.seek(0)
        target = folder / name  # the reader sees the upload's name (some pick a format by suffix)
        with _private(target) as out:
            digest, size = scan(handle, limits, sink=out)
        yield StagedFile(target, name, digest, size, False)


@contextlib.contextmanager
def _private(path: Path) -> Iterator[BinaryIO]:
    """``path`` opened for writing the private copy; every write or flush that fails is StagingFailed."""
    try:
        handle = path.open("wb")
    except OSError as exc:
        raise StagingFailed(exc) from None
    try:
        yield cast(BinaryIO, _Sink(handle))
    finally:
        try:
            handle.close()  # flushes: a full disk can surface here
        except OSError as exc:
            raise StagingFailed(exc) from None
