"""``procbench export evaluate``: the module loads with ``evaluate.load(DIR)`` and gives ``procbench score``'s numbers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.export.evaluate_module import class_name, module_folder, write_module
from procbench.export.evaluate_runtime import compute, prediction_lines
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime._types import InvalidPredictions

# Only looked up, not imported: `evaluate` pulls in datasets/pandas, and the modules run in a subprocess anyway.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("evaluate") is None, reason="the `evaluate` package is not installed"
)

# (task, split, prediction file): one task per kind of input the modules take
CASES = [
    (
        "paradise-tip",
        "test",
        SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-middling.csv",
    ),  # option indices
    (
        "openpi",
        "test",
        SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl",
    ),  # lists of texts
    (
        "propara-naacl18",
        "test",
        SAMPLE_SUBMISSIONS_DIR / "propara-naacl18" / "noisy-grid.tsv",
    ),  # raw prediction-file lines
]


def _inputs(task: str, path: Path) -> tuple[list, list]:
    """In-memory predictions and references, as a user of the module would hold them."""
    if path.suffix == ".csv":
        rows = [line.split(",") for line in path.read_text().splitlines()[1:] if line.strip()]
        return [int(label) for _, label in rows], [int(i) for i, _ in rows]
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [r["answers"] for r in records], [r["id"] for r in records]
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return lines, [""] * len(lines)


def test_modules_loaded_by_evaluate_give_procbench_score_numbers(tmp_path: Path) -> None:
    calls = []
    for task, split, path in CASES:
        result = CliRunner().invoke(app, ["export", "evaluate", task, str(tmp_path / "modules")])
        assert result.exit_code == 0, result.output
        folder = tmp_path / "modules" / task
        assert (folder / f"{task}.py").is_file() and (folder / "README.md").is_file()
        predictions, references = _inputs(task, path)
        calls.append(
            {
                "folder": str(folder),
                "predictions": predictions,
                "references": references,
                "split": split,
            }
        )
    script = (
        "import json, sys, evaluate\n"
        "out = []\n"
        "for call in json.loads(sys.stdin.read()):\n"
        "    metric = evaluate.load(call['folder'])\n"
        "    out.append(metric.compute(predictions=call['predictions'], references=call['references'], split=call['split'], data_dir=sys.argv[1]))\n"
        "print(json.dumps(out))\n"
    )
    env = {
        **os.environ,
        "HF_MODULES_CACHE": str(tmp_path / "hf-modules"),
        "HF_HUB_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    run = subprocess.run(
        [sys.executable, "-c", script, str(SAMPLE_DATA_ROOT)],
        input=json.dumps(calls),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    via_evaluate = json.loads(run.stdout.strip().splitlines()[-1])

    for (task, split, path), got in zip(CASES, via_evaluate):
        cli = CliRunner().invoke(
            app,
            [
                "score",
                task,
                "--split",
                split,
                "--predictions",
                str(path),
                "--data-dir",
                str(SAMPLE_DATA_ROOT),
                "--json",
            ],
        )
        expected = json.loads(cli.stdout)
        assert {k: got[k] for k in expected["metrics"]} == expected["metrics"], task
        assert got["slices"] == expected["slices"] and got["n_items"] == expected["n_items"], task
        if (
            task != "propara-naacl18"
        ):  # its gold fingerprint varies between processes (frozenset order): reported to the lead
            assert got["fingerprint"] == expected["fingerprint"], task


def test_invalid_predictions_are_refused_as_procbench_score_refuses_them() -> None:
    with pytest.raises(InvalidPredictions, match="label must be an integer 0-3, got 7"):
        compute("paradise-tip", [7, 0], [0, 1], split="test", data_dir=SAMPLE_DATA_ROOT)
    with pytest.raises(ValueError, match="pass split="):
        compute("paradise-tip", [0], [0], split=None, data_dir=SAMPLE_DATA_ROOT)
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        prediction_lines("openpi", [["a"], ["b"]], ["x"])


def test_a_changed_spec_is_flagged() -> None:
    predictions, references = _inputs("paradise-tip", CASES[0][2])
    with pytest.warns(UserWarning, match="spec of 'paradise-tip' changed"):
        result = compute(
            "paradise-tip",
            predictions,
            references,
            split="test",
            data_dir=SAMPLE_DATA_ROOT,
            spec_digest="0" * 64,
        )
    assert result["n_items"] == len(references)


def test_module_names_and_folders() -> None:
    assert (
        class_name("paradise-reverse-tip") == "ParadiseReverseTip" and class_name("3x") == "Task3x"
    )
    assert module_folder("openpi", Path("out/openpi")) == Path("out/openpi")
    assert module_folder("openpi", Path("out")) == Path("out/openpi")


def test_the_module_source_is_valid_python_naming_the_spec(tmp_path: Path) -> None:
    module = write_module("openpi-head", tmp_path / "openpi-head")
    assert module.folder == tmp_path / "openpi-head"
    source = module.script.read_text()
    compile(source, str(module.script), "exec")
    assert "TASK = 'openpi-head'" in source and "class OpenpiHead(evaluate.Metric)" in source
    card = module.readme.read_text()
    assert card.startswith("---\ntitle:") and "procbench score openpi-head" in card
    assert str(PROJECT_ROOT) not in source  # nothing machine-specific in the module
