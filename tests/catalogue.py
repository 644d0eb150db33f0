"""What the catalogue's tests share (docs/pure-spec-tasks.md): its files extracted once per module, a task scored
through the CLI as a reader of the guide would score it, and the check every spec of the guide must pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import PROJECT_ROOT
from tests.doc_files import extract

DOC = PROJECT_ROOT / "docs" / "pure-spec-tasks.md"
Guide = tuple[Path, dict[str, str]]


def extracted(tmp_path_factory: pytest.TempPathFactory, name: str) -> Guide:
    """The guide's files under a fresh temporary folder, and its expected blocks by name."""
    root = tmp_path_factory.mktemp(name)
    return root, extract(DOC, root)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def score(root: Path, task: str, predictions: Path | None = None) -> tuple[int, str]:
    """``procbench score <task spec> --split test --json`` on the guide's data: the exit code and stdout (the output on failure)."""
    spec = root / "specs" / f"{task}.spec"
    predicted = predictions or next(
        (root / "predictions").glob(f"{task}.*")
    )  # the guide's one prediction file of the task
    args = [
        "score",
        str(spec),
        "--split",
        "test",
        "--predictions",
        str(predicted),
        "--data-dir",
        str(root / "data"),
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


def scored(root: Path, task: str, predictions: Path | None = None) -> dict[str, Any]:
    """The score JSON of a run that must succeed."""
    code, out = score(root, task, predictions)
    assert code == 0, out
    return json.loads(out)


def assert_checks_and_is_formatted(root: Path, task: str) -> None:
    """``check --data`` passes against the guide's data and ``fmt --check`` finds the spec canonical."""
    spec = root / "specs" / f"{task}.spec"
    checked = CliRunner().invoke(
        app, ["check", str(spec), "--data", "--data-dir", str(root / "data")]
    )
    assert checked.exit_code == 0, checked.output
    formatted = CliRunner().invoke(app, ["fmt", "--check", str(spec)])
    assert formatted.exit_code == 0, formatted.output
