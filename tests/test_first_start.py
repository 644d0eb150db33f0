"""The first `make leaderboard`: the board is served before a model baseline finishes, which its board says is computing.

The neural baseline is replaced by a slow stand-in (a writer that waits for the test's signal), run through the
same path `procbench leaderboard --run-baselines` takes: a real Streamlit server, then the baseline jobs into the
store, each listed as pending until intake stores its row.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from procbench.leaderboard import live, queries, ui
from procbench import demo, serving
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners import baselines
from tests.site_app import build_openpi_sample_store, page

STAND_IN = "slow-stand-in"


def _stand_in(release: threading.Event) -> baselines.Baseline:
    sample = sorted((SAMPLE_SUBMISSIONS_DIR / "openpi").glob("*.jsonl"))[0]

    def write(given: baselines.BaselineInput, out: Path) -> Path:
        """A stand-in for a model baseline: predicts only once the test lets it."""
        assert release.wait(120), "the test never released the stand-in"
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, out)
        return out

    return baselines.Baseline(
        STAND_IN, ("openpi",), "a model baseline (slow stand-in)", "jsonl", write, heavy=True
    )


def _wait(condition: Any, what: str, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _computing_notes(db: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    at = page(db, monkeypatch, "board", task="openpi", split="test")
    return [i.value for i in at.info if "Computing" in str(i.value)]


def test_the_board_answers_before_the_model_baseline_finishes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = build_openpi_sample_store(tmp_path_factory, "first-start")
    cache = tmp_path_factory.mktemp("baseline-cache")
    release = threading.Event()
    spec, runner = load_task("openpi")
    job = demo.NeuralJob(spec, runner, "test", _stand_in(release))
    logs: list[str] = []
    monkeypatch.setattr(
        serving,
        "run_pending_baselines",
        lambda db, log: demo.run_neural_jobs(db, SAMPLE_DATA_ROOT, [job], log=log, cache_dir=cache),
    )
    servers: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recorded(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        servers.append(popen(*args, **kwargs, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        return servers[-1]

    monkeypatch.setattr(serving.subprocess, "Popen", recorded)
    port = live.free_port()
    outcome: list[int] = []
    thread = threading.Thread(
        target=lambda: outcome.append(
            serving.serve_board(
                db, port=port, address="127.0.0.1", run_baselines=True, log=logs.append
            )
        )
    )
    thread.start()
    try:
        _wait(lambda: any("predicting" in line for line in logs), "the baseline to start")
        # the server answers while the model baseline is still running, and its board says so
        assert httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=5).text == "ok"
        assert [(p.task, p.split, p.model) for p in queries.pending(db)] == [
            ("openpi", "test", STAND_IN)
        ]
        assert STAND_IN not in set(queries.board(db, "openpi", "test")["model"].to_list())
        notes = _computing_notes(db, monkeypatch)
        assert len(notes) == 1 and ui.escape(STAND_IN) in notes[0], (
            notes
        )  # markdown-escaped like any stored text
        release.set()
        _wait(lambda: any("done in" in line for line in logs), "the baseline to be stored")
        assert queries.pending(db) == []
        assert STAND_IN in set(queries.board(db, "openpi", "test")["model"].to_list())
        assert _computing_notes(db, monkeypatch) == []
    finally:
        release.set()
        for server in servers:
            server.terminate()
        thread.join(60)
    assert outcome and not thread.is_alive()


def test_a_failed_model_baseline_leaves_no_computing_mark(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    db = build_openpi_sample_store(tmp_path_factory, "failed-baseline")
    spec, runner = load_task("openpi")

    def broken(given: baselines.BaselineInput, out: Path) -> Path:
        """A model baseline whose model cannot load."""
        raise RuntimeError("the model's weights are not installed")

    job = demo.NeuralJob(
        spec,
        runner,
        "test",
        baselines.Baseline("broken", ("openpi",), "broken", "jsonl", broken, heavy=True),
    )
    logs: list[str] = []
    stored = demo.run_neural_jobs(
        db, SAMPLE_DATA_ROOT, [job], log=logs.append, cache_dir=tmp_path_factory.mktemp("cache")
    )
    assert stored == 0 and queries.pending(db) == []
    assert any("not run: the model's weights are not installed" in line for line in logs)
