"""docs/architecture.md's change recipes run: each is applied to a copy of the checkout, exactly as written.

A recipe is a sequence of blocks, each marked ``<!-- recipe NAME: ... -->``: ``new PATH`` (a new file, whole),
``after "LINE" in PATH`` (lines inserted after the one line of PATH that reads LINE) and ``run`` (commands, run
in the copy with this interpreter). After its generating commands, the files that differ from the checkout
must be exactly the files the recipe's blocks name (at most three) plus generated ones; then its tests run in
the copy, on the copy's code (``PYTHONPATH``), so a recipe that no longer fits the code fails here.
"""

from __future__ import annotations

import filecmp
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from procbench.paths import INSTALLED, PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "architecture.md"
BLOCK = re.compile(
    r'<!-- recipe (\w+): (?:new (\S+)|after "([^\n]*)" in (\S+)|(run)) -->\n```[a-z]*\n(.*?)```',
    re.S,
)
# Written by `make docs` (docs/language.md's references, the registry's index): regenerated, never hand-edited.
GENERATED = {"docs/language.md", "runners/runtime/_component_index.py"}
# Not part of the checkout: caches, the virtual environment, what runs write.
SKIP = {".git", ".venv", "var", "build", ".agent", ".mypy_cache", ".hypothesis", ".pytest_cache"}
SKIP_SUFFIXES = (".egg-info", "_cache", "__pycache__", ".pyc", ".duckdb", ".duckdb.wal")
MAX_HAND_EDITED = 3

pytestmark = pytest.mark.skipif(INSTALLED, reason="the recipes edit a checkout")


@dataclass
class Recipe:
    name: str
    new: dict[str, str] = field(default_factory=dict)
    inserts: list[tuple[str, str, str]] = field(default_factory=list)  # (path, anchor line, text)
    commands: list[str] = field(default_factory=list)

    @property
    def paths(self) -> set[str]:
        return set(self.new) | {path for path, _, _ in self.inserts}


def recipes() -> dict[str, Recipe]:
    found: dict[str, Recipe] = {}
    for name, new, anchor, path, run, body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        recipe = found.setdefault(name, Recipe(name))
        if new:
            recipe.new[new] = body
        elif run:
            recipe.commands += [line for line in body.splitlines() if line.strip()]
        else:
            recipe.inserts.append((path, anchor, body))
    return found


def _ignored(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in SKIP or n.endswith(SKIP_SUFFIXES)}


def apply(recipe: Recipe, root: Path) -> None:
    for path, text in recipe.new.items():
        target = root / path
        assert not target.exists(), f"{path} already exists: the recipe adds it"
        target.write_text(text, encoding="utf-8")
    for path, anchor, text in recipe.inserts:
        target = root / path
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        where = [i for i, line in enumerate(lines) if line.rstrip("\n") == anchor]
        assert len(where) == 1, f"{path}: the line {anchor!r} occurs {len(where)} times, not once"
        lines[where[0] + 1 : where[0] + 1] = [text]
        target.write_text("".join(lines), encoding="utf-8")


def changed(root: Path) -> set[str]:
    """Files of the copy that are new or differ from the checkout's."""
    out = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _ignored(folder, dirs)]
        for name in set(files) - _ignored(folder, files):
            copy = Path(folder) / name
            if copy.is_symlink():
                continue
            relative = copy.relative_to(root).as_posix()
            original = PROJECT_ROOT / relative
            if not original.is_file() or not filecmp.cmp(copy, original, shallow=False):
                out.add(relative)
    return out


def run(command: str, root: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[0] == "python", command
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    env |= {
        "PYTHONPATH": str(root),  # the copy's procbench, in this process's children and theirs
        "PROCBENCH_CACHE_DIR": str(root / "var" / "cache" / "specs"),
        "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "dev"),
    }
    return subprocess.run(
        [sys.executable, *words[1:]],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_doc_has_the_three_recipes_each_with_a_command() -> None:
    found = recipes()
    assert sorted(found) == ["attr", "metric", "page"]
    assert all(r.commands for r in found.values())


@pytest.mark.parametrize("name", ["metric", "attr", "page"])
def test_a_recipe_touches_only_its_files_and_its_tests_pass(name: str, tmp_path: Path) -> None:
    recipe = recipes()[name]
    root = tmp_path / "checkout"
    shutil.copytree(PROJECT_ROOT, root, symlinks=True, ignore=_ignored)
    apply(recipe, root)
    tests = [c for c in recipe.commands if " pytest " in f" {c} "]
    for command in [c for c in recipe.commands if c not in tests]:
        done = run(command, root)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    touched = changed(root)
    hand = touched - GENERATED
    assert hand == recipe.paths, (
        f"the recipe changed {sorted(hand)}; its blocks name {sorted(recipe.paths)}"
    )
    assert len(hand) <= MAX_HAND_EDITED
    ruff = Path(sys.executable).with_name("ruff")
    if ruff.exists():  # the recipe's code passes `make lint`'s ruff as written
        for check in (["check"], ["format", "--check"]):
            done = subprocess.run(
                [str(ruff), *check, *sorted(hand)], cwd=root, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stdout[-2000:]
    for command in tests:
        done = run(
            command + " -o addopts=", root
        )  # pytest's summary line, which -q -q (addopts) leaves out
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-2000:])
        summary = done.stdout.strip().splitlines()[-1]
        assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
