"""Code beside a spec never runs by itself (issue 29): only installed entry points and folders the operator names load.

A ``components/evil.py`` beside a spec writes a marker file when it is imported.  ``check`` (with and
without ``--data``, and ``--ship``), ``fmt``, ``compile``, ``score``, ``submit`` and the site's board
must never import it, neither through typer (CliRunner) nor through the console script's lean path (a
subprocess); ``--components DIR`` or ``PROCBENCH_COMPONENTS=DIR`` loads it.  A spec that uses a
component only that folder defines is refused by ``check`` with the file, its line and the flag.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import PROJECT_ROOT
from procbench.runners.runtime import registry
from tests.doc_files import extract
from tests.site_app import page

EVIL = '''\
"""Imported only if the operator allowed this folder: writes a marker beside itself."""

from pathlib import Path

from procbench.ext import component, get

Path(__file__).with_name("IMPORTED").write_text("this module ran", encoding="utf-8")


@component("similarity", "evil_similarity", takes="str", gives="float")
def evil_similarity() -> object:
    """token_f1 under another name."""
    return get("similarity", "token_f1").build()
'''


@pytest.fixture(autouse=True)
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What a test registers or allows leaves with it."""
    # set, then removed: monkeypatch then restores the variable's absence after the test, whatever --components set meanwhile
    monkeypatch.setenv(registry.COMPONENTS_ENV, "")
    monkeypatch.delenv(registry.COMPONENTS_ENV)
    monkeypatch.setenv("PROCBENCH_CACHE_DIR", "off")  # every command really checks the spec
    registry.all_components()
    saved = dict(registry._REGISTRY)
    files = dict(registry._spec_dir_files)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
    registry._spec_dir_files.clear()
    registry._spec_dir_files.update(files)
    registry._folders_beside_specs.clear()


@pytest.fixture
def guide(tmp_path: Path) -> Path:
    """The guide's files (docs/adding-a-benchmark.md) with ``specs/components/evil.py`` beside its spec."""
    extract(PROJECT_ROOT / "docs" / "adding-a-benchmark.md", tmp_path)
    (tmp_path / "specs" / "components").mkdir()
    (tmp_path / "specs" / "components" / "evil.py").write_text(EVIL, encoding="utf-8")
    return tmp_path


def _marker(root: Path) -> Path:
    return root / "specs" / "components" / "IMPORTED"


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    return f"{result.exit_code}\n{result.output}"


def _console(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script (its lean path for check and score) in a fresh interpreter."""
    inherited = {k: v for k, v in os.environ.items() if k != registry.COMPONENTS_ENV}
    environment = {
        **inherited,
        "PYTHONPATH": str(PROJECT_ROOT),
        "PROCBENCH_CACHE_DIR": "off",
        **env,
    }
    code = "import sys; from procbench.console import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_no_command_imports_the_code_beside_a_spec(
    guide: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, data, predictions, db = (
        guide / "specs" / "toolproc.spec",
        guide / "data",
        guide / "predictions.jsonl",
        guide / "store.duckdb",
    )
    runs = [
        ("check", str(spec)),
        ("check", str(spec), "--data", "--data-dir", str(data)),
        ("check", str(spec), "--ship"),
        ("fmt", "--check", str(spec)),
        ("compile", str(spec), "--explain", "--out-dir", str(guide / "out")),
        (
            "score",
            str(spec),
            "--split",
            "dev",
            "--predictions",
            str(predictions),
            "--data-dir",
            str(data),
            "--json",
        ),
        (
            "submit",
            str(spec),
            "--split",
            "dev",
            "--predictions",
            str(predictions),
            "--data-dir",
            str(data),
            "--model",
            "m",
            "--team",
            "me",
            "--db",
            str(db),
        ),
        ("components",),
    ]
    for args in runs:
        out = _cli(*args)
        assert not _marker(guide).exists(), (
            f"procbench {' '.join(args)} imported components/evil.py:\n{out}"
        )
        assert not out.startswith(("2\n", "4\n", "5\n")), (
            out
        )  # each ran (--ship exits 1: this task bundles no samples)
    lean = (
        ("check", "specs/toolproc.spec"),
        (
            "score",
            "specs/toolproc.spec",
            "--split",
            "dev",
            "--predictions",
            "predictions.jsonl",
            "--data-dir",
            "data",
        ),
    )
    for args in lean:
        done = _console(guide, *args)
        assert done.returncode == 0, done.stderr
        assert not _marker(guide).exists(), (
            f"the console's procbench {' '.join(args)} imported components/evil.py"
        )
    assert page(db, monkeypatch, "board", task="toolproc", split="dev").dataframe, (
        "the board shows the submission"
    )
    assert not _marker(guide).exists(), "the site imported components/evil.py"
    assert "evil_similarity" not in registry.names("similarity")


def test_a_name_only_that_folder_defines_is_refused_with_the_file_and_the_flag(guide: Path) -> None:
    spec = guide / "specs" / "toolproc.spec"
    spec.write_text(
        spec.read_text(encoding="utf-8").replace(
            "similarity = token_f1()", "similarity = evil_similarity()"
        ),
        encoding="utf-8",
    )
    folder = guide / "specs" / "components"
    defined_at = next(
        n for n, line in enumerate(EVIL.splitlines(), 1) if line.startswith("@component(")
    )

    refused = _cli("check", str(spec))
    assert refused.startswith("3\n"), refused
    assert (
        f"unknown similarity 'evil_similarity': {folder / 'evil.py'}:{defined_at} defines it"
        in refused
    )
    assert f"--components {folder}" in refused and f"{registry.COMPONENTS_ENV}={folder}" in refused
    assert (
        "32 |       similarity = evil_similarity()" in refused
    )  # at the spec's line, with a caret
    assert not _marker(guide).exists()

    done = _console(guide, "check", "specs/toolproc.spec")  # the console script says the same
    assert (
        done.returncode == 3
        and "specs/components/evil.py" in done.stderr
        and "--components specs/components" in done.stderr
    ), done.stderr
    assert not _marker(guide).exists()

    allowed = _cli("check", str(spec), "--components", str(folder))
    assert allowed.startswith("0\n"), allowed
    assert _marker(guide).exists()
    assert f"code: {folder / 'evil.py'}" in allowed  # check says which code the spec loads
    assert registry.get("similarity", "evil_similarity").origin == str(folder.resolve() / "evil.py")


def test_the_setting_allows_a_folder_for_every_command(guide: Path) -> None:
    spec = guide / "specs" / "toolproc.spec"
    spec.write_text(
        spec.read_text(encoding="utf-8").replace(
            "similarity = token_f1()", "similarity = evil_similarity()"
        ),
        encoding="utf-8",
    )
    args = (
        "score",
        "specs/toolproc.spec",
        "--split",
        "dev",
        "--predictions",
        "predictions.jsonl",
        "--data-dir",
        "data",
        "--json",
    )
    assert _console(guide, *args).returncode == 3 and not _marker(guide).exists()
    done = _console(guide, *args, **{registry.COMPONENTS_ENV: "specs/components"})
    assert done.returncode == 0, done.stderr
    assert (
        round(json.loads(done.stdout)["metrics"]["tools_f1"], 6) == 0.694444
    )  # the guide's hand-computed F1: token_f1 under another name
    assert _marker(guide).exists()
