"""The build backend: setuptools, plus one namespace in the wheel.

In the repository the packages sit side by side at the top (``dsl/``, ``runners/``, ``submissions/``,
``leaderboard/``, ``procbench/``) beside their data (``specs/``, ``schema/``, ``samples/``), and the
code imports ``runners.x``, ``dsl.x``.  Installed, those names would be generic top-level packages in
site-packages, so a wheel holds one package, ``procbench``, with the same layout inside it:

    dsl/ -> procbench/dsl/      runners/ -> procbench/runners/      specs/ -> procbench/specs/   ...

and every absolute import of a moved package, and every string that names one of its modules
(``"runners.generic"`` in the component registry, ``f"submissions.{name}_engine"``), is rewritten to
``procbench.<package>``; the component entry points and ``top_level.txt`` in the metadata too.  Since
the layout is the same, ``runners.paths`` finds the data beside its package in either case.

An editable install (``pip install -e .``, what ``make setup`` does) is left as setuptools makes it:
the checkout keeps importing ``runners.x``.  Only ``build_wheel`` (``pip wheel .``, ``pip install .``,
``python -m build``) and its metadata hook turn the namespace on.

pyproject.toml names this module as the backend (``backend-path = ["build_hooks"]``) and its two
commands in ``[tool.setuptools.cmdclass]``.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (the PEP 517/660 hooks this backend does not change)
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
)
from setuptools.command.build_py import build_py as _build_py
from setuptools.command.egg_info import egg_info as _egg_info

NAMESPACE = "procbench"
MOVED = ("dsl", "runners", "submissions", "leaderboard")  # top-level packages that move under NAMESPACE
DATA = ("specs", "schema", "samples")  # top-level data folders that move under NAMESPACE
FLAG = "PROCBENCH_BUILD_NAMESPACE"  # set while build_wheel / prepare_metadata_for_build_wheel run


@contextlib.contextmanager
def _namespaced() -> Iterator[None]:
    previous = os.environ.get(FLAG)
    os.environ[FLAG] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(FLAG, None)
        else:
            os.environ[FLAG] = previous


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    with _namespaced():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    with _namespaced():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def _active() -> bool:
    return os.environ.get(FLAG) == "1"


# -- rewriting -------------------------------------------------------------------------------------
_NAMED = re.compile(r"^(%s)\." % "|".join(MOVED))  # a string naming a module of a moved package
_QUOTE = re.compile(r"[rRbBuUfF]*('''|\"\"\"|'|\")")
_FROM = re.compile(r"from\s+")


def _moved(name: str | None) -> bool:
    return name is not None and name.partition(".")[0] in MOVED


def rewrite_source(source: str) -> str:
    """``source`` with every absolute import of a moved package, and every string literal that starts
    with ``<moved package>.``, pointed into ``procbench.``.  Relative imports and other text are unchanged."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    inserts: list[tuple[int, int, str]] = []  # (line index, character column, text to insert there)

    def column(lineno: int, byte_offset: int) -> int:  # ast columns count UTF-8 bytes
        return len(lines[lineno - 1].encode("utf-8")[:byte_offset].decode("utf-8"))

    in_fstring: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            in_fstring.update(id(part) for part in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _moved(alias.name):
                    continue
                if alias.asname is None and "." in alias.name:  # binds the top-level name: no one-line equivalent
                    raise ValueError(f"line {alias.lineno}: write `from {alias.name.rpartition('.')[0]} import ...` or `import {alias.name} as ...`")
                inserts.append((alias.lineno - 1, column(alias.lineno, alias.col_offset), NAMESPACE + "."))
                if alias.asname is None:  # `import dsl` binds `dsl`: `import procbench.dsl as dsl`
                    inserts.append((alias.lineno - 1, column(alias.lineno, alias.end_col_offset or 0), f" as {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _moved(node.module):
            start = column(node.lineno, node.col_offset)
            found = _FROM.match(lines[node.lineno - 1], start)
            if found is None:  # `from` and the module on different lines: not written in this project
                raise ValueError(f"line {node.lineno}: cannot rewrite this import")
            inserts.append((node.lineno - 1, found.end(), NAMESPACE + "."))
        elif isinstance(node, (ast.Constant, ast.JoinedStr)) and id(node) not in in_fstring:
            if isinstance(node, ast.JoinedStr):
                first = node.values[0] if node.values else None
                text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
            else:
                text = node.value if isinstance(node.value, str) else ""
            if _NAMED.match(text):
                start = column(node.lineno, node.col_offset)
                quote = _QUOTE.match(lines[node.lineno - 1], start)
                if quote is None:
                    raise ValueError(f"line {node.lineno}: cannot find the string's opening quote")
                inserts.append((node.lineno - 1, quote.end(), NAMESPACE + "."))
    for index, at, text in sorted(set(inserts), reverse=True):
        lines[index] = lines[index][:at] + text + lines[index][at:]
    rewritten = "".join(lines)
    _verify(rewritten)
    return rewritten


def _verify(source: str) -> None:
    """The rewritten module parses and imports no moved package by its top-level name."""
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        bad = [n for n in names if _moved(n)]
        if bad:
            raise ValueError(f"line {node.lineno}: still imports {bad[0]}")


def namespace_tree(build_lib: Path, source_root: Path) -> None:
    """Move the built top-level packages under ``procbench/``, copy the data folders beside them and rewrite the sources."""
    target = build_lib / NAMESPACE
    for package in MOVED:
        built = build_lib / package
        if built.is_dir():
            moved = target / package
            if moved.exists():
                shutil.rmtree(moved)
            shutil.move(str(built), str(moved))
    for folder in DATA:
        destination = target / folder
        if destination.exists():
            shutil.rmtree(destination)
        shutil.copytree(source_root / folder, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in sorted(target.rglob("*.py")):
        if any(part in DATA for part in path.relative_to(target).parts[:1]):
            continue  # data (sample files), not code of the package
        text = path.read_text(encoding="utf-8")
        rewritten = rewrite_source(text)
        if rewritten != text:
            path.write_text(rewritten, encoding="utf-8")


def rewrite_entry_points(text: str) -> str:
    """``name = runners.generic`` -> ``name = procbench.runners.generic`` (idempotent)."""
    pattern = re.compile(r"^(\s*[^=\s#\[][^=]*=\s*)((?:%s)[.:])" % "|".join(MOVED), re.MULTILINE)
    return pattern.sub(lambda m: m.group(1) + NAMESPACE + "." + m.group(2), text)


# -- the commands ----------------------------------------------------------------------------------
class BuildPy(_build_py):
    """setuptools' build_py, then (for a wheel) the namespace: see the module docstring."""

    def run(self) -> None:
        super().run()
        if _active() and not self.editable_mode:
            namespace_tree(Path(self.build_lib), Path.cwd())

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:  # type: ignore[override]
        outputs = super().get_outputs(include_bytecode)
        if not _active() or self.editable_mode:
            return outputs
        moved = []
        for output in outputs:
            relative = Path(output).relative_to(self.build_lib)
            if relative.parts[0] in MOVED:
                relative = Path(NAMESPACE, *relative.parts)
            moved.append(str(Path(self.build_lib) / relative))
        return moved


class EggInfo(_egg_info):
    """setuptools' egg_info, then (for a wheel) entry points and top-level names in the namespace."""

    def run(self) -> None:
        super().run()
        if not _active():
            return
        info = Path(self.egg_info)
        entry_points = info / "entry_points.txt"
        if entry_points.is_file():
            entry_points.write_text(rewrite_entry_points(entry_points.read_text(encoding="utf-8")), encoding="utf-8")
        (info / "top_level.txt").write_text(NAMESPACE + "\n", encoding="utf-8")
