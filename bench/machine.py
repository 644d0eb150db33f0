"""The machine and library versions a report was measured with."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from datetime import datetime, timezone

LIBRARIES = (
    "numpy",
    "duckdb",
    "polars",
    "pyarrow",
    "nltk",
    "spacy",
    "scikit-learn",
    "streamlit",
    "ray",
)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gb() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def describe() -> dict[str, str]:
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": str(os.cpu_count()),
        "memory": f"{memory_gb():.1f} GB",
        "os": f"{platform.system()} {platform.release()}",
        "load average at start": load_average(),
    }


# A CPU-bound pure-Python loop (dicts, strings, lists: the kind of work scoring does), about 1-2 s on the bench machine
_PROBE = (
    "d = {}\n"
    "for i in range(1_500_000):\n"
    "    s = str(i)\n"
    "    d[s[-4:]] = d.get(s[-4:], 0) + len(s)\n"
    "sorted(d.items())\n"
)


def parallel_ceiling(copies: int = 0, reps: int = 2) -> dict[str, float]:
    """How much faster ``copies`` (default: one per CPU) copies of the same CPU-bound work finish at once than one after
    another: the most any engine of that many processes can gain on this machine (issue #31's re-scoring goal).

    On a virtual machine two vCPUs may share one physical core, and each process then runs slower while the other
    does; this measures that instead of assuming ``copies``x.  Alone and together alternate ``reps`` times; the
    fastest of each is kept (the least disturbed by other work).
    """
    import subprocess
    import time

    count = copies or os.cpu_count() or 1
    command = [sys.executable, "-S", "-c", _PROBE]

    def wall(n: int) -> float:
        start = time.perf_counter()
        children = [subprocess.Popen(command) for _ in range(n)]
        for child in children:
            child.wait()
        return time.perf_counter() - start

    alone, together = [], []
    for _ in range(reps):
        alone.append(wall(1))
        together.append(wall(count))
    one, many = min(alone), min(together)
    return {"copies": count, "alone_s": one, "together_s": many, "ceiling": count * one / many}
