"""``procbench leaderboard``: serve the board, and optionally run the model baselines once it answers.

A real board's neural baselines take minutes each on a CPU; a first ``make leaderboard`` must not make
its user wait for them with nothing on screen.  The board is built without them (``procbench demo
--no-neural``), served, and then each one runs here with its progress on the console while its board
says "computing" (``procbench.submissions.pending``); its row appears when intake stores it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from procbench.leaderboard import serve

READY_TIMEOUT_S = 120.0


def exposure_warning(address: str) -> str:
    """What serving on ``address`` exposes beyond this machine ('' for a loopback address or a name of this machine only).

    The site's Upload page takes submissions (with a team's token where the team has one): an address
    other machines reach lets their users submit, so the operator is told once, at start.
    """
    import ipaddress

    host = address.strip().strip("[]")
    if host.lower() == "localhost":
        return ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        where = f"the address {address!r}"
    else:
        if ip.is_loopback:
            return ""
        where = "every interface of this machine" if ip.is_unspecified else f"{address}"
    return (
        f"serving on {where} exposes the board and its Upload page to other machines: anyone who reaches it can submit "
        "(give each team a token: `procbench team create`; 127.0.0.1 keeps it on this machine)"
    )


def wait_until_serving(
    process: subprocess.Popen[bytes], url: str, timeout_s: float = READY_TIMEOUT_S
) -> bool:
    """Whether the server answered its health check before it exited or ``timeout_s`` passed."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/_stcore/health", timeout=2).text == "ok":
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return False


def serve_board(
    db: Path,
    *,
    port: int,
    address: str,
    headless: bool = True,
    run_baselines: bool = False,
    log: Callable[[str], None] = print,
) -> int:
    """Serve ``db`` until the server exits (its exit status); with ``run_baselines``, run the neural baselines meanwhile."""
    env = {**os.environ, "PROCBENCH_DB": str(db.resolve())}
    process = subprocess.Popen(
        serve.command(port=port, address=address, headless=headless), env=env
    )
    try:
        if run_baselines:
            host = "127.0.0.1" if address in ("0.0.0.0", "::") else address
            if wait_until_serving(process, f"http://{host}:{port}"):
                log(
                    f"the board is served at http://{host}:{port}; running the baselines that need a model"
                )
                run_pending_baselines(db, log=log)
        return process.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait()


def run_pending_baselines(db: Path, *, log: Callable[[str], None] = print) -> int:
    """The neural baselines of a real board at the default data root, into ``db``; none on sample data."""
    from procbench.demo import neural_jobs, plan, run_neural_jobs

    chosen = plan()
    if not chosen.real:
        return 0
    jobs = neural_jobs(chosen.data_root, log=log)
    if not jobs:
        log(
            "no baseline that needs a model is installed (the `models` extra): the board is complete"
        )
        return 0
    return run_neural_jobs(db, chosen.data_root, jobs, log=log)
