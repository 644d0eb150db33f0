"""``procbench check --ship``: every task that ships meets every requirement; a new task is told what it lacks.

A task ships when it has sample submissions or fetch blocks (it is then on the demo board, in the
wheel's sample scoring or on the real board); the guide's new task (docs/adding-a-benchmark.md) has
neither, and ``check --ship`` lists the two things it lacks, each with what to do.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from procbench.dsl.tasks import all_spec_paths, load_task
from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_SUBMISSIONS_DIR
from tests.doc_files import extract


def _ships(spec_file: Path) -> bool:
    spec, _ = load_task(spec_file)
    return bool(spec.fetch) or any(
        (SAMPLE_SUBMISSIONS_DIR / str(name)).is_dir() for name in (spec.name, spec.extends) if name
    )


def test_every_task_that_ships_meets_every_requirement() -> None:
    shipping = [str(p) for p in all_spec_paths() if _ships(p)]
    assert len(shipping) >= 10  # the shipped tasks (README's list) all have both
    result = CliRunner().invoke(app, ["check", "--ship", *shipping])
    assert result.exit_code == 0, result.output
    assert result.output.count("ready to ship") == len(shipping)


def test_a_new_task_is_told_what_it_lacks_and_what_to_do(tmp_path: Path) -> None:
    extract(PROJECT_ROOT / "docs" / "adding-a-benchmark.md", tmp_path)
    result = CliRunner().invoke(app, ["check", "--ship", str(tmp_path / "specs" / "toolproc.spec")])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "task toolproc cannot ship yet: 2 requirement(s) missing" in lines[0]
    assert [line.strip() for line in lines if line.strip().startswith("- ")] == [
        "- bundled sample data: no split of toolproc under samples/data",
        "- sample submissions: none in samples/submissions/toolproc/",
    ]
    assert sum(line.strip().startswith("to do: ") for line in lines) == 2
    assert (
        "samples/submissions/toolproc/" in result.output
        and "procbench check toolproc --data --data-dir samples/data" in result.output
    )


def test_a_broken_spec_exits_3_under_ship(tmp_path: Path) -> None:
    spec = tmp_path / "broken.spec"
    spec.write_text("task broken {\n  title = \n}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["check", "--ship", str(spec)])
    assert result.exit_code == 3 and "broken.spec:" in result.output, result.output
