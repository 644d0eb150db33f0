"""Start-up: a command imports what it runs, not every library of every task (issue #19).

Each case runs the real ``procbench`` command line in a fresh interpreter and reads ``sys.modules``
when it exits: an import graph, never a time.  ProPara (leaderboard and NAACL'18) stems and measures
edit distance without NLTK (runners/porter.py, runners/edit_distance.py), so scoring it must not load
NLTK, whose package init pulls SciPy, scikit-learn and pandas.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

# never needed to score ProPara, PARADISE or PM-LLM
HEAVY = ("scipy", "sklearn", "pandas", "torch", "spacy", "transformers", "streamlit", "nltk", "thinc")
# not needed to print the help either: the store, the site, the network, the parser (Lark), NumPy
NOT_FOR_HELP = (*HEAVY, "httpx", "jinja2", "duckdb", "polars", "pyarrow", "lark", "numpy", "submissions", "leaderboard")

_PROBE = """
import atexit, json, sys
def _report():
    sys.stdout.flush()
    sys.__stdout__.write("\\nMODULES " + json.dumps(sorted({name.partition('.')[0] for name in sys.modules})) + "\\n")
atexit.register(_report)
sys.argv = ["procbench", *sys.argv[1:]]
from procbench.cli import app
app()
"""


def _modules_after(args: list[str], *, cache_dir: Path) -> tuple[int, set[str], str]:
    """Exit status, top-level packages imported, and stderr of ``procbench ARGS`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PROCBENCH_CACHE_DIR": str(cache_dir)}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    line = next(line for line in reversed(done.stdout.splitlines()) if line.startswith("MODULES "))
    return done.returncode, set(json.loads(line.removeprefix("MODULES "))), done.stderr


def _sample(task: str, name: str) -> Path:
    path = SAMPLE_SUBMISSIONS_DIR / task / name
    assert path.is_file(), path
    return path


SAMPLE_CASES = {
    "propara": ("test", _sample("propara", "noisy-tracker.tsv")),
    "propara-naacl18": ("test", _sample("propara-naacl18", "noisy-grid.tsv")),
    "paradise-tip": ("test", _sample("paradise-tip", "sample-strong.jsonl")),
    "pm-llm-benchmark": ("main", _sample("pm-llm-benchmark", "acme-large.jsonl")),
}


def test_help_imports_no_command_library(tmp_path: Path) -> None:
    status, modules, stderr = _modules_after(["--help"], cache_dir=tmp_path)
    assert status == 0, stderr
    assert not modules & set(NOT_FOR_HELP), sorted(modules & set(NOT_FOR_HELP))


@pytest.mark.parametrize("task", sorted(SAMPLE_CASES))
def test_scoring_the_light_tasks_on_the_samples_imports_no_heavy_library(task: str, tmp_path: Path) -> None:
    split, predictions = SAMPLE_CASES[task]
    args = ["score", task, "--split", split, "--predictions", str(predictions), "--data-dir", str(SAMPLE_DATA_ROOT), "--json"]
    for run in ("miss", "hit"):  # the spec cache empty, then filled: neither path may import a heavy library
        status, modules, stderr = _modules_after(args, cache_dir=tmp_path)
        assert status == 0, (run, stderr)
        assert not modules & set(HEAVY), (run, sorted(modules & set(HEAVY)))


def test_a_cached_check_imports_neither_the_parser_nor_numpy(tmp_path: Path) -> None:
    status, first, stderr = _modules_after(["check"], cache_dir=tmp_path)
    assert status == 0, stderr
    assert "lark" in first  # the first check parses: the probe sees the parser when it runs
    status, second, stderr = _modules_after(["check"], cache_dir=tmp_path)
    assert status == 0, stderr
    assert not second & {"lark", "numpy", "jinja2", *HEAVY}, sorted(second & {"lark", "numpy", "jinja2", *HEAVY})


@pytest.mark.parametrize("name", ["propara", "propara-naacl18", "paradise-tip", "pm-llm-benchmark"])
def test_scoring_the_light_tasks_on_the_real_data_imports_no_heavy_library(name: str, data_root: Path, tmp_path: Path) -> None:
    from bench.generate import generate

    workload = generate(name, data_root, tmp_path / "work", 1)
    args = ["score", workload.task, "--split", workload.split, "--predictions", str(workload.predictions), "--data-dir", str(workload.data_root), "--json"]
    status, modules, stderr = _modules_after(args, cache_dir=tmp_path / "cache")
    assert status == 0, stderr
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
