"""Start-up: a command imports what it runs, not every library of every task (issue #19).

Each case runs the real ``procbench`` command line in a fresh interpreter and reads ``sys.modules``
when it exits: an import graph, never a time.  ProPara (leaderboard and NAACL'18) stems and measures
edit distance without NLTK (runners/library/porter.py, runners/library/edit_distance.py), so scoring it must not load
NLTK, whose package init pulls SciPy, scikit-learn and pandas.

The console's ``score`` and ``check`` parse their arguments without typer's pydantic coercion
(procbench/cli_lean.py), help and usage errors are plain text (no Rich), and a component lookup imports
only the module that registers it (runners/runtime/_component_index.py): scoring one benchmark imports none of
the other benchmarks' component modules.  The console script itself (procbench/console.py) runs them
without typer, click or the command modules; with the spec cache warm, neither the parser nor the
checker, nor the installed distributions' metadata (the fingerprint's library versions are memoised).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

# never needed to score ProPara, PARADISE or PM-LLM
HEAVY = (
    "scipy",
    "sklearn",
    "pandas",
    "torch",
    "spacy",
    "transformers",
    "streamlit",
    "nltk",
    "thinc",
)
# not needed to print the help either: the store, the site, the network, the parser (Lark), NumPy
NOT_FOR_HELP = (
    *HEAVY,
    "httpx",
    "jinja2",
    "duckdb",
    "polars",
    "pyarrow",
    "lark",
    "numpy",
    "submissions",
    "leaderboard",
    "pydantic",
    "rich",
)
# typer's parameter coercion (pydantic) and Rich: never needed to score or check from the console
CLI_EXTRAS = ("pydantic", "pydantic_core", "rich")
# each benchmark's component package: scoring one imports no other one's
COMPONENT_PACKAGES = {
    "propara": "procbench.runners.propara",
    "paradise": "procbench.runners.paradise",
    "pmllm": "procbench.runners.pmllm",
    "paged": "procbench.runners.paged",
}
OWN_PACKAGE = {
    "propara": "propara",
    "propara-naacl18": "propara",
    "paradise-tip": "paradise",
    "pm-llm-benchmark": "pmllm",
}

_PROBE = """
import atexit, json, sys
def _report():
    sys.stdout.flush()
    sys.__stdout__.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
atexit.register(_report)
sys.argv = ["procbench", *sys.argv[1:]]
from procbench.cli import app
app()
"""


# the console script as pyproject's [project.scripts] runs it (it ends with os._exit after the atexit functions)
_CONSOLE_PROBE = _PROBE.replace(
    "from procbench.cli import app\napp()",
    "from procbench.console import script\nsys.exit(script())",
)
# what the console script never imports for a well-formed `score` or `check` with the spec cache warm
NOT_FOR_A_CACHED_LEAN_COMMAND = (
    "typer",
    "click",
    "pydantic",
    "rich",
    "lark",
    "jinja2",
    "importlib.metadata",
    "email",
    "procbench.dsl.checker",
    "procbench.dsl.parser",
    "procbench.dsl.binding",
    "procbench.dsl.lock",
    "procbench.cli",
    "procbench.cli_admin",
    "procbench.cli_export",
    "procbench.api",
)


# what a runner rebuilt from its cached plan (dsl/plan.py) never imports: every task's is
SPEC_LANGUAGE = (
    "procbench.dsl.model",
    "procbench.dsl.compiler",
    "procbench.dsl.syntax",
    "procbench.dsl.errors",
    "procbench.dsl.checker",
    "lark",
)


def _imported_after(
    args: list[str], *, cache_dir: Path, probe: str = _PROBE
) -> tuple[int, set[str], str]:
    """Exit status, every module imported, and stderr of ``procbench ARGS`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PROCBENCH_CACHE_DIR": str(cache_dir)}
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    line = next(line for line in reversed(done.stdout.splitlines()) if line.startswith("MODULES "))
    return done.returncode, set(json.loads(line.removeprefix("MODULES "))), done.stderr


def _modules_after(args: list[str], *, cache_dir: Path) -> tuple[int, set[str], str]:
    """Exit status, top-level packages imported, and stderr of ``procbench ARGS`` in a fresh interpreter."""
    status, modules, stderr = _imported_after(args, cache_dir=cache_dir)
    return status, {name.partition(".")[0] for name in modules}, stderr


def _component_packages(modules: set[str]) -> set[str]:
    """The benchmarks whose component package is among ``modules``."""
    return {
        name
        for name, package in COMPONENT_PACKAGES.items()
        if any(m == package or m.startswith(package + ".") for m in modules)
    }


def _sample(task: str, name: str) -> Path:
    path = SAMPLE_SUBMISSIONS_DIR / task / name
    assert path.is_file(), path
    return path


SAMPLE_CASES = {
    "propara": ("test", _sample("propara", "noisy-tracker.tsv")),
    "propara-naacl18": ("test", _sample("propara-naacl18", "noisy-grid.tsv")),
    "paradise-tip": ("test", _sample("paradise-tip", "sample-strong.jsonl")),
    "pm-llm-benchmark": ("main", _sample("pm-llm-benchmark", "acme-large.jsonl")),
}


WITHOUT_NUMPY = ("propara", "paradise-tip", "pm-llm-benchmark")
NAACL18_MODULES = (
    "procbench.runners.propara.naacl18",
    "procbench.runners.propara.naacl18_gold",
    "procbench.runners.propara.naacl18_grid",
    "procbench.runners.propara.naacl18_questions",
)


def test_help_imports_no_command_library(tmp_path: Path) -> None:
    status, modules, stderr = _modules_after(["--help"], cache_dir=tmp_path)
    assert status == 0, stderr
    assert not modules & set(NOT_FOR_HELP), sorted(modules & set(NOT_FOR_HELP))


@pytest.mark.parametrize("task", sorted(SAMPLE_CASES))
def test_scoring_the_light_tasks_on_the_samples_imports_no_heavy_library(
    task: str, tmp_path: Path
) -> None:
    split, predictions = SAMPLE_CASES[task]
    args = [
        "score",
        task,
        "--split",
        split,
        "--predictions",
        str(predictions),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--json",
    ]
    for run in (
        "miss",
        "hit",
    ):  # the spec cache empty, then filled: neither path may import a heavy library
        status, imported, stderr = _imported_after(args, cache_dir=tmp_path)
        modules = {name.partition(".")[0] for name in imported}
        assert status == 0, (run, stderr)
        assert not modules & set(HEAVY), (run, sorted(modules & set(HEAVY)))
        assert _component_packages(imported) == {OWN_PACKAGE[task]}, (
            run,
            sorted(_component_packages(imported)),
        )
        if (
            task in WITHOUT_NUMPY
        ):  # their matchers take the scalar path: NumPy is imported on first use only
            assert "numpy" not in modules, run
        if (
            task == "propara"
        ):  # the two ProPara evaluators are separate entry points: the leaderboard's task loads none of NAACL'18's modules
            assert "procbench.runners.propara.leaderboard" in imported, run
            assert not _unwanted(imported, NAACL18_MODULES), (
                run,
                _unwanted(imported, NAACL18_MODULES),
            )
        if (
            run == "hit"
        ):  # checked spec from the cache: neither the parser nor typer's coercion nor Rich
            assert not modules & {"lark", "jinja2", *CLI_EXTRAS}, sorted(
                modules & {"lark", "jinja2", *CLI_EXTRAS}
            )
            assert "procbench.dsl.checker" not in imported


def _unwanted(imported: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in imported or any(m.startswith(n + ".") for m in imported))


@pytest.mark.parametrize("task", sorted(SAMPLE_CASES))
def test_the_console_scores_from_a_warm_cache_without_typer_the_parser_or_the_checker(
    task: str, tmp_path: Path
) -> None:
    split, predictions = SAMPLE_CASES[task]
    args = [
        "score",
        task,
        "--split",
        split,
        "--predictions",
        str(predictions),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--json",
    ]
    status, first, stderr = _imported_after(args, cache_dir=tmp_path, probe=_CONSOLE_PROBE)
    assert status == 0, stderr
    assert (
        "procbench.dsl.checker" in first and "typer" not in first
    )  # the first run checks the spec (the probe sees it), still without typer
    status, imported, stderr = _imported_after(args, cache_dir=tmp_path, probe=_CONSOLE_PROBE)
    assert status == 0, stderr
    assert not _unwanted(imported, NOT_FOR_A_CACHED_LEAN_COMMAND), _unwanted(
        imported, NOT_FOR_A_CACHED_LEAN_COMMAND
    )
    assert {
        "procbench.dsl.cache",
        "procbench.console_commands",
    } <= imported  # the probe saw the command run
    assert not _unwanted(imported, SPEC_LANGUAGE), _unwanted(
        imported, SPEC_LANGUAGE
    )  # the runner rebuilt from its cached plan
    assert "procbench.dsl.plan" in imported


def test_the_console_checks_from_a_warm_cache_without_typer(tmp_path: Path) -> None:
    status, _, stderr = _imported_after(["check"], cache_dir=tmp_path, probe=_CONSOLE_PROBE)
    assert status == 0, stderr
    status, imported, stderr = _imported_after(["check"], cache_dir=tmp_path, probe=_CONSOLE_PROBE)
    assert status == 0, stderr
    assert not _unwanted(imported, (*NOT_FOR_A_CACHED_LEAN_COMMAND, "numpy")), _unwanted(
        imported, NOT_FOR_A_CACHED_LEAN_COMMAND
    )


def test_the_console_hands_other_command_lines_to_typer(tmp_path: Path) -> None:
    """``--help`` and a usage error are typer's: the console imports it for them (the probe can see typer)."""
    for args in (["--help"], ["score", "propara", "--split", "test"]):
        status, imported, _ = _imported_after(args, cache_dir=tmp_path, probe=_CONSOLE_PROBE)
        assert status in (0, 2) and "typer" in imported and "procbench.cli" in imported, args


def test_scoring_paged_imports_neither_pytorch_nor_the_other_benchmarks(tmp_path: Path) -> None:
    """spaCy is PAGED's tokenizer; thinc, which spaCy imports, would import PyTorch (runners/paged/tokens.py keeps it out)."""
    predictions = _sample("paged", "careful-extractor.jsonl")
    args = [
        "score",
        "paged",
        "--split",
        "dev",
        "--predictions",
        str(predictions),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--json",
    ]
    status, imported, stderr = _imported_after(args, cache_dir=tmp_path)
    assert status == 0, stderr
    modules = {name.partition(".")[0] for name in imported}
    assert "spacy" in modules  # the probe sees the tokenizer: the scorer ran
    assert not modules & {"torch", "transformers", "streamlit"}, sorted(
        modules & {"torch", "transformers", "streamlit"}
    )
    assert _component_packages(imported) == {"paged"}


def test_a_cached_check_imports_neither_the_parser_nor_numpy(tmp_path: Path) -> None:
    status, first, stderr = _modules_after(["check"], cache_dir=tmp_path)
    assert status == 0, stderr
    assert "lark" in first  # the first check parses: the probe sees the parser when it runs
    status, second, stderr = _modules_after(["check"], cache_dir=tmp_path)
    assert status == 0, stderr
    unwanted = {"lark", "numpy", "jinja2", *HEAVY, *CLI_EXTRAS}
    assert not second & unwanted, sorted(second & unwanted)


def test_the_console_parses_score_and_check_without_typers_coercion(tmp_path: Path) -> None:
    """A usage error goes to typer (which then imports its coercion); a well-formed line never does."""
    status, modules, stderr = _modules_after(
        ["score", "propara", "--split", "test"], cache_dir=tmp_path
    )
    assert status == 2 and "Missing option '--predictions'" in stderr
    status, modules, stderr = _modules_after(["check", "propara"], cache_dir=tmp_path)
    assert status == 0, stderr
    assert not modules & set(CLI_EXTRAS), sorted(modules & set(CLI_EXTRAS))


@pytest.mark.parametrize("name", ["propara", "propara-naacl18", "paradise-tip", "pm-llm-benchmark"])
def test_scoring_the_light_tasks_on_the_real_data_imports_no_heavy_library(
    name: str, data_root: Path, tmp_path: Path
) -> None:
    from procbench.bench.generate import generate

    workload = generate(name, data_root, tmp_path / "work", 1)
    args = [
        "score",
        workload.task,
        "--split",
        workload.split,
        "--predictions",
        str(workload.predictions),
        "--data-dir",
        str(workload.data_root),
        "--json",
    ]
    status, imported, stderr = _imported_after(args, cache_dir=tmp_path / "cache")
    assert status == 0, stderr
    modules = {name.partition(".")[0] for name in imported}
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    assert _component_packages(imported) == {OWN_PACKAGE[name]}, sorted(
        _component_packages(imported)
    )


# issue #31: `procbench submit` imports what intake needs. The store's writers insert through DuckDB's own list
# parameters (no data-frame library), the judge's HTTP client is imported only when a judge is called, and the
# console parses submit as it parses score (procbench/cli_lean.py), so neither typer nor its coercion loads.
NOT_FOR_SUBMIT = (
    "polars",
    "pyarrow",
    "pandas",
    "httpx",
    "streamlit",
    "torch",
    "ray",
    "typer",
    "click",
    "pydantic",
    "rich",
)
NOT_FOR_A_CACHED_SUBMIT = ("lark", "jinja2", "markupsafe")
SPEC_LANGUAGE_AT_A_MISS = (
    "procbench.dsl.parser",
    "procbench.dsl.checker",
    "procbench.dsl.compiler",
    "procbench.runners.runtime.templates",
)
SUBMIT_MODULES_CEILING = 480  # 381 when this was written (871 before issue #31): headroom for a few modules, not for a library
# issue #31 (submit beyond score): the store's modules take DuckDB's engine module (_duckdb, procbench/submissions/sql.py),
# not the package's Python layer (its relational API, its Arrow and Polars sources and its version lookup through
# importlib.metadata, which imports email, zipfile, calendar, ...), and intake's data checks (difflib) load only when
# the split lacks something, as score's do; the spec's board fields come from the cached plan (dsl/board_spec.py), so
# its syntax tree (procbench.dsl.model, a dataclass per block) is not imported, and the store and intake hash with
# CPython's own SHA-256 (runners/runtime/digests.py), so OpenSSL is not loaded for a sample file
NOT_FOR_A_WARM_SUBMIT = (
    "duckdb",
    "importlib.metadata",
    "email",
    "zipfile",
    "difflib",
    "procbench.dsl.datacheck",
    "procbench.dsl.model",
    "_hashlib",
)
# issue #31 (submit beyond score): a task whose gold no table reader reads (PARADISE) loads its checked spec without
# the gold readers (the spec model names the explode id paths from procbench.runners.runtime.id_paths) nor the syntax
# tree (its spans come from procbench.dsl.spans); a receipt is os.urandom's, not the secrets module's (with random's
# Mersenne twister, base64 and hmac); the plan's path check parses placeholders without the string module
NOT_FOR_A_WARM_PARADISE_SUBMIT = (
    "procbench.runners.runtime.tables",
    "procbench.dsl.syntax",
    "secrets",
    "hmac",
    "string",
)
WARM_SUBMIT_MODULES_CEILING = (
    300  # 285 (a new file) and 281 (the same file again) when this was written, 237 for score
)


def test_submit_from_the_console_imports_no_frame_library_nor_the_network(tmp_path: Path) -> None:
    db = tmp_path / "store" / "board.duckdb"
    predictions = _sample("openpi", "strong-model.jsonl")
    args = [
        "submit",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(predictions),
        "--model",
        "m",
        "--db",
        str(db),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    ]
    status, imported, stderr = _imported_after(
        args, cache_dir=tmp_path / "cache", probe=_CONSOLE_PROBE
    )
    assert status == 0, stderr
    assert (
        "procbench.submissions.intake" in imported and "_duckdb" in imported and db.is_file()
    )  # the probe saw the submission scored and stored
    top = {name.partition(".")[0] for name in imported}
    assert not top & set(NOT_FOR_SUBMIT), sorted(top & set(NOT_FOR_SUBMIT))
    assert len(imported) <= SUBMIT_MODULES_CEILING, len(imported)
    again, imported, stderr = _imported_after(
        args, cache_dir=tmp_path / "cache", probe=_CONSOLE_PROBE
    )  # the same file again: stored once
    assert again == 0, stderr
    assert not {name.partition(".")[0] for name in imported} & set(NOT_FOR_SUBMIT)
    # the spec cache filled by the first run: the spec and the runner come from it as `score`'s runner does
    # (no parser, checker or compiler), and a task no judge grades imports neither the judge nor Jinja2
    assert not {name.partition(".")[0] for name in imported} & set(NOT_FOR_A_CACHED_SUBMIT)
    assert not set(imported) & set(SPEC_LANGUAGE_AT_A_MISS), sorted(
        set(imported) & set(SPEC_LANGUAGE_AT_A_MISS)
    )
    assert not [m for m in imported if m.startswith("procbench.runners.pmllm")]
    assert not _unwanted(imported, NOT_FOR_A_WARM_SUBMIT), _unwanted(
        imported, NOT_FOR_A_WARM_SUBMIT
    )
    assert len(imported) <= WARM_SUBMIT_MODULES_CEILING, len(imported)


def test_a_warm_submit_to_an_existing_store_imports_what_intake_needs(tmp_path: Path) -> None:
    """A new file to a store that exists, then the same file again, with the spec cache filled: DuckDB's engine
    module only, no data checks, and a bounded module count; the store holds each file once, as before."""
    db = tmp_path / "store" / "board.duckdb"

    def submit(name: str) -> tuple[int, set[str], str]:
        args = [
            "submit",
            "paradise-tip",
            "--split",
            "test",
            "--predictions",
            str(_sample("paradise-tip", name)),
            "--model",
            name.removesuffix(".jsonl"),
            "--db",
            str(db),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ]
        return _imported_after(args, cache_dir=tmp_path / "cache", probe=_CONSOLE_PROBE)

    first, _, stderr = submit("sample-weak.jsonl")  # makes the store and fills the spec cache
    assert first == 0, stderr
    for name, state in (
        ("sample-strong.jsonl", "a new file"),
        ("sample-strong.jsonl", "the same file again"),
    ):
        status, imported, stderr = submit(name)
        assert status == 0, stderr
        assert "procbench.submissions.intake" in imported and "_duckdb" in imported
        unwanted = _unwanted(
            imported,
            (
                *NOT_FOR_SUBMIT,
                *NOT_FOR_A_CACHED_SUBMIT,
                *NOT_FOR_A_WARM_SUBMIT,
                *NOT_FOR_A_WARM_PARADISE_SUBMIT,
            ),
        )
        assert not unwanted, (state, unwanted)
        assert not set(imported) & set(SPEC_LANGUAGE_AT_A_MISS), sorted(
            set(imported) & set(SPEC_LANGUAGE_AT_A_MISS)
        )
        assert len(imported) <= WARM_SUBMIT_MODULES_CEILING, (state, len(imported))
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT model FROM submissions ORDER BY model").fetchall()
    assert stored == [("sample-strong",), ("sample-weak",)]


# issue #31: building a dataclass compiles its methods (about a millisecond of CPU each on the bench machine), so the
# dataclasses a warm command builds are counted: ceilings, not targets. A warm PARADISE submit built 91 when its
# spec's model imported the gold readers (runners/runtime/tables.py) and the syntax tree for a constant and a span
# class; 69 with the spec's model (28 of them); 41 since the board fields come from the plan (dsl/board_spec.py).
WARM_PARADISE_SUBMIT_DATACLASSES_AT_MOST = 44

_DATACLASS_PROBE = """
import atexit, dataclasses, json, sys
_built = []
_process_class = dataclasses._process_class
def _counted(cls, *args, **kwargs):
    _built.append(cls.__module__ + "." + cls.__qualname__)
    return _process_class(cls, *args, **kwargs)
dataclasses._process_class = _counted
def _report():
    sys.stdout.flush()
    sys.__stdout__.write("\\nDATACLASSES " + json.dumps(_built) + "\\n")
atexit.register(_report)
sys.argv = ["procbench", *sys.argv[1:]]
from procbench.console import script
sys.exit(script())
"""


def test_a_warm_paradise_submit_builds_a_bounded_number_of_dataclasses(tmp_path: Path) -> None:
    db = tmp_path / "store" / "board.duckdb"
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "PROCBENCH_CACHE_DIR": str(tmp_path / "cache"),
    }

    def submit(name: str) -> list[str]:
        args = ["submit", "paradise-tip", "--split", "test"]
        args += ["--predictions", str(_sample("paradise-tip", name))]
        args += ["--model", name.removesuffix(".jsonl"), "--db", str(db)]
        args += ["--data-dir", str(SAMPLE_DATA_ROOT)]
        done = subprocess.run(
            [sys.executable, "-c", _DATACLASS_PROBE, *args],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        line = next(
            line for line in reversed(done.stdout.splitlines()) if line.startswith("DATACLASSES ")
        )
        return list(json.loads(line.removeprefix("DATACLASSES ")))

    submit("sample-weak.jsonl")  # makes the store and fills the spec cache
    for state in ("a new file", "the same file again"):
        built = submit("sample-strong.jsonl")
        assert any(name.startswith("procbench.submissions.intake.") for name in built)  # it ran
        assert not [name for name in built if name.startswith("procbench.dsl.syntax.")], state
        assert not [name for name in built if name.startswith("procbench.dsl.model.")], state
        assert len(built) <= WARM_PARADISE_SUBMIT_DATACLASSES_AT_MOST, (state, len(built))
