"""docs/adding-a-benchmark.md as a maintainer follows it, in a copy of the repository: the check a contribution must pass.

The repository's files (tracked, and untracked ones git does not ignore: not ``.venv`` or ``var``)
are copied to a temporary folder; the guide's files are written where it says; every command of its
``run`` blocks runs there exactly as written (``procbench leaderboard`` would serve the site: the
board is rendered with Streamlit's AppTest over the same store instead); then every test that
iterates over ``specs/`` runs in the copy, whose ``specs/`` now holds the guide's task.  Finally the
files of the guide's "Before it ships" step are added and ``procbench check --ship`` passes.

Commands and tests run in fresh interpreters whose ``sys.path`` starts with the copy (PYTHONPATH), so
they import the copy's modules and read the copy's ``specs/``; the first test makes sure of that.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from procbench.paths import PROJECT_ROOT
from tests.doc_files import Command, commands, extract, extract_later
from tests.site_app import page

DOC = PROJECT_ROOT / "docs" / "adding-a-benchmark.md"

# The test files that iterate over specs/ (every spec, or every task), run in the copy.  A test below keeps
# this list complete: a new test file that iterates over specs/ must be added here or to NOT_RUN, with a reason.
SPEC_TESTS = (
    "tests/test_api.py",
    "tests/test_board_provenance.py",
    "tests/test_board_spec.py",
    "tests/test_components_discovery.py",
    "tests/test_console_fingerprint_memo.py",
    "tests/test_field_roles.py",
    "tests/test_contracts.py",
    "tests/test_data_fetch.py",
    "tests/test_data_lock.py",
    "tests/test_dsl.py",
    "tests/test_dsl_datacheck.py",
    "tests/test_dsl_typos.py",
    "tests/test_paged_declared.py",
    "tests/test_ship.py",
    "tests/test_slice_value_labels.py",
    "tests/test_spec_mutation_errors.py",
    "tests/test_spec_mutations.py",
    "tests/test_spec_shorthands.py",
    "tests/test_startup_plan.py",
)
NOT_RUN = {
    # its loop over specs/ skips a task without sample submissions, as test_startup_plan's does (run here)
    "tests/test_wheel.py": "builds a wheel and installs it in a fresh virtual environment: minutes, not a journey's seconds",
}
SLOW = (
    "tests/test_spec_mutation_errors.py",
    "tests/test_spec_mutations.py",
)  # run beside the others
# How a test file iterates over specs/ (directly; the demo's build over every task is the site tests')
ITERATES = re.compile(r"all_spec_paths\(\)|glob\(\"\*\.spec\"\)|SPECS_DIR\.iterdir\(\)")


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files in a temporary folder, with the guide's files written where it says."""
    if shutil.which("git") is None or not (PROJECT_ROOT / ".git").exists():
        pytest.skip("the journey copies a git checkout's files (git ls-files): none here")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    root = tmp_path_factory.mktemp("journey") / "repo"
    for name in filter(None, listed.decode().split("\0")):
        source, target = PROJECT_ROOT / name, root / name
        if (
            source.is_symlink()
        ):  # procbench/dsl -> ../dsl: the one import name, kept a link as git checks it out
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():  # listed but deleted in the working tree: not part of it
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if (
        PROJECT_ROOT / ".venv"
    ).is_dir():  # a test runs the console script at PROJECT_ROOT/.venv/bin/procbench: the same environment
        (root / ".venv").symlink_to(PROJECT_ROOT / ".venv")
    extract(DOC, root)
    return root


def _environment(root: Path) -> dict[str, str]:
    """This environment for the copy: its own modules first; no real data (the guide's task has none: the tests
    that need real data skip, as they do in a clone without it), no allowed component folders, no store."""
    unset = {
        "PROCBENCH_COMPONENTS",
        "PROCBENCH_DB",
        "PROCBENCH_CACHE_DIR",
        "PROCBENCH_DATA",
        "PYTEST_ADDOPTS",
    }
    return {**{k: v for k, v in os.environ.items() if k not in unset}, "PYTHONPATH": str(root)}


def _run(root: Path, argv: list[str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        cwd=root,
        env=_environment(root),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _procbench(root: Path, command: Command) -> subprocess.CompletedProcess[str]:
    """A guide command (``procbench ...``) as the console script runs it, in the copy."""
    assert command.argv[0] == "procbench", command.text
    return _run(
        root,
        [
            "-c",
            "import sys; from procbench.console import main; sys.exit(main())",
            *command.argv[1:],
        ],
    )


def _blocks() -> dict[str, str]:
    from tests.doc_files import BLOCK

    return {name: body for kind, name, body in BLOCK.findall(DOC.read_text()) if kind == "expected"}


def _same_numbers(printed: str, expected: str) -> None:
    got, want = json.loads(printed), json.loads(expected)
    assert (got["task"], got["split"], got["n_items"]) == (
        want["task"],
        want["split"],
        want["n_items"],
    )
    assert {k: round(v, 6) for k, v in got["metrics"].items()} == want["metrics"]


def test_the_copy_runs_its_own_code(copy: Path) -> None:
    probe = (
        "import procbench.dsl as dsl, procbench.cli, procbench.paths as paths; print(paths.PROJECT_ROOT); "
        "print(procbench.cli.__file__); print(dsl.__file__)"
    )
    done = _run(copy, ["-c", probe])
    assert done.returncode == 0, done.stderr
    project, *modules = done.stdout.split()
    assert Path(project) == copy and all(Path(m).is_relative_to(copy) for m in modules), done.stdout
    assert (copy / "specs" / "toolproc.spec").is_file() and (
        copy / "data" / "toolproc" / "dev.jsonl"
    ).is_file()


def test_the_guides_commands_run_as_written(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = {}
    for command in commands(DOC):
        if (
            command.argv[1] == "leaderboard"
        ):  # serving is the site's: render the board over the store it names
            db = copy / command.argv[command.argv.index("--db") + 1]
            monkeypatch.delenv("PROCBENCH_COMPONENTS", raising=False)
            at = page(db, monkeypatch, "board", task="toolproc", split="dev")
            table = at.dataframe[0].value
            assert list(table["Model"]) == ["my-model"], table
            assert not any("data lock" in w.value for w in at.warning), [
                w.value for w in at.warning
            ]  # no lock, no lock warning
            continue
        done = _procbench(copy, command)
        assert done.returncode == command.exit, (
            f"{command.text}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
        outputs[command.text] = done
    blocks = _blocks()
    scored = [
        done.stdout
        for text, done in outputs.items()
        if text.startswith("procbench score specs/toolproc.spec")
    ]
    heads = [
        done.stdout for text, done in outputs.items() if text.startswith("procbench score mybench/")
    ]
    assert len(scored) == len(heads) == 1
    _same_numbers(scored[0], blocks["score"])
    _same_numbers(heads[0], blocks["score-heads"])
    (ship,) = [done for text, done in outputs.items() if "--ship" in text]
    for line in (
        blocks["ship-missing"].strip().splitlines()
    ):  # abridged: each line shown is part of a line printed
        assert line.strip() in ship.stderr, f"{line!r} not in:\n{ship.stderr}"


def test_code_beside_the_guides_spec_needs_the_flag_the_guide_names(copy: Path) -> None:
    """The guide says that without --components the spec is refused, naming the file and the flag."""
    done = _procbench(copy, Command(("procbench", "check", "mybench/toolproc-heads.spec"), 3, ""))
    assert done.returncode == 3, done.stderr
    assert (
        "mybench/components/toolproc_heads.py" in done.stderr
        and "--components mybench/components" in done.stderr
    ), done.stderr


def test_every_test_over_specs_passes_in_the_copy(copy: Path) -> None:
    # the two mutation tests beside the rest (CI has two cores); test_spec_mutations with fewer mutants per spec
    # than the main suite's 60 (still above its minimum), test_spec_mutation_errors with its own count.  The copy's
    # run is about the new task among the specs: generated inputs at the dev profile's count (the main suite runs the
    # same tests at full strength), which keeps CI's whole run within its 20 minutes.
    fewer = {"HYPOTHESIS_PROFILE": "dev"}
    runs = [
        (SLOW[:1], fewer),
        (SLOW[1:], {**fewer, "PROCBENCH_MUTATIONS_PER_SPEC": "24"}),
        ([t for t in SPEC_TESTS if t not in SLOW], fewer),
    ]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    running = [
        subprocess.Popen(
            [*command, *tests],
            cwd=copy,
            env={**_environment(copy), **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for tests, extra in runs
    ]
    for process in running:
        output, _ = process.communicate(timeout=900)
        why = [
            line
            for line in output.splitlines()
            if line.startswith(("FAILED", "ERROR", "E ")) or " passed" in line or " failed" in line
        ]
        assert process.returncode == 0, "\n".join(why[:80]) or output[-4000:]
    collected = _run(
        copy,
        [
            "-m",
            "pytest",
            "-o",
            "addopts=",
            "-q",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "tests/test_dsl_datacheck.py",
        ],
    ).stdout
    assert "[toolproc]" in collected, (
        collected
    )  # the guide's task was among the specs they iterated over


def test_the_files_of_the_ship_step_make_the_task_shippable(copy: Path) -> None:
    written = extract_later(DOC, copy)
    assert {p.relative_to(copy).parts[:2] for p in written} == {
        ("samples", "data"),
        ("samples", "submissions"),
    }
    done = _procbench(copy, Command(("procbench", "check", "--ship", "toolproc"), 0, ""))
    assert done.returncode == 0 and "ready to ship" in done.stdout, done.stdout + done.stderr
    # the tests that use the samples now apply to the task, and pass
    tests = ["tests/test_dsl_datacheck.py", "tests/test_contracts.py", "-k", "toolproc"]
    checked = _run(
        copy, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *tests], timeout=300
    )
    assert checked.returncode == 0, checked.stdout[-4000:]
    assert (
        "toolproc bundles no samples" not in checked.stdout
        and "toolproc has no sample submissions" not in checked.stdout
    )


def test_the_list_of_tests_over_specs_is_complete() -> None:
    iterating = {
        f"tests/{p.name}"
        for p in (PROJECT_ROOT / "tests").glob("test_*.py")
        if ITERATES.search(p.read_text(encoding="utf-8"))
    }
    iterating -= {"tests/test_maintainer_journey.py"}
    assert iterating - set(SPEC_TESTS) - set(NOT_RUN) == set(), (
        "add these to SPEC_TESTS (or NOT_RUN, with a reason)"
    )
    assert all((PROJECT_ROOT / name).is_file() for name in (*SPEC_TESTS, *NOT_RUN))
