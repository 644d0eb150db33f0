"""procbench.runners.runtime.digests: SHA-256 without OpenSSL for small inputs gives hashlib's digest at every size."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.runners.runtime import digests

LIMIT = digests.BUFFER_LIMIT


@pytest.fixture(autouse=True)
def builtin_available(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a fresh 1x score: OpenSSL not loaded yet, the built-in's megabyte not spent (pytest has loaded hashlib)."""
    monkeypatch.setattr(digests, "_openssl_loaded", lambda: False)
    monkeypatch.setattr(digests, "_builtin_left", LIMIT)


@given(st.lists(st.binary(max_size=300), max_size=12))
def test_small_inputs_hash_as_hashlib_does(chunks: list[bytes]) -> None:
    ours = digests.sha256()
    oracle = hashlib.sha256()
    for chunk in chunks:
        ours.update(chunk)
        oracle.update(chunk)
    assert ours.hexdigest() == oracle.hexdigest()
    assert ours.digest() == oracle.digest()


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=LIMIT // 2 + 7), min_size=1, max_size=5),
    st.binary(min_size=1, max_size=64),
)
def test_inputs_across_the_buffer_limit_hash_as_hashlib_does(
    sizes: list[int], pattern: bytes
) -> None:
    """Chunks that cross the limit at any point (and digests asked on the way) give hashlib's digest."""
    ours = digests.sha256(pattern)
    oracle = hashlib.sha256(pattern)
    for size in sizes:
        chunk = (pattern * (size // len(pattern) + 1))[:size]
        ours.update(chunk)
        oracle.update(chunk)
        assert ours.hexdigest() == oracle.hexdigest()


def test_the_process_spends_one_megabyte_on_the_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small hashes (a lock of many files): the built-in hashes the first megabyte in all, OpenSSL the rest;
    and with OpenSSL loaded already, every hash is OpenSSL's."""
    kinds = []
    for _ in range(5):
        digest = digests.sha256(b"z" * (LIMIT // 3))
        assert digest.hexdigest() == hashlib.sha256(b"z" * (LIMIT // 3)).hexdigest()
        kinds.append(digest._openssl is None)
    assert kinds == [True, True, True, False, False]
    monkeypatch.setattr(digests, "_builtin_left", LIMIT)
    monkeypatch.setattr(digests, "_openssl_loaded", lambda: True)
    assert digests.sha256(b"small")._openssl is not None


def test_the_limit_is_where_openssl_takes_over() -> None:
    at_limit = digests.sha256(b"x" * LIMIT)
    assert at_limit._openssl is None  # no more than the limit: the built-in hashes it
    past = digests.sha256(b"x" * LIMIT)
    past.update(b"y")
    assert past._openssl is not None and not past._buffer  # handed over, nothing kept twice
    assert past.hexdigest() == hashlib.sha256(b"x" * LIMIT + b"y").hexdigest()


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([0, 1, 1000, digests.CHUNK, digests.CHUNK + 1, 2 * LIMIT + 3]))
def test_file_digest_equals_sha256sum(tmp_path_factory: pytest.TempPathFactory, size: int) -> None:
    path = tmp_path_factory.mktemp("digest") / "data.bin"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"z" * (size % 256))
    expected = subprocess.run(
        ["sha256sum", str(path)], capture_output=True, text=True, check=True
    ).stdout.split()[0]
    assert digests.file_sha256(str(path)) == expected


def test_small_hashing_does_not_load_openssl() -> None:
    """The reason for the module: hashing a spec-cache-sized input leaves hashlib and _hashlib unimported."""
    probe = (
        "import sys\n"
        "from procbench.runners.runtime import digests\n"
        "digests.sha256(b'x' * 70000).hexdigest()\n"
        "print(sorted(m for m in ('hashlib', '_hashlib') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.strip()
    assert out == "[]"


def test_a_hash_is_freed_without_the_cyclic_collector() -> None:
    """A lean command runs with the cyclic collector off (procbench/console.py): a hash must hold no
    reference to itself (as a bound method of its own would), or its buffer would live to the exit."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        for size in (10, LIMIT + 1):
            digest = digests.sha256(b"x" * size)
            digest.update(b"y")
            digest.hexdigest()
            del digest
        assert not [o for o in gc.get_objects() if type(o) is digests.Sha256]
    finally:
        if was:
            gc.enable()
