"""Reading one member of a ZIP archive, Zstandard-compressed members included, within size limits.

Inspect writes ``.eval`` archives with Zstandard (ZIP compression method 93).  Python 3.11's
``zipfile`` lists such members but refuses to decompress them, so their compressed bytes are read
from the archive as stored and handed to the ``zstandard`` package; the CRC-32 recorded in the
archive is checked on the result, as ``zipfile`` checks it for the methods it knows.

Every member is decompressed in chunks against two limits (docs/submissions.md, "Limits"): one
member's size and the archive's total.  A few kilobytes of Zstandard or deflate can stand for
gigabytes, so the sizes the archive declares are checked first and the bytes actually produced are
counted as they come: nothing is decompressed past a limit.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

ZIP_ZSTANDARD = 93  # APPNOTE 4.4.5; zipfile.ZIP_ZSTANDARD from Python 3.14
_LOCAL_HEADER = struct.Struct(
    "<4s2B4HL2L2H"
)  # the local file header before each member's data (zipfile.structFileHeader)
_LOCAL_SIGNATURE = b"PK\x03\x04"
_CHUNK = 1 << 20
MB = 1024 * 1024
MEMBER_ENV, TOTAL_ENV = "PROCBENCH_IMPORT_MAX_MEMBER_MB", "PROCBENCH_IMPORT_MAX_TOTAL_MB"
DEFAULT_MEMBER_MB, DEFAULT_TOTAL_MB = (
    64,
    512,
)  # one Inspect sample is kilobytes to a few MB; a whole log rarely 100s of MB


def _limit_mb(env: str, default: int) -> int:
    raw = os.environ.get(env, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise MemberError(f"{env} must be a whole number of megabytes, got {raw!r}") from None
    if value <= 0:
        raise MemberError(f"{env} must be positive, got {raw!r}")
    return value * MB


@dataclass
class Budget:
    """How many decompressed bytes one member and the whole archive may produce; counts what was produced."""

    member_bytes: int = DEFAULT_MEMBER_MB * MB
    total_bytes: int = DEFAULT_TOTAL_MB * MB
    used: int = field(default=0)

    @classmethod
    def from_env(cls) -> Budget:
        """The defaults, or ``PROCBENCH_IMPORT_MAX_MEMBER_MB`` / ``PROCBENCH_IMPORT_MAX_TOTAL_MB``."""
        return cls(_limit_mb(MEMBER_ENV, DEFAULT_MEMBER_MB), _limit_mb(TOTAL_ENV, DEFAULT_TOTAL_MB))

    def refusal(self, name: str, member_size: int) -> str | None:
        """Why ``member_size`` more bytes of member ``name`` are too many, or None."""
        if member_size > self.member_bytes:
            return f"{name}: decompresses to more than {self.member_bytes // MB} MB (the limit for one member, {MEMBER_ENV}); refusing the archive"
        if self.used + member_size > self.total_bytes:
            return f"the archive decompresses to more than {self.total_bytes // MB} MB (the limit for a whole log, {TOTAL_ENV}); refusing it"
        return None


class ArchiveTooLarge(ValueError):
    """A member or the archive decompresses past its limit: the whole archive is refused, not one sample."""


class MemberError(ValueError):
    """A member that cannot be read: unknown compression, a broken header, a bad checksum."""


class _Readable(Protocol):
    """A binary stream read in chunks: ``zipfile``'s member streams and ``zstandard``'s readers."""

    def read(self, size: int, /) -> bytes: ...


def _handle_lock(archive: zipfile.ZipFile) -> AbstractContextManager[object]:
    """``zipfile``'s own lock on the archive's shared file handle (private, so typeshed leaves it out)."""
    lock: AbstractContextManager[object] = getattr(archive, "_lock")
    return lock


def _raw_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's compressed bytes, located through its local header (whose extra field may differ from the central one)."""
    handle = archive.fp
    if handle is None:
        raise MemberError("the archive is closed")
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
        raise MemberError(f"{info.filename}: no local file header at offset {info.header_offset}")
    fields = _LOCAL_HEADER.unpack(header)
    name_length, extra_length = fields[-2], fields[-1]
    handle.seek(name_length + extra_length, io.SEEK_CUR)
    data = handle.read(info.compress_size)
    if len(data) != info.compress_size:
        raise MemberError(f"{info.filename}: the archive ends inside this member (truncated file?)")
    return data


def _bounded_read(stream: _Readable, name: str, budget: Budget) -> bytes:
    """Read ``stream`` in chunks, refusing as soon as the member or the archive's total passes its limit."""
    chunks: list[bytes] = []
    size = 0
    while chunk := stream.read(_CHUNK):
        size += len(chunk)
        reason = budget.refusal(name, size)
        if reason:
            raise ArchiveTooLarge(reason)
        chunks.append(chunk)
    budget.used += size
    return b"".join(chunks)


def _unzstd(data: bytes, name: str, budget: Budget) -> bytes:
    import zstandard  # only .eval logs need it

    # Inspect may write a member as several Zstandard frames (it caps each frame's input): read across them.
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    try:
        return _bounded_read(reader, name, budget)
    except zstandard.ZstdError as exc:
        raise MemberError(f"not valid Zstandard data: {exc}") from None


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> bytes:
    """The uncompressed bytes of one member; raises ArchiveTooLarge past ``budget``, MemberError (zipfile's own errors
    for the methods it reads) when the member is broken."""
    declared = budget.refusal(
        info.filename, info.file_size
    )  # the cheap refusal; a member may still lie about its size
    if declared:
        raise ArchiveTooLarge(declared)
    if info.compress_type != ZIP_ZSTANDARD:
        try:
            with archive.open(
                info
            ) as stream:  # zipfile stops at the declared size and checks its CRC at the end
                return _bounded_read(stream, info.filename, budget)
        except NotImplementedError as exc:
            raise MemberError(f"{info.filename}: {exc} (ZIP method {info.compress_type})") from None
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise MemberError(f"{info.filename}: {exc}") from None
    with _handle_lock(archive):
        data = _raw_bytes(archive, info)
    content = _unzstd(data, info.filename, budget)
    if len(content) != info.file_size:
        raise MemberError(
            f"{info.filename}: {len(content)} bytes after decompression, the archive says {info.file_size}"
        )
    if zlib.crc32(content) != info.CRC:
        raise MemberError(f"{info.filename}: CRC-32 mismatch (a corrupt archive)")
    return content
