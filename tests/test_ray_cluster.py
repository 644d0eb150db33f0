"""The ray engine on a real cluster (issue #33): a head node and a worker node on 127.0.0.1, the worker
running the installed wheel in another virtual environment with the checkout, the store and the
coordinator's data root hidden from it (a mount namespace with tmpfs over them), the data at another
path (``PROCBENCH_RAY_DATA``).  ``procbench rescore --engine ray`` from the wheel stores exactly the rows
the local engine stores; a coordinator killed after its first committed batch is resumed by the next run.

The head node has no CPUs, so every job runs on the worker node.  Ray's processes are found by the
unique ``--temp-dir`` on their command lines and stopped by id (``ray stop`` would stop every Ray on
the machine, another test's among them).  Skipped, with the reason, where a mount namespace cannot be
made (not root, no ``unshare``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from procbench.paths import PROJECT_ROOT
from procbench.rescore import rescore
from tests.rescore_stores import TASKS, changed_root, copy_store, rescored_rows, sample_store
from tests.test_wheel import installed  # noqa: F401  (the wheel, built and installed once for this module)

pytest.importorskip("ray")

# Run by the wheel's Python on the cluster: where a job's worker imports procbench from and what it can see.
PROBE = """
import json, os, sys, ray
ray.init(address=sys.argv[1], log_to_driver=False)

@ray.remote(num_cpus=1)
def probe(paths):
    import procbench
    return {"file": procbench.__file__, "seen": {p: os.path.exists(p) for p in paths}, "nice": os.nice(0),
            "data": os.environ.get("PROCBENCH_RAY_DATA", "")}

print(json.dumps(ray.get(probe.remote(sys.argv[2:]))))
"""


def _hiding_unavailable() -> str:
    """Why a mount namespace cannot be made here ('' when it can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "hiding the checkout from the worker node needs root (unshare --mount, tmpfs)"
    if shutil.which("unshare") is None:
        return "no unshare command"
    tried = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if tried.returncode != 0:
        return f"unshare --mount fails here: {tried.stderr.strip()[:200]}"
    return ""


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _ray_processes(temp_dir: Path) -> list[int]:
    """The processes of this test's Ray (every one names its session folder under ``temp_dir``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if str(temp_dir).encode() in command:
            found.append(int(entry.name))
    return found


def _stop(temp_dir: Path) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        for pid in _ray_processes(temp_dir):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while _ray_processes(temp_dir) and time.monotonic() < deadline:
            time.sleep(0.2)


def _node_ports(ports: list[int]) -> list[str]:
    names = (
        "--node-manager-port",
        "--object-manager-port",
        "--dashboard-agent-listen-port",
        "--dashboard-agent-grpc-port",
        "--runtime-env-agent-port",
        "--metrics-export-port",
    )
    return [f"{name}={port}" for name, port in zip(names, ports)]


def _hide_script(hidden: list[Path], keep: Path | None) -> str:
    """Shell lines run in the new mount namespace: tmpfs over each hidden folder, ``keep`` (under the first) bound back."""
    lines = ["set -e"]
    if keep is not None:
        stash = hidden[-1].parent / "kept-venv"
        lines += [f"mkdir -p '{stash}'", f"mount --bind '{keep}' '{stash}'"]
    lines += [f"mount -t tmpfs procbench-hidden '{folder}'" for folder in hidden]
    if keep is not None:
        lines += [f"mkdir -p '{keep}'", f"mount --bind '{stash}' '{keep}'"]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def cluster(
    installed: dict[str, object],  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, object]]:
    reason = _hiding_unavailable()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("ray-cluster")
    coordinator, worker_data = base / "coordinator", base / "worker-data"
    for folder in (coordinator, worker_data):
        folder.mkdir()
    temp_dir = Path(
        tempfile.mkdtemp(prefix="pbray-", dir="/tmp")
    )  # short: Ray's socket paths under it must fit 107 bytes
    python, env = str(installed["python"]), dict(installed["env"])  # type: ignore[call-overload]
    env |= {
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_worker_niceness": "0",
    }  # no token from ~/.ray; normal priority
    gcs, dashboard, *ports = _free_ports(14)
    address = f"127.0.0.1:{gcs}"
    ray_start = [
        python,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={temp_dir}",
        "--disable-usage-stats",
    ]
    # the checkout (its environment bound back when it lies inside), and the coordinator's store and data root
    prefix = Path(sys.prefix).resolve()
    keep = prefix if prefix.is_relative_to(PROJECT_ROOT) else None
    hide = _hide_script([PROJECT_ROOT, coordinator], keep)
    try:
        head = [
            *ray_start,
            "--head",
            f"--port={gcs}",
            "--num-cpus=0",
            "--include-dashboard=false",
            f"--dashboard-port={dashboard}",
            *_node_ports(ports[:6]),
        ]
        started = subprocess.run(
            head,
            cwd=installed["work"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )  # type: ignore[arg-type]
        assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-2000:]
        worker = [*ray_start, f"--address={address}", "--num-cpus=1", *_node_ports(ports[6:12])]
        script = f"{hide}\nexec {' '.join(worker)}\n"
        worker_env = {**env, "PROCBENCH_RAY_DATA": str(worker_data)}
        joined = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
            cwd="/",
            env=worker_env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert joined.returncode == 0, joined.stdout[-2000:] + joined.stderr[-2000:]
        yield {
            **installed,
            "address": address,
            "coordinator": coordinator,
            "worker_data": worker_data,
            "env": {**env, "PROCBENCH_RAY_ADDRESS": address},
        }
    finally:
        _stop(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _cli(cluster: dict[str, object], *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    procbench = Path(str(cluster["python"])).parent / "procbench"
    env = {**cluster["env"], **extra}  # type: ignore[dict-item]
    return subprocess.run(
        [str(procbench), *args],
        cwd=cluster["work"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # type: ignore[arg-type]


def test_the_worker_node_runs_the_wheel_and_cannot_see_the_checkout(
    cluster: dict[str, object],
) -> None:
    coordinator = Path(str(cluster["coordinator"]))
    (coordinator / "marker").write_text("the coordinator's disk")
    paths = [
        str(PROJECT_ROOT / "dsl" / "parser.py"),
        str(PROJECT_ROOT / "specs"),
        str(coordinator / "marker"),
        str(cluster["worker_data"]),
    ]
    done = subprocess.run(
        [str(cluster["python"]), "-c", PROBE, str(cluster["address"]), *paths],
        cwd=cluster["work"],
        env=cluster["env"],
        capture_output=True,
        text=True,  # type: ignore[arg-type]
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(seen["file"]).is_relative_to(Path(str(cluster["site"]))), (
        seen
    )  # the wheel's procbench, not the checkout's
    assert seen["seen"] == {paths[0]: False, paths[1]: False, paths[2]: False, paths[3]: True}, seen
    assert seen["data"] == str(cluster["worker_data"]) and seen["nice"] == 0


def test_rescoring_on_the_cluster_stores_the_local_engines_rows_and_resumes_after_a_kill(
    cluster: dict[str, object], tmp_path: Path
) -> None:
    coordinator, worker_data = Path(str(cluster["coordinator"])), Path(str(cluster["worker_data"]))
    db = sample_store(coordinator)
    changed = changed_root(
        coordinator
    )  # the coordinator's data root: hidden from the worker node, which reads its copy
    shutil.rmtree(worker_data)
    shutil.copytree(changed, worker_data)
    local_db, ray_db = copy_store(db, "local.duckdb"), copy_store(db, "ray.duckdb")
    local_started = time.monotonic()
    for task in TASKS:
        report = rescore(local_db, task, data_root=changed, engine="local")
        assert report.rescored and not report.failed, report
    local_s = (
        time.monotonic() - local_started
    )  # reported with -s for the closing notes; never asserted
    args = ("--engine", "ray", "--db", str(ray_db), "--data-dir", str(changed))
    first, *rest = TASKS
    # killed after its first committed batch (one result per transaction): what it committed stays, the next run skips it
    killed = _cli(
        cluster,
        "rescore",
        first,
        *args,
        PROCBENCH_RESCORE_COMMIT_EVERY="1",
        PROCBENCH_CRASH_AT="rescore.after_commit",
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr[-3000:]
    resumed = _cli(cluster, "rescore", first, *args, PROCBENCH_RESCORE_COMMIT_EVERY="2")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr[-3000:]
    assert (
        "already current 1, failed 0" in resumed.stdout
        and "the board now shows fingerprint" in resumed.stdout
    ), resumed.stdout
    for task in rest:
        cluster_started = time.monotonic()
        done = _cli(cluster, "rescore", task, *args)
        took = time.monotonic() - cluster_started
        print(
            f"\n{task}: the cluster's rescore (a whole CLI process) {took:.1f} s; the local engine, every task in-process {local_s:.1f} s"
        )
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        assert "failed 0" in done.stdout and "with the ray engine" in done.stderr, (
            done.stdout + done.stderr[-3000:]
        )
    local_rows, ray_rows = rescored_rows(local_db), rescored_rows(ray_db)
    assert local_rows[0] and local_rows[1]
    assert ray_rows == local_rows
