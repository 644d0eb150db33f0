"""Raw prediction files, content-addressed and gzip-compressed in a folder beside the database.

``<db>.raw/ab/abcdef….gz`` holds the bytes whose sha256 is ``abcdef…`` (the decompressed upload).
A blob is written to a temporary name, fsynced and renamed, so it is either absent or complete;
its ``raw_files`` row is inserted in the same transaction as the submission that uses it.  A crash
between the rename and the commit leaves an unreferenced blob, which the next attempt reuses.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

# SHA-256 without OpenSSL for small inputs (issue #31)
from procbench.runners.runtime import digests
from procbench.submissions.sql import duckdb
from procbench.submissions.staging import CHUNK, StagedFile, safe_filename

CODEC = "gzip"
COMPRESS_LEVEL = 6


@dataclass(frozen=True)
class RawBlob:
    sha256: str
    size_bytes: int
    stored_bytes: int
    codec: str
    location: str  # relative to the blob root


def blob_root(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".raw")


def scratch_root(db_path: Path) -> Path:
    """Where intake stages uploads (``<db>.raw/tmp``): on the store's filesystem, so a full disk shows at staging,
    and where ``procbench admin check --fix`` finds the staging folders a killed intake left (issue #29)."""
    return blob_root(db_path) / "tmp"


def location_of(sha256: str) -> str:
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a sha256 hex digest: {sha256!r}")
    return f"{sha256[:2]}/{sha256}.gz"


def blob_path(db_path: Path, location: str) -> Path:
    return blob_root(db_path) / location


def put(db_path: Path, staged: StagedFile) -> RawBlob:
    """Store the staged file's bytes (once per content) and describe the blob."""
    location = location_of(staged.sha256)
    target = blob_path(db_path, location)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
        try:
            with (
                os.fdopen(fd, "wb") as raw_out,
                gzip.GzipFile(
                    filename="", mode="wb", fileobj=raw_out, compresslevel=COMPRESS_LEVEL, mtime=0
                ) as out,
                staged.path.open("rb") as src,
            ):
                while chunk := src.read(CHUNK):
                    out.write(chunk)
            with open(tmp_name, "rb") as done:
                os.fsync(done.fileno())
            os.replace(tmp_name, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise
        _fsync_dir(target.parent)
    return RawBlob(staged.sha256, staged.size_bytes, target.stat().st_size, CODEC, location)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def record(con: duckdb.DuckDBPyConnection, blob: RawBlob, at: datetime) -> None:
    """The blob's ``raw_files`` row (once per content: a row there already is kept); the caller holds the transaction."""
    con.execute(
        "INSERT INTO raw_files (content_sha256, size_bytes, stored_bytes, codec, location, stored_at) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (content_sha256) DO NOTHING",
        [blob.sha256, blob.size_bytes, blob.stored_bytes, blob.codec, blob.location, at],
    )


@contextlib.contextmanager
def materialise(
    compressed: Path | bytes, filename: str, *, expected_sha256: str, scratch: Path | None = None
) -> Iterator[Path]:
    """Decompress a stored blob (a path or its bytes) to a scratch file named ``filename``.

    The content is checked against ``expected_sha256``; the scratch file vanishes on exit.
    """
    name = safe_filename(filename)
    with tempfile.TemporaryDirectory(prefix="procbench-raw-", dir=scratch) as tmp:
        target = Path(tmp) / name
        digest = digests.sha256()
        source = (
            gzip.open(compressed, "rb")
            if isinstance(compressed, Path)
            else gzip.GzipFile(fileobj=io.BytesIO(compressed), mode="rb")
        )
        with source as packed, target.open("wb") as out:
            while chunk := packed.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected_sha256:
            raise ValueError(
                f"stored file {expected_sha256[:12]}… is corrupt (its content hash is {digest.hexdigest()[:12]}…)"
            )
        yield target
