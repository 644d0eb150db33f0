"""Issue #33: every documented example runs — each python block of docs/ecosystem.md, of an exported ``evaluate``
module's card and of the hub dataset's card — offline, each in a fresh interpreter, from a folder other than the
module's parent (the module is loaded by path)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from procbench.export.evaluate_module import write_module
from procbench.export.hub_dataset import write_dataset
from tests.site_app import build_openpi_sample_store

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}


def blocks(text: str) -> list[str]:
    return PYTHON_BLOCK.findall(text)


def run(code: str, cwd: Path, tmp: Path) -> str:
    """Run ``code`` in a fresh interpreter in ``cwd``; it must exit 0."""
    env = {**os.environ, **OFFLINE, "HF_HOME": str(tmp / "hf-home"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def openpi_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_openpi_sample_store(tmp_path_factory, "ecosystem-examples")


def test_every_python_block_of_the_ecosystem_guide_runs(
    tmp_path: Path, openpi_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = blocks((ROOT / "docs" / "ecosystem.md").read_text(encoding="utf-8"))
    assert len(found) >= 2
    # what the guide's shell steps made: `procbench export evaluate paradise-tip metrics/` and a store at var/procbench.duckdb
    monkeypatch.chdir(tmp_path)
    write_module("paradise-tip", Path("metrics"))
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "procbench.duckdb").write_bytes(openpi_store.read_bytes())
    with duckdb.connect(str(openpi_store), read_only=True) as con:
        sids = [
            r[0]
            for r in con.execute(
                "SELECT submission_id FROM submissions WHERE NOT is_reference ORDER BY model"
            ).fetchall()
        ]
    assert len(sids) >= 2
    prelude = f"sid_a, sid_b = {sids[0]!r}, {sids[1]!r}\n"  # the ids a reader pastes
    for code in found:
        run(prelude + code + "\nprint('ok')\n", tmp_path, tmp_path)


@pytest.mark.parametrize("task", ["paradise-tip", "openpi", "paged"])
def test_the_module_cards_example_runs_from_where_it_was_exported(
    task: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    module = write_module(task, Path("out") / "metrics")  # a relative path, as a user types it
    assert (
        module.folder.parent.resolve() != tmp_path
    )  # run from a folder other than the module's parent
    card = module.readme.read_text(encoding="utf-8")
    assert f'evaluate.load("out/metrics/{task}")' in card
    (code,) = blocks(card)
    printed = run(code, tmp_path, tmp_path).split()
    assert (
        len(printed) == 2 and int(printed[1]) > 0
    )  # the primary metric and the sample split's items


def test_the_module_loads_by_absolute_path_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    module = write_module("paradise-tip", Path("metrics"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "import evaluate\nfrom procbench.paths import SAMPLE_DATA_ROOT\n"
        f"metric = evaluate.load({str(module.folder.resolve())!r})\n"
        "print(metric.compute(predictions=[0] * 8, references=list(range(8)), split='test', data_dir=SAMPLE_DATA_ROOT)['n_items'])\n"
    )
    assert run(code, elsewhere, tmp_path).strip() == "8"


def test_the_hub_cards_examples_run_against_the_splits_exported(
    tmp_path: Path, openpi_store: Path
) -> None:
    folder = tmp_path / "board"
    write_dataset(openpi_store, folder)
    card = (folder / "README.md").read_text(encoding="utf-8")
    found = blocks(card)
    assert found and any("details_" in code for code in found)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for code in found:
        out = run(code.replace("<this repo>", str(folder)) + "\nprint('ok')\n", elsewhere, tmp_path)
        assert out.strip().endswith("ok")
