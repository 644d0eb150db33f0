"""A running site and a headless browser, for the page-load bench and the screenshots (never the tests' fixtures).

:class:`Server` runs ``streamlit run leaderboard/app.py`` on 127.0.0.1 in a child process (the command of
``procbench leaderboard``, from :mod:`procbench.leaderboard.serve`) and knows its process id, so the bench can read the server's CPU time from
``/proc``.  :func:`chromium` launches Debian's ``/usr/bin/chromium`` through Playwright (never a downloaded
browser).  Playwright is imported only here, only when called.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from procbench.leaderboard import serve
from procbench.paths import PROJECT_ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
)
SCRIPT_DONE = "[data-testid=stApp][data-test-script-state=notRunning]"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One ``streamlit run`` process serving ``db``; ``cpu_seconds()`` is its user + system time so far."""

    def __init__(
        self,
        db: Path,
        *,
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        app: Path | None = None,
    ) -> None:
        self.db = db
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # exactly what `procbench leaderboard` runs (``app``: another script under the same settings)
        command = serve.command(port=self.port, app=app or serve.APP)
        self._log = log.open("w") if log is not None else subprocess.DEVNULL
        full_env = {**os.environ, **(env or {}), "PROCBENCH_DB": str(db)}
        self.process = subprocess.Popen(
            command, env=full_env, stdout=self._log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT
        )

    def wait_ready(self, timeout_s: float = 120.0) -> float:
        """Block until the health endpoint answers; returns the seconds it took."""
        import httpx

        started = time.monotonic()
        while True:
            try:
                if httpx.get(f"{self.url}/_stcore/health", timeout=2).text == "ok":
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() - started > timeout_s:
                raise RuntimeError(f"streamlit did not start (exit {self.process.poll()})")
            time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the server process (all its threads), from /proc/<pid>/stat."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat(5))
        return ticks / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self._log is not subprocess.DEVNULL:
            self._log.close()  # type: ignore[union-attr]


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def client_cpu_seconds(exclude: int) -> float:
    """CPU seconds of this process's descendants other than ``exclude`` (the server): Playwright's driver and Chromium.

    Counts each process's own time and its reaped children's (Chromium's renderers are reaped by its zygote, so
    a closed tab's time stays counted); a process that exits between two readings takes its time with it.
    """
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    total, stack = 0, list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        if pid == exclude:
            continue
        try:
            fields = _stat(pid)
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            continue
        stack += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds all CPUs spent busy since boot (/proc/stat: everything but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


@contextmanager
def serving(
    db: Path,
    *,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    app: Path | None = None,
) -> Iterator[Server]:
    server = Server(db, env=env, log=log, app=app)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium driven by Playwright (sync API)."""
    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install Debian's chromium (`make e2e-deps`)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS)
        )
        try:
            yield browser
        finally:
            browser.close()
