"""procbench/cli_lean.py: the console's `score`, `check` and `submit` get the arguments typer would give them.

Each of those commands is declared once (procbench/console_commands.py's COMMANDS); the lean parser
reads that declaration and typer's command is built from it (procbench.cli_options.lean_command).
Every command line here goes through both (typer by its CliRunner, recording what the command
receives) and must give the same keyword arguments, or the lean parser must hand the line to typer
(None) where typer reports a usage error.  Then the real console script runs in a fresh process and
prints what typer's runner prints.
"""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
import typer
from typer.testing import CliRunner

from procbench import cli, cli_admin, cli_lean, console_commands
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
        [
            "t",
            "--split",
            "a",
            "--split",
            "b",
            "--predictions",
            "p",
            "--metadata",
            "cot=true",
            "--metadata",
            "k=v",
        ],
        [
            "t",
            "--split",
            "-x",
            "--predictions",
            "p",
        ],  # a value that starts with a dash is still the option's value
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

# submit (issue #31): the console runs it lean too; --token and --db fall back to their environment variables as typer's do
CASES[cli_admin.submit] = [
    ["openpi", "--split", "test", "--predictions", "p.jsonl", "--model", "m"],
    [
        "openpi",
        "--split",
        "test",
        "--predictions",
        "p.jsonl",
        "--model",
        "m",
        "--team",
        "t",
        "--token",
        "k",
        "--db",
        "x.duckdb",
        "--metadata",
        "cot=true",
    ],
    [
        "openpi",
        "--split",
        "test",
        "--predictions",
        "p.jsonl",
        "--model",
        "m",
        "--size-class",
        "small",
        "--components",
        "a",
        "--components",
        "b",
    ],
    ["openpi", "--split", "test", "--predictions", "p.jsonl"],
    ["openpi", "--split", "test", "--predictions", "p.jsonl", "--model", "m", "-h"],
]


@pytest.mark.parametrize(
    ("fn", "argv"),
    [
        pytest.param(fn, argv, id=f"{fn.__name__} {' '.join(argv)}")
        for fn, cases in CASES.items()
        for argv in cases
    ],
)
def test_the_lean_parser_gives_what_typer_gives_or_hands_the_line_to_typer(
    fn: Any, argv: list[str]
) -> None:
    status, expected = _typer_kwargs(fn, argv)
    declared = console_commands.COMMANDS[fn.__name__][1]
    for lean in (
        cli_lean.parse(fn, argv),
        cli_lean.parse(declared, argv),
    ):  # read from the typer signature, and as declared
        if expected is None:
            assert lean is None, (
                status,
                lean,
            )  # typer reports it (or prints help): the lean parser must not run it
        else:
            assert status == 0 and lean == expected


@pytest.mark.parametrize("name", sorted(console_commands.COMMANDS))
def test_typers_command_is_built_from_the_declaration(name: str) -> None:
    """The app's command is lean_command's, and typer reads back from it every declared parameter as declared."""
    typer_command = next(
        c for c in cli.app.registered_commands if (c.name or c.callback.__name__) == name
    )  # type: ignore[union-attr]
    function, declared, _ = console_commands.COMMANDS[name]
    assert typer_command.callback.__doc__ == function.__doc__  # type: ignore[union-attr]
    assert cli_lean.params_of(typer_command.callback) == list(declared)  # type: ignore[arg-type]
    assert [p.name for p in declared] == list(
        inspect.signature(function).parameters
    )  # the lean call passes them by name


@pytest.mark.parametrize("name", sorted(console_commands.COMMANDS))
def test_the_help_says_what_each_declared_parameter_says(name: str) -> None:
    _, declared, _ = console_commands.COMMANDS[name]
    shown = CliRunner().invoke(cli.app, [name, "--help"], prog_name="procbench", terminal_width=400)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    for param in declared:
        spelling = next(iter(param.names), param.name) if param.option else param.name
        line = next(line for line in lines if line.strip().startswith(spelling))
        assert param.help in line, (param.name, line)
        if param.envvar:
            assert f"env var: {param.envvar}" in line


def test_a_typer_command_from_a_declaration_runs_the_declared_function(tmp_path: Path) -> None:
    """lean_command's signature is typer's: a declared flag, a repeated option and an environment variable reach the function."""
    from procbench.cli_options import lean_command

    seen: list[dict[str, Any]] = []

    def probe(
        spec: str, tags: Optional[list[str]] = None, loud: bool = False, name: str = ""
    ) -> None:
        """Probe the declaration."""
        seen.append({"spec": spec, "tags": tags, "loud": loud, "name": name})

    params = (
        cli_lean.Param("spec", option=False, base=str, default=..., help="what to probe"),
        cli_lean.Param("tags", option=True, base=str, many=True, default=None, decls=("--tag",)),
        cli_lean.Param("loud", option=True, base=bool, default=False, decls=("--loud",)),
        cli_lean.Param("name", option=True, base=str, default="", envvar="PROCBENCH_TEST_PROBE"),
    )
    commands = {**console_commands.COMMANDS, "probe": (probe, params, lambda kwargs: True)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(console_commands, "COMMANDS", commands)
        command = lean_command("probe")
    app = typer.Typer(add_completion=False)
    app.command()(command)
    app.command("other")(lambda: None)
    argv = ["probe", "x", "--tag", "a", "--tag", "b", "--loud"]
    done = CliRunner().invoke(app, argv, env={"PROCBENCH_TEST_PROBE": "from-env"})
    assert done.exit_code == 0, done.output
    assert seen == [{"spec": "x", "tags": ["a", "b"], "loud": True, "name": "from-env"}]
    assert cli_lean.parse(params, argv[1:]) | {"name": "from-env"} == seen[0]
    assert cli_lean.params_of(command) == list(params)


def test_a_declared_parameter_differing_from_the_signature_is_seen() -> None:
    """The comparison above can fail: a changed default, option spelling or type makes the declarations unequal."""
    declared = list(console_commands.COMMANDS["score"][1])
    as_json = next(p for p in declared if p.name == "as_json")
    assert cli_lean.params_of(cli.score) == declared
    for changed in (
        cli_lean.Param("as_json", option=True, base=bool, default=True, decls=("--json",)),
        cli_lean.Param("as_json", option=True, base=bool, default=False),
        cli_lean.Param("as_json", option=True, base=str, default=False, decls=("--json",)),
    ):
        assert cli_lean.params_of(cli.score) != [changed if p is as_json else p for p in declared]


def test_only_plain_parameters_are_parsed_lean() -> None:
    def counted(verbose: int = 0) -> None:
        """A number: not a kind the lean parser takes."""

    def with_env(
        name: Annotated[Optional[str], typer.Option(envvar="PROCBENCH_TEST_NAME")] = None,
    ) -> None:
        """An environment variable: read as typer reads it (issue #31: submit's --token and --db)."""

    def with_envs(
        name: Annotated[Optional[str], typer.Option(envvar=["PROCBENCH_A", "PROCBENCH_B"])] = None,
    ) -> None:
        """Several variables: typer's to read."""

    def plain(name: Annotated[Optional[str], typer.Option()] = None) -> None:
        """The same without it: lean."""

    assert cli_lean.parse(counted, []) is None
    for value, expected in (
        ("", None),
        ("from-env", "from-env"),
    ):  # as click reads it: an empty variable is no value
        os.environ["PROCBENCH_TEST_NAME"] = value
        try:
            assert (
                cli_lean.parse(with_env, []) == {"name": expected} == _typer_kwargs(with_env, [])[1]
            )
            assert cli_lean.parse(with_env, ["--name", "x"]) == {
                "name": "x"
            }  # the command line wins
        finally:
            del os.environ["PROCBENCH_TEST_NAME"]
    assert cli_lean.parse(with_envs, []) is None
    assert cli_lean.parse(plain, ["--name", "x"]) == {"name": "x"}
    assert console_commands.run(["fmt", "--check"]) is None  # not a lean command: typer runs it
    assert console_commands.run([]) is None  # no command: typer prints the help
    assert (
        console_commands.run(
            ["score", "t", "--split", "s", "--predictions", "p", "--metadata", "cot"]
        )
        is None
    )  # typer's usage error


# The console script's entry (pyproject's [project.scripts]), and typer's app called as a script: both run lean.
ENTRIES = {
    "console": "import sys; sys.argv = ['procbench', *sys.argv[1:]]; from procbench.console import script; sys.exit(script())",
    "app": "import sys; sys.argv = ['procbench', *sys.argv[1:]]; from procbench.cli import app; app()",
}


def _console(*args: str, entry: str = "console") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PROCBENCH_CACHE_DIR": "off"}
    code = ENTRIES[entry]
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            [
                "score",
                "paradise-tip",
                "--split",
                "test",
                "--predictions",
                str(STRONG),
                "--data-dir",
                str(SAMPLE_DATA_ROOT),
                "--json",
            ],
            id="score",
        ),
        pytest.param(
            [
                "score",
                "paradise-tip",
                "--split",
                "test",
                "--predictions",
                str(STRONG),
                "--data-dir",
                str(SAMPLE_DATA_ROOT),
                "--metadata",
                "cot",
            ],
            id="bad metadata",
        ),
        pytest.param(
            ["score", "paradise-tip", "--split", "test", "--predictions", "no/such/file.jsonl"],
            id="no prediction file",
        ),
        pytest.param(
            ["score", "no-such-task", "--split", "test", "--predictions", str(STRONG)],
            id="no such task",
        ),
        pytest.param(
            [
                "score",
                "paradise-tip",
                "--split",
                "test",
                "--predictions",
                str(STRONG),
                "--data-dir",
                str(SAMPLE_DATA_ROOT),
            ],
            id="score text",
        ),
        pytest.param(
            [
                "score",
                "paradise-tip",
                "--split",
                "test",
                "--predictions",
                str(STRONG),
                "--data-dir",
                str(SAMPLE_DATA_ROOT),
                "--partial",
            ],
            id="partial",
        ),
        pytest.param(["check", "paradise-tip", "pm-llm-benchmark"], id="check"),
        pytest.param(
            ["check", "paradise-tip", "--data", "--data-dir", str(SAMPLE_DATA_ROOT)],
            id="check data",
        ),
    ],
)
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_the_console_prints_what_typer_prints(args: list[str], entry: str) -> None:
    done = _console(*args, entry=entry)
    assert (
        cli_lean.parse({"score": cli.score, "check": cli.check}[args[0]], args[1:]) is not None
    )  # a line the parser takes
    expected = CliRunner().invoke(cli.app, args, prog_name="procbench")
    assert done.returncode == expected.exit_code, done.stderr
    assert done.stdout == expected.stdout
    assert done.stderr == expected.stderr


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--help"], id="help"),
        pytest.param(["score", "--help"], id="score help"),
        pytest.param(["components"], id="another command"),
        pytest.param(["no-such-command"], id="unknown command"),
    ],
)
def test_what_the_console_hands_to_typer_prints_what_typer_prints(args: list[str]) -> None:
    """The console's fallback is typer's app run as a script (the console script before procbench/console.py)."""
    done, expected = _console(*args), _console(*args, entry="app")
    assert (done.returncode, done.stdout, done.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )
    assert done.stdout or done.stderr  # help or an error was printed


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_usage_error_on_the_console_is_typers(entry: str) -> None:
    done = _console("score", "paradise-tip", "--split", "test", entry=entry)
    assert done.returncode == 2
    assert (
        "Missing option '--predictions'" in done.stderr and "Usage: procbench score" in done.stderr
    )


def test_the_installed_console_script_is_the_lean_entry() -> None:
    """pyproject's [project.scripts] names procbench.console:script, and the script in this environment runs it."""
    import tomllib

    scripts = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]["scripts"]
    assert scripts == {"procbench": "procbench.console:script"}
    script = Path(sys.executable).with_name("procbench")
    if not script.is_file():
        pytest.skip("no procbench console script beside this interpreter")
    assert "from procbench.console import script" in script.read_text(encoding="utf-8"), (
        "reinstall: pip install -e . --no-deps"
    )


def test_the_console_warns_of_a_row_off_its_board(tmp_path: Path) -> None:
    """A submission stored under another fingerprint than its board's is named as off the board, from the fingerprint
    intake read with the row (SubmissionOutcome.board_fingerprint, issue #31); a row on its board is not."""
    from tests.test_submissions_support import STRONG, TEMPLATE, openpi_spec_variant

    db = tmp_path / "board.duckdb"
    changed = openpi_spec_variant(
        tmp_path / "specs", old="params { dedup = false", new="params { dedup = true", name="openpi"
    )
    common = ["--split", "test", "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT)]
    on = _console("submit", "openpi", "--predictions", str(STRONG), "--model", "strong", *common)
    assert on.returncode == 0, on.stderr
    assert "not on it" not in on.stderr
    for _ in range(2):  # a new row, then the same file again
        off = _console(
            "submit", str(changed), "--predictions", str(TEMPLATE), "--model", "t", *common
        )
        assert off.returncode == 0, off.stderr
        assert "but the board of openpi / test shows" in off.stderr and "not on it" in off.stderr
