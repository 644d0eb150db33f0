"""The Streamlit app under AppTest, on a demo store built once per test module (shared by the site tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from procbench.paths import PROJECT_ROOT
from procbench.demo import build_demo

APP = str(PROJECT_ROOT / "leaderboard" / "app.py")


def build_demo_store(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A demo store (its more than 20 submissions) in a fresh temporary folder."""
    path = tmp_path_factory.mktemp(name) / "demo.duckdb"
    assert build_demo(path, log=lambda _: None) > 20
    return path


def private_copy(store: Path, folder: Path) -> Path:
    """A copy of ``store`` (and its raw files) in ``folder``, for a test that writes."""
    copy = folder / "site.duckdb"
    shutil.copy(store, copy)
    raw = store.with_name(store.name + ".raw")
    if raw.is_dir():
        shutil.copytree(raw, copy.with_name(copy.name + ".raw"))
    return copy


def page(db: Path, monkeypatch: pytest.MonkeyPatch, name: str, **params: str | list[str]) -> AppTest:
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
