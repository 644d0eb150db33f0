"""The site is served one way: `procbench leaderboard`, the site bench and the browser tests run the same command."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from procbench.leaderboard import live, serve
from procbench import cli, serving


def test_procbench_leaderboard_runs_the_shipped_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "board.duckdb"
    db.write_bytes(b"")
    seen: list[list[str]] = []

    class Recorded:
        def __init__(self, command: list[str], **_: object) -> None:
            seen.append(command)

        def poll(self) -> int:
            return 0

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(serving.subprocess, "Popen", Recorded)
    result = CliRunner().invoke(cli.app, ["leaderboard", "--db", str(db), "--port", "8765"])
    assert result.exit_code == 0, result.output
    assert seen == [serve.command(port=8765)]
    command = seen[0]
    # the settings the bench used to add on its own are the product's now, and the board stays on this machine
    assert "--server.fileWatcherType=none" in command and "--server.address=127.0.0.1" in command
    seen.clear()
    CliRunner().invoke(
        cli.app, ["leaderboard", "--db", str(db), "--port", "8765", "--address", "0.0.0.0"]
    )
    assert "--server.address=0.0.0.0" in seen[0]


def test_the_bench_server_runs_the_same_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[list[str]] = []

    class Recorded:
        def __init__(self, command: list[str], **_: object) -> None:
            started.append(command)

    monkeypatch.setattr(live.subprocess, "Popen", Recorded)
    server = live.Server(tmp_path / "board.duckdb")
    assert started == [serve.command(port=server.port)]


def test_the_shipped_command_serves_the_board_on_loopback(tmp_path: Path) -> None:
    """Streamlit accepts every flag of the shipped command: the server answers its health check on 127.0.0.1."""
    port = live.free_port()
    env = {**os.environ, "PROCBENCH_DB": str(tmp_path / "missing.duckdb")}
    process = subprocess.Popen(
        serve.command(port=port),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).text == "ok":
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the shipped command did not serve within 60 s"
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert serve.command(port=port)[:3] == [sys.executable, "-m", "streamlit"]
