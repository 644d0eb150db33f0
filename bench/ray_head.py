"""A running local Ray cluster for the re-scoring bench: what an operator starts once with ``ray start --head``.

The bench measures the ray engine twice (issue #31): starting its own Ray for the call (``PROCBENCH_RAY_ADDRESS``
unset), and attached to a cluster already running (docs/distributed.md, the operator's usual configuration).
:func:`running_head` starts that cluster before the timed runs and stops it after them, timing both; the
start-up is reported beside the figure, never counted in it.

The head runs ``ray start --head --block`` as a child of this process, on free ports and in a temporary
folder of its own, so it is neither found by another ``ray.init()`` on the machine nor stopped by anything
but this process (``ray stop`` would stop every Ray of the machine's user).
"""

from __future__ import annotations

import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 180
# no token from ~/.ray (the coordinator connects with the same setting), workers at normal priority, no usage report
ENVIRONMENT = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_worker_niceness": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
}


@dataclass
class Head:
    address: str  # what PROCBENCH_RAY_ADDRESS names
    start_s: float  # `ray start --head` until the cluster took connections
    pid: int  # of `ray start --block`, which stops the head's processes when it ends
    stop_s: float = 0.0  # filled in when it stopped


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_head(cpus: int) -> Iterator[Head]:
    """A local Ray head of ``cpus`` CPUs, running while the block runs; raises RuntimeError when it does not start."""
    from ray._private.services import get_node_ip_address

    temp = Path(tempfile.mkdtemp(prefix="pbray-", dir="/tmp"))  # short: Ray's socket paths must fit
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--head",
        "--block",
        f"--port={port}",
        f"--num-cpus={cpus}",
        "--include-dashboard=false",
        f"--dashboard-port={_free_port()}",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    started = time.perf_counter()
    head = subprocess.Popen(  # noqa: S603 - this interpreter's own Ray
        command,
        env={**os.environ, **ENVIRONMENT},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> (
        None
    ):  # drains the output for as long as the head runs (a full pipe would block it)
        assert head.stdout is not None
        for line in head.stdout:
            lines.put(line)
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    info: Head | None = None
    try:
        seen: list[str] = []
        deadline = started + START_TIMEOUT_S
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.perf_counter()))
            except queue.Empty:
                line = ""
            seen.append(line)
            if "--block" in line or "Ray runtime started" in line:
                break  # `ray start` says so once every process of the head runs
            if not line:
                raise RuntimeError(
                    "ray start --head did not start: " + " | ".join(s.strip() for s in seen[-3:])
                )
        info = Head(f"{get_node_ip_address()}:{port}", time.perf_counter() - started, head.pid)
        yield info
    finally:
        stopping = time.perf_counter()
        head.terminate()  # `ray start --block` stops the processes it started
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait(10)
        if info is not None:
            info.stop_s = time.perf_counter() - stopping
        shutil.rmtree(temp, ignore_errors=True)
