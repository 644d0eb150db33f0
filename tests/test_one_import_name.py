"""One import name (issue #32, D1 and D2): the project's code, tests and docs import ``procbench.*`` only.

The repository keeps its top-level folders (``dsl/``, ``runners/``, ``submissions/``, ``leaderboard/``,
``bench/``, and the data folders); ``procbench/`` holds a link to each, so the checkout and an installed
wheel import the same names.  Only tests/parity/ (frozen) still spells the old names, through the aliases of
tests/legacy_names.py, which make them the same module objects.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from procbench.paths import INSTALLED, PROJECT_ROOT

OLD = ("dsl", "runners", "submissions", "leaderboard", "bench")
LINKED = (*OLD, "specs", "schema", "samples")
FROZEN = (
    "tests/parity/",
    "tests/legacy_names.py",
    "tests/test_one_import_name.py",
)  # the old names, on purpose


def _tracked(pattern: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", pattern], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        PROJECT_ROOT / name
        for name in listed
        if not name.startswith(FROZEN) and (PROJECT_ROOT / name).is_file()
    ]


# `from runners import registry` / `import dsl, json` inside a string: a script a test or the bench runs
_SCRIPT = re.compile(
    r"(?m)^\s*(?:from\s+(?:%s)[.\s]|import\s+(?:%s)\b)" % ("|".join(OLD), "|".join(OLD))
)


def _names_old(head: ast.expr) -> bool:
    pattern = r"(%s)\.[\w.]*" % "|".join(OLD)
    return (
        isinstance(head, ast.Constant)
        and isinstance(head.value, str)
        and bool(re.fullmatch(pattern, head.value))
    )


def _old_imports(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.partition(".")[0] in OLD]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.partition(".")[0] in OLD
        ):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.JoinedStr) and node.values and _names_old(node.values[0]):
            found.append(
                (node.lineno, "f-string")
            )  # f"submissions.{name}_engine": a module named at run time
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _SCRIPT.search(node.value)
        ):
            found.append((node.lineno, "a script's import"))  # code in a string, run by `python -c`
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"(%s)(\.[a-z_]\w*)+" % "|".join(OLD), node.value)
        ):
            module = PROJECT_ROOT.joinpath(*node.value.split("."))
            if (
                module.with_suffix(".py").is_file() or (module / "__init__.py").is_file()
            ):  # a module named by a string
                found.append((node.lineno, node.value))
    return found


def test_the_checkout_links_each_top_level_folder_into_procbench() -> None:
    assert not INSTALLED
    for name in LINKED:
        link = PROJECT_ROOT / "procbench" / name
        assert link.is_symlink() and os.readlink(link) == f"../{name}", name


def test_no_code_or_test_imports_a_top_level_name() -> None:
    offenders = [
        f"{path.relative_to(PROJECT_ROOT)}:{line}: {name}"
        for path in _tracked("*.py")
        for line, name in _old_imports(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_no_doc_or_config_names_a_module_by_its_top_level_name() -> None:
    # `from runners.runtime.registry import ...`, `python -m dsl.reference`, entry points "= runners.library.generic"
    pattern = re.compile(r"(?:\bfrom |\bimport |-m |= ?\"?)(%s)\.[a-z_]" % "|".join(OLD))
    offenders = []
    for path in [
        *_tracked("*.md"),
        *_tracked("*.toml"),
        PROJECT_ROOT / "Makefile",
        PROJECT_ROOT / ".ci" / "run",
    ]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_outside_the_checkout_only_procbench_imports(tmp_path: Path) -> None:
    """The editable install (what `make setup` does) exposes `procbench` and nothing else of the checkout."""
    script = (
        "import importlib\nfor name in %r:\n    try:\n        importlib.import_module(name); print(name, 'found')\n"
        "    except ModuleNotFoundError:\n        print(name, 'missing')\n" % (OLD,)
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split("\n")[:-1] == [f"{name} missing" for name in OLD]
    found = subprocess.run(
        [sys.executable, "-c", "import procbench.runners.runtime.registry as r; print(r.__name__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert found.stdout.strip() == "procbench.runners.runtime.registry"


@pytest.mark.parametrize("old", ["runners.runtime.registry", "dsl.checker"])
def test_the_frozen_parity_tests_old_names_are_the_same_modules(old: str) -> None:
    import importlib

    assert importlib.import_module(old) is importlib.import_module("procbench." + old)
