"""docs/adding-a-benchmark.md is executable: its files are extracted and its commands run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import PROJECT_ROOT
from tests.doc_files import extract

DOC = PROJECT_ROOT / "docs" / "adding-a-benchmark.md"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("toolproc")
    return root, extract(DOC, root)


def test_the_example_spec_checks_formats_and_fits_its_data(
    workspace: tuple[Path, dict[str, str]],
) -> None:
    root, _ = workspace
    spec = root / "specs" / "toolproc.spec"
    runner = CliRunner()
    checked = runner.invoke(app, ["check", str(spec), "--data", "--data-dir", str(root / "data")])
    assert checked.exit_code == 0, checked.output
    assert "data checked: dev" in checked.output
    formatted = runner.invoke(app, ["fmt", "--check", str(spec)])
    assert formatted.exit_code == 0, formatted.output


def test_the_documented_scores_are_what_procbench_prints(
    workspace: tuple[Path, dict[str, str]],
) -> None:
    root, expected = workspace
    result = CliRunner().invoke(
        app,
        [
            "score",
            str(root / "specs" / "toolproc.spec"),
            "--split",
            "dev",
            "--predictions",
            str(root / "predictions.jsonl"),
            "--data-dir",
            str(root / "data"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    want = json.loads(expected["score"])
    assert (got["task"], got["split"], got["n_items"]) == (
        want["task"],
        want["split"],
        want["n_items"],
    )
    assert {k: round(v, 6) for k, v in got["metrics"].items()} == want["metrics"]
    assert {v: s["n_items"] for v, s in got["slices"]["domain"].items()} == {
        v: s["n_items"] for v, s in want["slices"]["domain"].items()
    }


def test_the_documented_rejection_is_what_procbench_prints(
    workspace: tuple[Path, dict[str, str]],
) -> None:
    root, _ = workspace
    bad = root / "bad.jsonl"
    bad.write_text(
        '{"id": "pancakes-1", "tools": []}\n{"id": "pancakes-2", "tools": "whisk"}\n{"id": "pancakes-9", "tools": []}\n'
    )
    result = CliRunner().invoke(
        app,
        [
            "score",
            str(root / "specs" / "toolproc.spec"),
            "--split",
            "dev",
            "--predictions",
            str(bad),
            "--data-dir",
            str(root / "data"),
        ],
    )
    assert result.exit_code == 8  # invalid predictions (procbench.exit_codes)
    text = DOC.read_text()
    for line in result.output.strip().splitlines():
        if line.startswith(
            "data root: "
        ):  # where the gold was read: a temporary folder here (the guide says that it is printed)
            continue
        assert line in text, line
