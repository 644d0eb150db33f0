"""Issue #29, staging: uploads are copied into a folder under ``<db>.raw/tmp`` (the store's filesystem).  A full
disk there is a one-line refusal with a receipt (no traceback, no temporary path), and the folder a process
killed while staging leaves is reported by ``procbench admin check`` and removed by ``--fix``, never one in use."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.submissions import admin, blobs, staging, store
from procbench.submissions.errors import ScoringFailed
from tests.test_submissions_support import NO_CHANGE, counts, failures, submit_openpi, variant

cli = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "board.duckdb"
    submit_openpi(path, NO_CHANGE, team="earlier")
    return path


@pytest.fixture
def full_scratch(db: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted where intake stages (``<db>.raw/tmp``); skipped where mounting is not permitted."""
    scratch = blobs.scratch_root(db)
    scratch.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(scratch)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if mounted.returncode != 0:
        pytest.skip(f"this sandbox does not permit mounting a tmpfs: {mounted.stderr.strip()}")
    try:
        yield scratch
    finally:
        subprocess.run(["umount", "-l", str(scratch)], capture_output=True, timeout=30)


def _big_upload(tmp_path: Path) -> Path:
    """A 3 MiB file (larger than the 1 MiB scratch): staging runs out of space whatever its content."""
    path = tmp_path / "my predictions.jsonl"
    line = variant(tmp_path, 1).read_text(encoding="utf-8").splitlines()[0] + "\n"
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < 3 << 20:
            out.write(line)
    return path


def test_a_full_disk_at_staging_is_a_refusal_with_a_receipt(
    db: Path, full_scratch: Path, tmp_path: Path
) -> None:
    upload = _big_upload(tmp_path)
    before = counts(db)
    with pytest.raises(ScoringFailed) as failed:
        submit_openpi(db, upload)
    message = str(failed.value)
    assert failed.value.stage == "store" and failed.value.receipt
    assert (
        "No space left on device" in message
        and "my predictions.jsonl" in message
        and "\n" not in message
    )
    assert "procbench-intake-" not in message and str(full_scratch) not in message
    assert counts(db) == before
    assert not list(full_scratch.iterdir())  # the partial copy went with its folder
    (row,) = [r for r in failures(db) if r["receipt_id"] == failed.value.receipt]
    assert row["stage"] == "store" and "procbench-intake-" not in str(row["reason"])
    assert admin.check_consistency(db) == [] and admin.staging_leftovers(db) == []


def test_the_cli_says_so_in_one_line_with_exit_6(
    db: Path, full_scratch: Path, tmp_path: Path
) -> None:
    upload = _big_upload(tmp_path)
    result = cli.invoke(
        app,
        [
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(upload),
            "--model",
            "m",
            "--team",
            "t",
            "--db",
            str(db),
            "--data-dir",
            "samples/data",
        ],
    )
    assert result.exit_code == 6, result.output
    assert (
        "No space left on device" in result.output
        and "receipt" in result.output
        and "Traceback" not in result.output
    )


KILLED_WHILE_STAGED = """
import sys
from pathlib import Path
from tests.test_submissions_support import submit_openpi
submit_openpi(Path(sys.argv[1]), Path(sys.argv[2]))
"""


def test_a_copy_left_by_a_killed_intake_is_reported_and_fixed(db: Path, tmp_path: Path) -> None:
    upload = variant(tmp_path, 3)
    env = {**os.environ, store.CRASH_ENV: "intake.staged"}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WHILE_STAGED, str(db), str(upload)],
        env=env,
        cwd=Path.cwd(),
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL
    scratch = blobs.scratch_root(db)
    (left,) = [p for p in scratch.iterdir() if p.name.startswith("procbench-intake-")]
    copy = next(p for p in left.rglob("*") if p.is_file() and p.name == upload.name)
    assert copy.read_bytes() == upload.read_bytes()  # a full copy of the upload was left behind
    before = counts(db)

    # a staging folder in use at the same moment is not a leftover, and survives --fix
    from procbench.submissions.staging import IntakeLimits, stage

    with stage(upload, filename=None, limits=IntakeLimits(), scratch=scratch) as live:
        checked = cli.invoke(app, ["admin", "check", "--db", str(db)])
        assert (
            checked.exit_code == 1
            and f"staging leftover {left.name}" in checked.output
            and live.path.parent.parent.name not in checked.output
        )
        fixed = cli.invoke(app, ["admin", "check", "--fix", "--db", str(db)])
        assert fixed.exit_code == 0, fixed.output
        assert "removed 1 staging leftover" in fixed.output and left.name in fixed.output
        assert not left.exists() and live.path.is_file()
    assert cli.invoke(app, ["admin", "check", "--db", str(db)]).exit_code == 0
    assert counts(db) == before
    # and the same upload goes through afterwards
    assert submit_openpi(db, upload).created


def test_leftovers_ignore_what_is_not_a_staging_folder(db: Path) -> None:
    scratch = blobs.scratch_root(db)
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "operator-notes").mkdir()
    (scratch / "procbench-intake-link").symlink_to(db.parent)
    assert staging.leftovers(scratch) == [] and admin.collect_staging(db) == []
    assert (scratch / "operator-notes").is_dir() and db.is_file()
