"""Helpers shared by the site tests: the stores they build once per module, the app under AppTest, a task's board description."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from procbench.leaderboard import sitedata
from procbench.leaderboard.model import TaskInfo
from procbench.api import load_task
from procbench.demo import build_demo
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, load_reported, submit

APP = str(PROJECT_ROOT / "leaderboard" / "app.py")


_DEMO_TEMPLATE: list[
    Path
] = []  # this process's demo store, built once (a pytest-xdist worker is a process)


def build_demo_store(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A demo store (its more than 20 submissions) in a fresh temporary folder.

    The demo is built once per process and each caller gets its own copy (the store and every file beside it:
    raw files, inputs, caches), so a module that writes changes no other module's store; fourteen modules
    building the same demo through intake cost CI about a minute.
    """
    if not _DEMO_TEMPLATE:
        template = tmp_path_factory.mktemp("demo-template") / "demo.duckdb"
        assert build_demo(template, log=lambda _: None) > 20
        _DEMO_TEMPLATE.append(template)
    template = _DEMO_TEMPLATE[0]
    folder = tmp_path_factory.mktemp(name)
    for part in template.parent.iterdir():
        if part.name.startswith(template.name) and not part.name.endswith(".lock"):
            target = folder / part.name
            if part.is_dir():
                shutil.copytree(part, target)
            else:
                shutil.copy2(part, target)
    return folder / template.name


def build_openpi_sample_store(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A store holding every bundled OpenPI sample submission on the sample test split, with the papers' rows loaded."""
    path = tmp_path_factory.mktemp(name) / "board.duckdb"
    spec, runner = load_task("openpi")
    for sample in sorted((SAMPLE_SUBMISSIONS_DIR / "openpi").glob("*.jsonl")):
        submit(
            SubmissionRequest(split="test", predictions=sample, model=sample.stem, team="demo"),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=path,
        )
    load_reported(spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=path)
    return path


def private_copy(store: Path, folder: Path) -> Path:
    """A copy of ``store`` (and its raw files) in ``folder``, for a test that writes."""
    copy = folder / "site.duckdb"
    shutil.copy(store, copy)
    raw = store.with_name(store.name + ".raw")
    if raw.is_dir():
        shutil.copytree(raw, copy.with_name(copy.name + ".raw"))
    return copy


def page(
    db: Path, monkeypatch: pytest.MonkeyPatch, name: str, **params: str | list[str]
) -> AppTest:
    """Page ``name`` of the app over store ``db`` with these URL parameters, run; it must raise nothing."""
    monkeypatch.setenv("PROCBENCH_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if name != "home":
        at.switch_page(f"site_pages/{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def info_of(db: Path, task: str, split: str) -> TaskInfo:
    """The board's description of ``task`` on ``split`` in store ``db``, read as the site reads it; it must be there."""
    row = sitedata.task_row(db, task, split)
    assert row is not None
    return TaskInfo.from_row(row)
