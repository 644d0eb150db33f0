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
