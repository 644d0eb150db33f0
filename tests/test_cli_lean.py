"""procbench/cli_lean.py: the console's `score` and `check` get the arguments typer would give them.

The lean parser reads the same signatures as typer; every command line here goes through both (typer
by its CliRunner, recording what the command receives) and must give the same keyword arguments, or
the lean parser must hand the line to typer (None) where typer reports a usage error.  Then the real
console script runs in a fresh process and prints what typer's runner prints.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
import typer
from typer.testing import CliRunner

from procbench import cli, cli_lean
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

STRONG = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl"


def _typer_kwargs(fn: Any, argv: list[str]) -> tuple[int, dict[str, Any] | None]:
    """Exit status and the keyword arguments typer calls ``fn`` with for ``argv`` (None when it does not call it)."""
    seen: list[dict[str, Any]] = []

    @functools.wraps(fn)
    def record(**kwargs: Any) -> None:
        seen.append(kwargs)

    app = typer.Typer(add_completion=False)
    app.command(fn.__name__)(record)
    app.command("other")(lambda: None)  # two commands: a group, as procbench's app is
    result = CliRunner().invoke(app, [fn.__name__, *argv])
    return result.exit_code, (seen[0] if seen else None)


CASES = {
    cli.score: [
        ["propara", "--split", "test", "--predictions", "p.tsv"],
        ["propara", "--split=test", "--predictions=p.tsv", "--data-dir", "d/", "--json"],
        ["--json", "--split", "dev", "openpi", "--predictions", "x/y.jsonl", "--partial"],
        ["t", "--split", "a", "--split", "b", "--predictions", "p", "--metadata", "cot=true", "--metadata", "k=v"],
        ["t", "--split", "-x", "--predictions", "p"],  # a value that starts with a dash is still the option's value
        ["--split", "s", "--predictions", "p", "--", "-odd-name"],
        ["t", "--split", "s", "--predictions", "p", "--data-dir", ""],
        # typer's to report: missing, unknown, misspelt, help, a flag given a value, too many arguments
        ["t", "--split", "s"],
        ["--split", "s", "--predictions", "p"],
        ["t", "--split", "s", "--predictions", "p", "--jsn"],
        ["t", "--split", "s", "--predictions", "p", "--help"],
        ["t", "--split", "s", "--predictions", "p", "-h"],
        ["t", "--split", "s", "--predictions", "p", "--json=yes"],
        ["t", "u", "--split", "s", "--predictions", "p"],
        ["t", "--predictions", "p", "--split"],
    ],
    cli.check: [
        [],
        ["openpi", "paged"],
        ["specs/openpi.spec", "--data", "--data-dir", "/tmp/d"],
        ["--data", "a", "--", "--b"],
        ["--no-data"],
        ["--data-dir"],
    ],
}


@pytest.mark.parametrize(
    ("fn", "argv"), [pytest.param(fn, argv, id=f"{fn.__name__} {' '.join(argv)}") for fn, cases in CASES.items() for argv in cases]
)
def test_the_lean_parser_gives_what_typer_gives_or_hands_the_line_to_typer(fn: Any, argv: list[str]) -> None:
    status, expected = _typer_kwargs(fn, argv)
    lean = cli_lean.parse(fn, argv)
    if expected is None:
        assert lean is None, (status, lean)  # typer reports it (or prints help): the lean parser must not run it
    else:
        assert status == 0 and lean == expected


def test_only_plain_parameters_are_parsed_lean() -> None:
    def counted(verbose: int = 0) -> None:
        """A number: not a kind the lean parser takes."""

    def with_env(name: Annotated[Optional[str], typer.Option(envvar="PROCBENCH_TEST_NAME")] = None) -> None:
        """An environment variable: typer's to read."""

    def plain(name: Annotated[Optional[str], typer.Option()] = None) -> None:
        """The same without it: lean."""

    assert cli_lean.parse(counted, []) is None
    assert cli_lean.parse(with_env, []) is None
    assert cli_lean.parse(plain, ["--name", "x"]) == {"name": "x"}
    assert cli_lean.run(cli.app, ["fmt", "--check"]) is None  # not a lean command: typer runs it


def _console(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PROCBENCH_CACHE_DIR": "off"}
    code = "import sys; sys.argv = ['procbench', *sys.argv[1:]]; from procbench.cli import app; app()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["score", "paradise-tip", "--split", "test", "--predictions", str(STRONG), "--data-dir", str(SAMPLE_DATA_ROOT), "--json"], id="score"),
        pytest.param(["score", "paradise-tip", "--split", "test", "--predictions", str(STRONG), "--data-dir", str(SAMPLE_DATA_ROOT), "--metadata", "cot"],
                     id="bad metadata"),
        pytest.param(["score", "paradise-tip", "--split", "test", "--predictions", "no/such/file.jsonl"], id="no prediction file"),
        pytest.param(["score", "no-such-task", "--split", "test", "--predictions", str(STRONG)], id="no such task"),
        pytest.param(["check", "paradise-tip", "pm-llm-benchmark"], id="check"),
    ],
)
def test_the_console_prints_what_typer_prints(args: list[str]) -> None:
    done = _console(*args)
    assert cli_lean.parse({"score": cli.score, "check": cli.check}[args[0]], args[1:]) is not None  # this line ran lean
    expected = CliRunner().invoke(cli.app, args, prog_name="procbench")
    assert done.returncode == expected.exit_code, done.stderr
    assert done.stdout == expected.stdout
    assert done.stderr == expected.stderr


def test_a_usage_error_on_the_console_is_typers(tmp_path: Path) -> None:
    done = _console("score", "paradise-tip", "--split", "test")
    assert done.returncode == 2
    assert "Missing option '--predictions'" in done.stderr and "Usage: procbench score" in done.stderr
