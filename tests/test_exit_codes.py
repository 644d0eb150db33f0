"""CLI conventions (issue #33): one exit status per kind of failure, defined once and documented, run from real command lines.

The table in docs/submissions.md is checked against procbench/exit_codes.py; every command module is
checked for a bare number given to ``typer.Exit``/``CommandExit``; and each status is produced by the
real ``procbench`` console script in a fresh process (the exit status a shell sees).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench import exit_codes
from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

SAMPLE = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"
PROCBENCH = [
    sys.executable,
    "-c",
    "import sys; from procbench.console import script; sys.argv[0] = 'procbench'; sys.exit(script())",
]


def _procbench(
    *args: str, env: dict[str, str] | None = None, cwd: Path = PROJECT_ROOT
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **(env or {})}
    return subprocess.run(
        [*PROCBENCH, *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_status_is_distinct_and_named() -> None:
    codes = {name: value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    assert len(set(codes.values())) == len(codes), codes  # no two kinds of failure share a status
    assert set(exit_codes.MEANINGS) == set(codes.values())
    assert exit_codes.EXIT_USAGE == 2  # click's, for a bad command line only
    assert (
        exit_codes.EXIT_INVALID_PREDICTIONS != 2
        and exit_codes.EXIT_UNKNOWN_SPLIT != exit_codes.EXIT_DATA_MISSING
    )


def test_the_docs_table_is_the_codes_table() -> None:
    text = (PROJECT_ROOT / "docs" / "submissions.md").read_text(encoding="utf-8")
    table = text.split("<!-- exit-codes:begin -->\n", 1)[1].split("<!-- exit-codes:end -->", 1)[0]
    assert table == exit_codes.markdown_table()
    documented = {int(row.split("|")[1]) for row in table.splitlines()[2:]}
    assert documented == set(exit_codes.MEANINGS)


def test_the_extras_status_is_the_tables() -> None:
    """runners/runtime/extras.py (the layer below) keeps its own constant for a missing extra: it must be the table's."""
    extras = pytest.importorskip("procbench.runners.runtime.extras")
    assert extras.EXIT_MISSING_EXTRA == exit_codes.EXIT_MISSING_EXTRA


def _bare_exit_numbers(path: Path) -> list[str]:
    """``typer.Exit(5)``, ``CommandExit(3)``, ``SystemExit(2)``: a status written as a number (0 is fine)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, int)
        ):
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            if name in ("Exit", "CommandExit", "SystemExit", "exit") and node.args[0].value != 0:
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_command_module_writes_a_status_as_a_number() -> None:
    modules = sorted((PROJECT_ROOT / "procbench").glob("cli*.py")) + [
        PROJECT_ROOT / "procbench" / n for n in ("console_commands.py", "ship.py")
    ]
    assert [hit for path in modules for hit in _bare_exit_numbers(path)] == []
    # and no module keeps its own copy of a status
    for path in (PROJECT_ROOT / "procbench").rglob("*.py"):
        if path.name != "exit_codes.py":
            assert not re.search(r"^EXIT_\w+ = \d", path.read_text(encoding="utf-8"), re.M), path


# -- each status from the real console script -----------------------------------------------------------------


def test_usage_error_is_2_and_nothing_else_is(tmp_path: Path) -> None:
    done = _procbench(
        "score", "openpi", "--split", "test", "--predictions", str(SAMPLE), "--no-such-flag"
    )
    assert done.returncode == exit_codes.EXIT_USAGE == 2 and "No such option" in done.stderr


def test_invalid_predictions_exit_8(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(SAMPLE.read_text(encoding="utf-8") + "not json\n", encoding="utf-8")
    done = _procbench(
        "score",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(bad),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    assert done.returncode == exit_codes.EXIT_INVALID_PREDICTIONS == 8
    assert "bad.jsonl:23: not valid JSON" in done.stderr


def test_unknown_split_exit_9_names_the_splits() -> None:
    done = _procbench(
        "score",
        "openpi",
        "--split",
        "tset",
        "--predictions",
        str(SAMPLE),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    assert done.returncode == exit_codes.EXIT_UNKNOWN_SPLIT == 9
    assert done.stderr.strip() == "error: task 'openpi' has no split 'tset' (splits: dev, test)"


def test_unknown_split_on_submit_and_import_is_9(tmp_path: Path) -> None:
    runner = CliRunner()
    submitted = runner.invoke(
        app,
        [
            "submit",
            "openpi",
            "--split",
            "tset",
            "--predictions",
            str(SAMPLE),
            "--model",
            "m",
            "--db",
            str(tmp_path / "s.duckdb"),
        ],
    )
    assert submitted.exit_code == exit_codes.EXIT_UNKNOWN_SPLIT, submitted.output
    assert (
        "has no split 'tset'" in submitted.stderr and "receipt" in submitted.stderr
    )  # intake's refusal, with its receipt
    log = tmp_path / "log.jsonl"
    log.write_text("{}\n", encoding="utf-8")
    imported = runner.invoke(
        app,
        [
            "import",
            "lm-eval",
            str(log),
            "--task",
            "openpi",
            "--split",
            "tset",
            "--out",
            str(tmp_path / "p.jsonl"),
        ],
    )
    assert (
        imported.exit_code == exit_codes.EXIT_UNKNOWN_SPLIT
        and "has no split 'tset'" in imported.stderr
    )
    assert not (tmp_path / "p.jsonl").exists()


def test_spec_error_exit_3(tmp_path: Path) -> None:
    spec = tmp_path / "broken.spec"
    spec.write_text("task broken {\n  data = \n}\n", encoding="utf-8")
    done = _procbench("check", str(spec))
    assert done.returncode == exit_codes.EXIT_SPEC_ERROR == 3 and "broken.spec:" in done.stderr


def test_missing_data_exit_4(tmp_path: Path) -> None:
    empty = tmp_path / "empty-root"
    empty.mkdir()
    done = _procbench(
        "score", "openpi", "--split", "test", "--predictions", str(SAMPLE), "--data-dir", str(empty)
    )
    assert done.returncode == exit_codes.EXIT_DATA_MISSING == 4
    no_file = _procbench(
        "score", "openpi", "--split", "test", "--predictions", str(tmp_path / "absent.jsonl")
    )
    assert (
        no_file.returncode == exit_codes.EXIT_DATA_MISSING
        and "no prediction file" in no_file.stderr
    )


def test_version() -> None:
    done = _procbench("--version")
    assert done.returncode == 0 and re.fullmatch(
        r"procbench \d+\.\d+\.\d+\S* \(Python 3\.\d+\.\d+\S*\)\n", done.stdout
    )


# -- PROCBENCH_DB, --json, the site's address ------------------------------------------------------------------


def test_procbench_db_is_the_store_when_db_is_not_given(tmp_path: Path) -> None:
    """The env var names the store of every --db command (here a submit, then `team list` reading it back)."""
    db = tmp_path / "from-env.duckdb"
    env = {"PROCBENCH_DB": str(db)}
    runner = CliRunner()
    stored = runner.invoke(
        app,
        [
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(SAMPLE),
            "--model",
            "env",
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
        env=env,
    )
    assert stored.exit_code == 0, stored.output
    assert db.is_file()  # written where PROCBENCH_DB says, not var/procbench.duckdb
    listed = runner.invoke(app, ["admin", "board", "list", "openpi"], env=env)
    assert listed.exit_code == 0 and "test" in listed.stdout
    # --db still wins over the env var
    other = runner.invoke(
        app, ["admin", "board", "list", "openpi", "--db", str(tmp_path / "absent.duckdb")], env=env
    )
    assert other.exit_code != 0 and "absent.duckdb" in other.output


def test_score_json_keeps_warnings_on_a_full_run(tmp_path: Path) -> None:
    """A field the spec does not declare is a warning on stderr; --json carries it in its object too (as --partial does)."""
    lines = [
        json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    lines[0]["confidence"] = 0.5
    path = tmp_path / "extra-field.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    done = _procbench(
        "score",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(path),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    printed = [
        line.removeprefix("warning: ")
        for line in done.stderr.splitlines()
        if line.startswith("warning: ")
    ]
    assert printed and payload["warnings"] == printed and any("confidence" in w for w in printed)
    assert payload["partial"] is False and payload["coverage"]["answered"] == len(lines)


@pytest.mark.parametrize(
    ("address", "warned"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("0.0.0.0", True),
        ("192.168.1.20", True),
    ],
)
def test_leaderboard_warns_when_the_address_exposes_the_upload_page(
    tmp_path: Path, address: str, warned: bool
) -> None:
    done = CliRunner().invoke(
        app,
        [
            "leaderboard",
            "--db",
            str(tmp_path / "absent.duckdb"),
            "--address",
            address,
            "--port",
            "8765",
        ],
    )
    assert done.exit_code == exit_codes.EXIT_DATA_MISSING  # no store: nothing is served
    assert ("Upload page" in done.stderr) is warned


def test_leaderboard_port_is_checked() -> None:
    assert (
        CliRunner().invoke(app, ["leaderboard", "--port", "70000"]).exit_code
        == exit_codes.EXIT_USAGE
    )


def test_quiet_and_verbose_set_the_log_level() -> None:
    import logging

    runner = CliRunner()
    assert runner.invoke(app, ["-q", "compare", "--help"]).exit_code == 0
    assert logging.getLogger("procbench").level == logging.WARNING
    assert runner.invoke(app, ["-v", "compare", "--help"]).exit_code == 0
    assert logging.getLogger("procbench").level == logging.DEBUG
    assert runner.invoke(app, ["compare", "--help"]).exit_code == 0
    assert logging.getLogger("procbench").level == logging.INFO
