"""Reading one member of a ZIP archive, Zstandard-compressed members included.

Inspect writes ``.eval`` archives with Zstandard (ZIP compression method 93).  Python 3.11's
``zipfile`` lists such members but refuses to decompress them, so their compressed bytes are read
from the archive as stored and handed to the ``zstandard`` package; the CRC-32 recorded in the
archive is checked on the result, as ``zipfile`` checks it for the methods it knows.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

ZIP_ZSTANDARD = 93  # APPNOTE 4.4.5; zipfile.ZIP_ZSTANDARD from Python 3.14
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # the local file header before each member's data (zipfile.structFileHeader)
_LOCAL_SIGNATURE = b"PK\x03\x04"
_MAX_MEMBER_BYTES = 512 * 1024 * 1024  # a sample far larger than any log's is a corrupt or hostile archive


class MemberError(ValueError):
    """A member that cannot be read: unknown compression, a broken header, a bad checksum."""


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


def _unzstd(data: bytes, expected_size: int) -> bytes:
    import zstandard  # only .eval logs need it

    if expected_size > _MAX_MEMBER_BYTES:
        raise MemberError(f"a member of {expected_size} bytes is larger than any log sample ({_MAX_MEMBER_BYTES} at most)")
    # Inspect may write a member as several Zstandard frames (it caps each frame's input): read across them.
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    try:
        return reader.read(expected_size + 1)
    except zstandard.ZstdError as exc:
        raise MemberError(f"not valid Zstandard data: {exc}") from None


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The uncompressed bytes of one member; raises MemberError (zipfile's own errors for the methods it reads)."""
    if info.compress_type != ZIP_ZSTANDARD:
        try:
            return archive.read(info)
        except NotImplementedError as exc:
            raise MemberError(f"{info.filename}: {exc} (ZIP method {info.compress_type})") from None
    with archive._lock:  # zipfile's own lock on the shared file handle
        data = _raw_bytes(archive, info)
    content = _unzstd(data, info.file_size)
    if len(content) != info.file_size:
        raise MemberError(f"{info.filename}: {len(content)} bytes after decompression, the archive says {info.file_size}")
    if zlib.crc32(content) != info.CRC:
        raise MemberError(f"{info.filename}: CRC-32 mismatch (a corrupt archive)")
    return content
