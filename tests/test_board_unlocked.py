"""A task without a data lock gets no lock warning on its board; a locked task scored on other files still does.

A lock (``specs/<task>.lock``) pins the files a spec's ``fetch`` blocks download.  The guide's new task
(docs/adding-a-benchmark.md) has none: its board must not say its "gold files differ from the spec's
data lock", which would be false (there is nothing to differ from).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.leaderboard import queries
from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from tests.doc_files import extract
from tests.site_app import page

LOCK_WARNING = "differ from the spec's data lock"


def _submit(spec: str, split: str, predictions: Path, data: Path, db: Path) -> None:
    args = [
        "submit",
        spec,
        "--split",
        split,
        "--predictions",
        str(predictions),
        "--data-dir",
        str(data),
        "--model",
        "m",
        "--team",
        "me",
        "--db",
        str(db),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def _warnings(db: Path, monkeypatch: pytest.MonkeyPatch, task: str, split: str) -> list[str]:
    at = page(db, monkeypatch, "board", task=task, split=split)
    assert at.dataframe, "the board shows no table"
    return [w.value for w in at.warning]


def test_a_task_without_a_lock_shows_no_lock_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guide = tmp_path / "guide"
    extract(PROJECT_ROOT / "docs" / "adding-a-benchmark.md", guide)
    db = tmp_path / "store.duckdb"
    _submit(
        str(guide / "specs" / "toolproc.spec"),
        "dev",
        guide / "predictions.jsonl",
        guide / "data",
        db,
    )

    board = queries.board_provenance(db, "toolproc", "dev")
    assert board is not None and board.data_kind == "unlocked" and board.gold_items == 6
    assert board.caveat == "" and "no data lock" in board.label
    assert not any(LOCK_WARNING in w for w in _warnings(db, monkeypatch, "toolproc", "dev"))


def test_a_locked_task_scored_on_other_files_still_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    shutil.copytree(
        SAMPLE_DATA_ROOT / "openpi", data / "openpi"
    )  # the samples' items, but not the sample root: not the locked files
    db = tmp_path / "store.duckdb"
    _submit(
        "openpi", "test", SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl", data, db
    )

    board = queries.board_provenance(db, "openpi", "test")
    assert board is not None and board.data_kind == "unverified" and LOCK_WARNING in board.caveat
    assert any(LOCK_WARNING in w for w in _warnings(db, monkeypatch, "openpi", "test"))
