"""SHA-256 that loads OpenSSL only when there is enough to hash (issue #31).

``import hashlib`` loads ``_hashlib`` and with it OpenSSL's libcrypto: about 11 million instructions
and a few hundred page faults, some 4 ms of a 1x ``procbench score propara`` that then hashes well
under a megabyte (the data lock's files, the gold's fingerprint, the spec cache's keys).  CPython's
own SHA-256 (``_sha256``, ``_sha2`` from 3.12) loads in microseconds but hashes about six times
slower (4.6 against 0.8 ms per MB on the bench machine), so neither is best for every size.

:class:`Sha256` keeps what it is given until it holds more than :data:`BUFFER_LIMIT` bytes: a digest
of no more than that comes from the built-in module; past it, the OpenSSL hash is made, fed the
buffer, and is handed every later ``update``.  The same holds for the process: once the built-in has
hashed a megabyte in all, or OpenSSL is loaded anyway, every new hash is OpenSSL's.  The digest is
SHA-256's either way; tests/test_digests.py checks it against ``hashlib`` on generated chunkings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

BUFFER_LIMIT = 1 << 20  # about where the built-in's slower hashing outweighs loading OpenSSL
CHUNK = 1 << 20  # files are read in pieces of this size


def _builtin_sha256() -> Callable[[bytes | bytearray], Any] | None:
    """CPython's own SHA-256 constructor (named ``_sha2`` from 3.12, ``_sha256`` before), or None."""
    for name in ("_sha256", "_sha2"):
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            continue
    return None


_BUILTIN = _builtin_sha256()
# bytes this process may still hash with the built-in: past about a megabyte in all (many small files, a lock
# of hundreds), loading OpenSSL costs less than the built-in's slower hashing, so every later hash uses it
_builtin_left = BUFFER_LIMIT


def _openssl_loaded() -> bool:
    return (
        "_hashlib" in sys.modules
    )  # loaded already (another module imported hashlib): nothing to save


def _use_builtin() -> bool:
    return _BUILTIN is not None and _builtin_left > 0 and not _openssl_loaded()


class Sha256:
    """``hashlib.sha256(data)``'s ``update``, ``digest`` and ``hexdigest``, without OpenSSL below :data:`BUFFER_LIMIT`.

    No attribute refers back to the object (a bound method of its own would be a cycle, and a lean
    command runs with the cyclic collector off: procbench/console.py), so it is freed, buffer and all,
    as soon as it is dropped.
    """

    __slots__ = ("_buffer", "_openssl")

    def __init__(self, data: bytes = b"") -> None:
        self._buffer = bytearray()
        self._openssl: Any = None
        if not _use_builtin():
            self._switch()
        if data:
            self.update(data)

    def update(self, data: bytes) -> None:
        if self._openssl is not None:
            self._openssl.update(data)
            return
        self._buffer += data
        if len(self._buffer) > min(BUFFER_LIMIT, _builtin_left):
            self._switch()

    def _switch(self) -> None:
        import hashlib

        self._openssl = hashlib.sha256(self._buffer)
        self._buffer = bytearray()

    def _final(self) -> Any:
        if self._openssl is not None:
            return self._openssl
        global _builtin_left
        assert _BUILTIN is not None  # else __init__ switched
        _builtin_left -= len(self._buffer)
        return _BUILTIN(self._buffer)

    def digest(self) -> bytes:
        return self._final().digest()

    def hexdigest(self) -> str:
        return self._final().hexdigest()


def sha256(data: bytes = b"") -> Sha256:
    """A SHA-256 hash of ``data`` to add to: ``hashlib.sha256``'s drop-in for the warm paths."""
    return Sha256(data)


def file_sha256(path: str) -> str:
    """The hex SHA-256 of a file's bytes, read in :data:`CHUNK` pieces (memory stays bounded)."""
    digest = Sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
