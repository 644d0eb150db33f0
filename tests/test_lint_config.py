"""`make lint` type-checks every module with no relaxed codes and runs the formatter (issue #32, D6).

D6: `mypy` overrides switched error codes off in the checker and eleven other modules, so a misplaced
positional argument in a ``MetricSpec(...)`` call passed `make lint`.  Now there is no override: the same
mistake, written in a module of the checker's package, is an error under the project's own configuration.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from procbench.paths import PROJECT_ROOT

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_mypy_has_no_overrides_and_checks_the_whole_package() -> None:
    mypy = PYPROJECT["tool"]["mypy"]
    assert "overrides" not in mypy
    assert mypy["files"] == [
        "procbench"
    ]  # with its links to dsl/, runners/, submissions/, leaderboard/, bench/


def test_make_lint_runs_the_formatter_check() -> None:
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"ruff format --check \.", lint) and re.search(r"\bmypy\b", lint)
    assert PYPROJECT["tool"]["ruff"]["line-length"] == 100


def test_a_misplaced_positional_argument_in_a_metric_spec_call_fails_mypy(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    # MetricSpec(name, display, group, ...): the display name given where the name goes, a flag where text goes
    probe = tmp_path / "probe_d6.py"
    probe.write_text(
        "from procbench.dsl.model import MetricSpec\n\n\n"
        "def probe() -> MetricSpec:\n"
        "    return MetricSpec('f1', True, 'F1')\n",
        encoding="utf-8",
    )
    config = [
        "--config-file",
        str(PROJECT_ROOT / "pyproject.toml"),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    stdout, _, status = api.run([*config, "--follow-imports", "silent", str(probe)])
    assert status == 1 and "probe_d6.py:5: error" in stdout and '"MetricSpec"' in stdout, stdout
