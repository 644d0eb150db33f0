"""``procbench export eval-results``: the Hub's ``.eval_results/*.yaml`` files, read back with huggingface_hub's own parser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from huggingface_hub import eval_result_entries_to_yaml, parse_eval_result_entries
from typer.testing import CliRunner

from procbench.leaderboard import sitedata
from procbench import cli
from tests.site_app import build_demo_store

runner = CliRunner()

# The documented fields of an entry (https://huggingface.co/docs/hub/eval-results; huggingface_hub.EvalResultEntry).
DATASET_KEYS = {"id", "task_id", "revision"}
ENTRY_KEYS = {"dataset", "value", "verifyToken", "date", "source", "notes"}
SOURCE_KEYS = {"url", "name", "user", "org"}


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "eval-results-demo")


def export(db: Path, out: Path, *args: str) -> Any:
    return runner.invoke(
        cli.app, ["export", "eval-results", "--db", str(db), "--out", str(out), *args]
    )


def read_all(out: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(model folder, file stem) -> the file's entries, each checked against the Hub's schema and parser."""
    found = {}
    for path in sorted(out.glob("*/.eval_results/*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(data, list) and data
        for entry in data:
            assert set(entry) <= ENTRY_KEYS and {"dataset", "value"} <= set(entry)
            assert set(entry["dataset"]) <= DATASET_KEYS and {"id", "task_id"} <= set(
                entry["dataset"]
            )
            assert isinstance(entry["value"], float)
            if "source" in entry:
                assert set(entry["source"]) <= SOURCE_KEYS and "url" in entry["source"]
        parsed = parse_eval_result_entries(data)  # the Hub library's own reader of these files
        assert (
            len(parsed) == len(data) and eval_result_entries_to_yaml(parsed) == data
        )  # nothing it does not know
        found[(path.parent.parent.name, path.stem)] = data
    return found


def board_values(db: Path, task: str, split: str) -> dict[str, float]:
    rows = sitedata.submissions_of(db, task, split)
    return {
        r["model"]: r["primary_value"]
        for r in rows.iter_rows(named=True)
        if r["primary_value"] is not None
    }


def test_every_ranked_row_is_exported_with_the_boards_value(demo_db: Path, tmp_path: Path) -> None:
    result = export(demo_db, tmp_path)
    assert result.exit_code == 0, result.output
    files = read_all(tmp_path)
    expected = board_values(demo_db, "openpi", "test")
    assert expected
    for model, value in expected.items():
        (entry,) = files[(model, "openpi")]
        assert entry["dataset"] == {
            "id": "procbench/openpi",
            "task_id": "openpi",
        }  # no Hub dataset in OpenPI's spec: the placeholder
        assert (
            entry["value"] == value and "source" not in entry
        )  # no board address given: no source
        assert "openpi / test" in entry["notes"] and "rouge_f1" in entry["notes"]
    paged = board_values(demo_db, "paged", "dev")
    assert all(
        files[(m, "paged")][0]["dataset"]["task_id"] == "paged-dev" for m in paged
    )  # a split other than test/main


def test_model_prefix_and_source_options(demo_db: Path, tmp_path: Path) -> None:
    model = next(iter(board_values(demo_db, "openpi", "test")))
    result = export(
        demo_db,
        tmp_path,
        "--model",
        model,
        "--dataset-prefix",
        "my-org",
        "--source-url",
        "https://example.org/board",
    )
    assert result.exit_code == 0, result.output
    files = read_all(tmp_path)
    assert {folder for folder, _ in files} == {model}
    entry = files[(model, "openpi")][0]
    assert entry["dataset"]["id"] == "my-org/openpi"
    assert entry["source"] == {"url": "https://example.org/board", "name": "procbench leaderboard"}


def test_errors(demo_db: Path, tmp_path: Path) -> None:
    missing = export(demo_db, tmp_path, "--model", "no such model")
    assert (
        missing.exit_code == 4
        and missing.stderr.strip().count("\n") == 0
        and "no ranked row" in missing.stderr
    )
    absent = export(tmp_path / "absent.duckdb", tmp_path)
    assert absent.exit_code == 4 and "no database" in absent.stderr


def test_real_board_names_the_hub_dataset_and_marks_paper_rows(
    data_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from procbench.demo import build_board
    from procbench.api import load_task

    db = tmp_path_factory.mktemp("eval-results-real") / "real.duckdb"
    assert build_board(db, data_root=data_root, log=lambda _: None) > 10
    out = tmp_path_factory.mktemp("eval-results-out")
    assert export(db, out).exit_code == 0
    files = read_all(out)
    spec, _ = load_task("paradise-tip")
    hub = next(
        f for f in spec.fetch if f.hub_repo and "test" in f.splits
    )  # the spec's fetch block on the Hub
    tip = [e for (_, stem), entries in files.items() if stem == "paradise-tip" for e in entries]
    assert tip and all(
        e["dataset"] == {"id": hub.hub_repo, "task_id": "paradise-tip", "revision": hub.revision}
        for e in tip
    )
    rows = sitedata.submissions_of(db, "paradise-tip", "test")
    papers = {
        r["model"]
        for r in rows.iter_rows(named=True)
        if r["is_reference"] and r["primary_value"] is not None
    }
    submitted = {
        r["model"]
        for r in rows.iter_rows(named=True)
        if not r["is_reference"] and r["primary_value"] is not None
    }
    assert papers and submitted
    paper_entries = [e for e in tip if "reported in the literature" in e["notes"]]
    assert len(paper_entries) == len(
        [
            r
            for r in rows.iter_rows(named=True)
            if r["is_reference"] and r["primary_value"] is not None
        ]
    )
    assert all(
        e["source"]["name"].startswith("Paper: ") and e["source"]["url"].startswith("https://")
        for e in paper_entries
    )
    assert all(
        "source" not in e for e in tip if e not in paper_entries
    )  # submitted rows: no board address given
