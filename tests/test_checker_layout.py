"""The checker stays split by stage (issue #32.6): no module of it over 800 lines, no function over 80, none more
complex than 15 (ruff's mccabe), and ``procbench.dsl.checker`` still the one entry point callers import.

Measured on the source with ``ast`` (lines from a definition's first line to its last, decorators aside) and with
ruff's C901 run as a subprocess, so that a function growing back past a limit fails here, naming it.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

DSL = Path(__file__).resolve().parents[1] / "dsl"
MODULE_LINES = 800
FUNCTION_LINES = 80
COMPLEXITY = 15


def _checker_modules() -> list[Path]:
    return sorted([DSL / "checker.py", *DSL.glob("checker_*.py")])


def test_the_checker_is_split_into_modules_of_one_stage() -> None:
    names = {p.stem for p in _checker_modules()}
    # expansion, the readers of each block, resolution, measures, the types between fields
    assert {
        "checker",
        "checker_state",
        "checker_expand",
        "checker_read_data",
        "checker_read_similarity",
        "checker_read_score",
        "checker_read_report",
        "checker_resolve",
        "checker_measures",
        "checker_fields",
    } <= names


@pytest.mark.parametrize("path", _checker_modules(), ids=lambda p: p.name)
def test_no_checker_module_or_function_is_too_long(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= MODULE_LINES, f"{path.name} has over {MODULE_LINES} lines"
    long = [
        f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > FUNCTION_LINES
    ]
    assert not long, f"{path.name}: functions over {FUNCTION_LINES} lines: {long}"


def test_no_checker_function_is_too_complex() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed in this environment")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--select",
            "C901",
            "--config",
            f"lint.mccabe.max-complexity={COMPLEXITY}",
            "--output-format",
            "concise",
            *map(str, _checker_modules()),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_callers_still_import_the_checker_from_one_module() -> None:
    from procbench.dsl import check_file as from_package
    from procbench.dsl import checker

    assert from_package is checker.check_file
    for name in ("CheckResult", "check_file", "check_text", "REPORTED_SUFFIX", "literal"):
        assert hasattr(checker, name), name
