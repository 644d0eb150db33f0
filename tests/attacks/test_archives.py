"""Archive bombs in `procbench import inspect`: every member and the whole archive have a decompressed-size limit,
checked while decompressing (a few hundred kilobytes of Zstandard or deflate can stand for gigabytes).

The ZIP files are written byte by byte here (APPNOTE 4.3.7 / 4.3.12 / 4.3.16), so a member can use Zstandard
(method 93, which Python 3.11's zipfile cannot write) and can declare a size that is not its real one.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
import zstandard
from typer.testing import CliRunner

from procbench.cli import app
from procbench.exit_codes import EXIT_INVALID_PREDICTIONS

ZSTD, DEFLATE, STORED = 93, 8, 0


def _zip(path: Path, members: list[tuple[str, int, bytes, int, int]]) -> Path:
    """A ZIP of (name, method, compressed bytes, declared uncompressed size, declared CRC-32) members."""
    body, central = b"", b""
    for name, method, data, size, crc in members:
        encoded = name.encode()
        offset = len(body)
        body += (
            struct.pack(
                "<4s5H3L2H",
                b"PK\x03\x04",
                20,
                0,
                method,
                0,
                0,
                crc,
                len(data),
                size,
                len(encoded),
                0,
            )
            + encoded
            + data
        )
        central += (
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                20,
                0,
                method,
                0,
                0,
                crc,
                len(data),
                size,
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + encoded
        )
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(body), 0
    )
    path.write_bytes(body + central + end)
    return path


def _sample(sample_id: int) -> bytes:
    return json.dumps(
        {
            "id": sample_id,
            "epoch": 1,
            "choices": ["a", "b"],
            "output": {"completion": "ANSWER: A"},
            "scores": {},
        }
    ).encode()


def _import(log: Path, tmp_path: Path) -> tuple[int, str, bool]:
    result = CliRunner().invoke(
        app,
        [
            "import",
            "inspect",
            str(log),
            "--task",
            "paradise-warning",
            "--out",
            str(tmp_path / "out.jsonl"),
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"a traceback: {result.exception!r}"
    )
    return result.exit_code, result.output, (tmp_path / "out.jsonl").exists()


def test_the_archive_builder_writes_what_zipfile_reads(tmp_path: Path) -> None:
    """The hand-written ZIP is a real one: zipfile reads a deflated member back (the other tests rely on the layout)."""
    data = _sample(1)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    log = _zip(
        tmp_path / "ok.eval",
        [
            (
                "samples/1_epoch_1.json",
                DEFLATE,
                packer.compress(data) + packer.flush(),
                len(data),
                zlib.crc32(data),
            )
        ],
    )
    with zipfile.ZipFile(log) as archive:
        assert archive.read("samples/1_epoch_1.json") == data


def test_a_zstandard_member_that_lies_about_its_size_stops_at_the_member_limit(
    tmp_path: Path,
) -> None:
    """~300 KB of repeated Zstandard frames expand to 8 GB; the member declares 1 000 bytes. Refused at the default
    member limit while streaming (the process never holds the 8 GB), with one problem line and exit 2."""
    frame = zstandard.ZstdCompressor(level=19).compress(b"\0" * (8 << 20))
    bomb = frame * 1000
    assert len(bomb) < 1 << 20  # a small file ...
    log = _zip(tmp_path / "bomb.eval", [("samples/1_epoch_1.json", ZSTD, bomb, 1000, 0)])
    code, output, written = _import(log, tmp_path)
    assert code == EXIT_INVALID_PREDICTIONS and not written
    assert output.splitlines() == [  # one line refusing it, one saying nothing was written
        f"{log}: file: samples/1_epoch_1.json: decompresses to more than 64 MB (the limit for one member, PROCBENCH_IMPORT_MAX_MEMBER_MB); "
        "refusing the archive",
        "no prediction file was written",
    ]


def test_a_member_declaring_gigabytes_is_refused_before_any_decompression(tmp_path: Path) -> None:
    """A deflated member whose header says 3.1 GB: refused on the declared size (its data is not even valid deflate)."""
    log = _zip(
        tmp_path / "big.eval", [("samples/1_epoch_1.json", DEFLATE, b"\x00" * 64, 3_100_000_000, 0)]
    )
    code, output, written = _import(log, tmp_path)
    assert code == EXIT_INVALID_PREDICTIONS and not written
    assert "decompresses to more than 64 MB" in output and "Traceback" not in output


@pytest.mark.parametrize("method", [DEFLATE, ZSTD])
def test_many_members_within_the_member_limit_pass_the_archive_limit(
    method: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each member honest and under the member limit, the total over the archive's: refused at the total."""
    monkeypatch.setenv("PROCBENCH_IMPORT_MAX_MEMBER_MB", "2")
    monkeypatch.setenv("PROCBENCH_IMPORT_MAX_TOTAL_MB", "3")
    padding = b" " * (
        (1 << 20) + 1000
    )  # JSON whitespace: each member is valid and a little over 1 MB
    members = []
    for sample_id in range(4):
        data = _sample(sample_id) + padding
        if method == DEFLATE:
            packer = zlib.compressobj(9, zlib.DEFLATED, -15)
            packed = packer.compress(data) + packer.flush()
        else:
            packed = zstandard.ZstdCompressor().compress(data)
        members.append(
            (f"samples/{sample_id}_epoch_1.json", method, packed, len(data), zlib.crc32(data))
        )
    code, output, written = _import(_zip(tmp_path / "many.eval", members), tmp_path)
    assert code == EXIT_INVALID_PREDICTIONS and not written
    assert (
        "the archive decompresses to more than 3 MB (the limit for a whole log, PROCBENCH_IMPORT_MAX_TOTAL_MB)"
        in output
    )
    # the same members, fewer of them, are read: the limit is the total, not the members' shape
    code, output, written = _import(_zip(tmp_path / "two.eval", members[:2]), tmp_path)
    assert "decompresses to more than" not in output


def test_a_bad_limit_setting_is_a_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCBENCH_IMPORT_MAX_TOTAL_MB", "lots")
    data = _sample(1)
    log = _zip(
        tmp_path / "one.eval",
        [("samples/1_epoch_1.json", STORED, data, len(data), zlib.crc32(data))],
    )
    code, output, written = _import(log, tmp_path)
    assert (
        code == EXIT_INVALID_PREDICTIONS
        and not written
        and "PROCBENCH_IMPORT_MAX_TOTAL_MB must be a whole number of megabytes, got 'lots'"
        in output
    )
