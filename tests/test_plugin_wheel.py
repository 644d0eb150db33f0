"""docs/plugins.md is executable (issue #32): its plugin, built as a wheel and installed beside procbench's
wheel, is found through its entry point and scores the guide's task to scikit-learn's numbers; the same
file allowed as an operator's folder in the checkout gives the same numbers.

Offline, like tests/test_wheel.py (whose ``installed`` fixture this module reuses: procbench's wheel in a
fresh environment outside the checkout): the plugin's wheel is built with this environment's setuptools
(``pip wheel --no-build-isolation --no-deps --no-index``) from the files the guide shows, extracted.  The
oracle is scikit-learn's ``matthews_corrcoef`` over the guide's own data and predictions, read here with a
yes/no reading written independently of the plugin's normaliser.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import matthews_corrcoef

from procbench.paths import PROJECT_ROOT
from tests.doc_files import Command, commands, extract
from tests.test_wheel import installed  # noqa: F401  (procbench's wheel, built and installed once for this module)

DOC = PROJECT_ROOT / "docs" / "plugins.md"
CHECKOUT_PROCBENCH = Path(sys.executable).with_name("procbench")  # this environment's: the checkout
YES = {"y", "yes", "true", "1"}
NO = {"n", "no", "false", "0"}


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("plugin-guide")
    return root, extract(DOC, root)


@pytest.fixture(scope="module")
def with_plugin(
    installed: dict[str, Any],  # noqa: F811
    guide: tuple[Path, dict[str, str]],
) -> dict[str, Any]:
    """procbench's installed wheel with the guide's plugin built as a wheel and installed beside it."""
    root, _ = guide
    source = root / "build-copy"  # the build writes build/ and *.egg-info beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "procbench_binary.py"):
        (source / name).write_bytes((root / "procbench-binary" / name).read_bytes())
    dist = root / "dist"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-build-isolation", "--no-deps", "--no-index", "--quiet"]
        + ["--wheel-dir", str(dist), str(source)],
        check=True,
        timeout=600,
    )
    wheel = next(dist.glob("procbench_binary-*.whl"))
    subprocess.run(
        [*pip, "--python", str(installed["python"]), "install", "--no-index", "--no-deps"]
        + ["--quiet", str(wheel)],
        check=True,
        timeout=600,
    )
    return {**installed, "plugin_wheel": wheel}


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _guide_commands(allowed_folder: bool) -> list[Command]:
    """The guide's run blocks: §4's (the installed plugin) or §5's (the folder an operator allows)."""
    found = [c for c in commands(DOC) if ("--components" in c.argv) == allowed_folder]
    assert found and all(c.argv[0] == "procbench" for c in found)
    return found


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _answer(text: str | None) -> str | None:
    if text is None:
        return None
    word = text.strip().strip(".!").strip().lower()
    return "yes" if word in YES else "no" if word in NO else word


def _oracle(root: Path) -> dict[str, float]:
    """scikit-learn's MCC of "yes" against the rest: the whole split and each room (an unanswered item is not "yes")."""
    gold = _rows(root / "data" / "stepsafe" / "test.jsonl")
    said = {r["id"]: _answer(r["answer"]) for r in _rows(root / "stepsafe" / "predictions.jsonl")}

    def mcc(items: list[dict[str, Any]]) -> float:
        return float(
            matthews_corrcoef(
                [g["safe"] == "yes" for g in items], [said.get(g["id"]) == "yes" for g in items]
            )
        )

    out = {"mcc": mcc(gold)}
    for room in sorted({g["room"] for g in gold}):
        out[f"room={room}"] = mcc([g for g in gold if g["room"] == room])
    return out


def _numbers(scored: dict[str, Any]) -> dict[str, float]:
    out = {"mcc": scored["metrics"]["mcc"]}
    for room, part in scored["slices"]["room"].items():
        out[f"room={room}"] = part["metrics"]["mcc"]
    return out


def _score_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_installed_plugin_scores_the_guides_task_to_scikit_learns_numbers(
    with_plugin: dict[str, Any], guide: tuple[Path, dict[str, str]]
) -> None:
    root, expected = guide
    procbench = str(with_plugin["venv"] / "bin" / "procbench")
    env = dict(with_plugin["env"])
    outputs = []
    for command in _guide_commands(allowed_folder=False):
        done = _run([procbench, *command.argv[1:]], root, env)
        assert done.returncode == command.exit, (command.text, done.stdout, done.stderr)
        outputs.append((command, done))
    listed = next(d for c, d in outputs if c.argv[1] == "components").stdout
    for line in expected["components"].strip().splitlines():
        assert line in listed.splitlines(), (line, listed)
    checked = next(d for c, d in outputs if c.argv[1] == "check")
    assert "data checked: test" in checked.stdout, checked.stdout
    scored = _score_json(next(d for c, d in outputs if c.argv[1] == "score"))
    oracle = _oracle(root)
    assert _numbers(scored) == pytest.approx(oracle, abs=1e-12)
    assert oracle["mcc"] == pytest.approx(10 / math.sqrt(600), abs=1e-12)  # the guide's sum by hand
    shown = json.loads(expected["score"])
    assert (scored["task"], scored["split"], scored["n_items"]) == (
        shown["task"],
        shown["split"],
        shown["n_items"],
    )
    assert _numbers(scored) == pytest.approx(_numbers(shown), abs=1e-6)


def test_the_plugin_comes_from_its_entry_point_in_the_installed_environment(
    with_plugin: dict[str, Any],
) -> None:
    """Found through the group procbench.components (not a path: the current folder holds no plugin), where no
    top-level ``runners`` exists for the old import form to name; the plugin's own tests pass there."""
    probe = (
        "import importlib.util, json\n"
        "from procbench.ext import get, names\n"
        "print(json.dumps({'origin': get('metric', 'mcc').origin, 'normaliser': get('normaliser', 'yes_no').origin,"
        " 'runners': importlib.util.find_spec('runners') is not None, 'file': __import__('procbench_binary').__file__}))"
    )
    done = _run([str(with_plugin["python"]), "-c", probe], with_plugin["work"], with_plugin["env"])
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["origin"] == seen["normaliser"] == "entry point procbench-binary:binary"
    assert not seen["runners"]
    assert Path(seen["file"]).parent == Path(with_plugin["site"])


def test_the_plugins_own_tests_pass_where_it_is_installed(
    with_plugin: dict[str, Any], guide: tuple[Path, dict[str, str]]
) -> None:
    root, _ = guide
    done = _run(
        [str(with_plugin["python"]), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + [str(root / "procbench-binary" / "tests")],
        root,
        with_plugin["env"],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def _checkout_env() -> dict[str, str]:
    """The checkout's environment, without the plugin installed and with no folder allowed yet."""
    env = {k: v for k, v in os.environ.items() if k not in ("PROCBENCH_COMPONENTS", "PYTHONPATH")}
    return env


def test_the_same_file_from_an_allowed_folder_gives_the_same_numbers_in_the_checkout(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, expected = guide
    env = _checkout_env()
    refused = _run(
        [str(CHECKOUT_PROCBENCH), "check", "stepsafe/stepsafe.spec", "--data-dir", "data"],
        root,
        env,
    )
    assert refused.returncode == 3 and "unknown metric 'mcc'" in refused.stdout + refused.stderr
    outputs = {}
    for command in _guide_commands(allowed_folder=True):
        done = _run([str(CHECKOUT_PROCBENCH), *command.argv[1:]], root, env)
        assert done.returncode == command.exit, (command.text, done.stdout, done.stderr)
        outputs[command.argv[1]] = done
    assert f"code: {root / 'procbench-binary' / 'procbench_binary.py'}" in outputs["check"].stdout
    scored = _score_json(outputs["score"])
    assert _numbers(scored) == pytest.approx(_oracle(root), abs=1e-12)
    assert _numbers(scored) == pytest.approx(_numbers(json.loads(expected["score"])), abs=1e-6)
