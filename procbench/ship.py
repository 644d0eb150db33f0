"""``procbench check --ship``: what a task must have before it ships with procbench, in one list.

A new task needs only its spec (it checks, it is canonically formatted) to be scored, submitted and
ranked: nothing below is asked of it by ``procbench check`` or by the tests that iterate over
``specs/`` (each applies to the tasks that have the thing it tests).  A task that *ships* (appears on
the offline demo board, in the wheel's sample scoring and on the real board) also needs:

* a current data lock (``<spec>.lock``) when it has ``fetch`` blocks (checking the spec reads it);
* bundled sample data: a few items of at least one split under ``samples/data/``, in the benchmark's
  own layout, that pass the data check;
* sample submissions under ``samples/submissions/<task>/`` (a variant may use its parent's) that score
  on those samples;
* a baseline (``runners/baselines``) when it has ``fetch`` blocks: the real board shows one for every
  task whose real data it holds (PM-LLM's rows are the upstream models' answers instead).

Every missing requirement is listed with what to do (docs/adding-a-benchmark.md, "Before it ships").
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

from procbench.exit_codes import (
    EXIT_FINDINGS as EXIT_MISSING,
)  # like `fmt --check`: nothing is wrong with the spec, something is missing beside it
from procbench.exit_codes import EXIT_SPEC_ERROR

# Tasks whose real board rows come from upstream answers, not from a baseline (procbench/demo.py fills them).
UPSTREAM_ROWS = frozenset({"pm-llm-benchmark"})


@dataclass(frozen=True)
class Missing:
    """One ship requirement a task does not meet: what, and what to do."""

    what: str
    todo: str

    def render(self) -> str:
        return f"  - {self.what}\n    to do: {self.todo}"


def sample_submission_files(spec: Any) -> list[Path]:
    """The task's sample submissions (its own folder, else its parent's for a variant), without ``.meta.json`` files."""
    for name in (spec.name, *([str(spec.extends)] if spec.extends else [])):
        folder = SAMPLE_SUBMISSIONS_DIR / name
        if folder.is_dir():
            files = sorted(
                p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json")
            )
            if files:
                return files
    return []


def requirements(spec: Any, runner: Any, spec_file: Path) -> list[Missing]:
    """Every ship requirement ``spec`` (checked, with its compiled ``runner``) does not meet."""
    from procbench.dsl import lock as locking
    from procbench.dsl.datacheck import check_against_data

    missing: list[Missing] = []
    lock = locking.lock_path(spec_file)
    if (
        spec.fetch and not lock.is_file()
    ):  # a stale or missing lock already fails the check; kept for a spec read some other way
        missing.append(
            Missing(
                f"data lock: no {lock.name}",
                f"run `procbench data lock {spec.name}` with the upstream files under the data root",
            )
        )
    diagnostics, checked = check_against_data(spec, runner, SAMPLE_DATA_ROOT, partial=True)
    errors = [d for d in diagnostics if d.severity == "error"]
    if not checked or errors:
        detail = (
            f": {errors[0].message}" if errors else f": no split of {spec.name} under samples/data"
        )
        missing.append(
            Missing(
                "bundled sample data" + detail,
                f"copy a few items of at least one split, in the benchmark's own layout, under samples/data/ (the paths the spec's data block names), "
                f"then `procbench check {spec.name} --data --data-dir samples/data`",
            )
        )
    files = sample_submission_files(spec)
    scored = [f for f in files if checked and _scores(runner, f, checked)]
    if not scored:
        missing.append(
            Missing(
                f"sample submissions: none of {len(files)} scores on the samples"
                if files
                else f"sample submissions: none in samples/submissions/{spec.name}/",
                f"add prediction files (e.g. a good and a weak one) under samples/submissions/{spec.name}/ "
                f"that `procbench score {spec.name} --data-dir samples/data` accepts",
            )
        )
    if spec.fetch and spec.name not in UPSTREAM_ROWS:
        from procbench.runners import baselines

        if not baselines.for_task(spec.name):
            missing.append(
                Missing(
                    "baseline: none registered for this task (the real board shows one for every task whose data it holds)",
                    f'register one in runners/baselines/simple.py (`@baseline("{spec.name}-...", tasks=("{spec.name}",), suffix=...)`)',
                )
            )
    return missing


def _scores(runner: Any, predictions: Path, splits: Sequence[str]) -> bool:
    from procbench.runners.runtime._types import InvalidPredictions

    for split in splits:
        try:
            runner.evaluate(SAMPLE_DATA_ROOT, split, predictions)
        except (InvalidPredictions, FileNotFoundError, ValueError):
            continue
        return True
    return False


def _say(text: str, *, err: bool = False) -> None:
    stream = (
        sys.stderr if err else sys.stdout
    )  # printed here: procbench/console_commands.py calls this module
    stream.write(text + "\n")
    stream.flush()


def check_ship(specs: Sequence[str] | None) -> int:
    """Check each spec (default: every spec in specs/) and list every ship requirement it misses; the exit status."""
    from procbench.dsl.errors import SpecError
    from procbench.dsl.tasks import all_spec_paths, load_task, spec_path

    paths = [spec_path(s) for s in specs] if specs else all_spec_paths()
    status = 0
    for path in paths:
        try:
            spec, runner = load_task(path)
        except SpecError as exc:
            _say(str(exc), err=True)
            status = max(status, EXIT_SPEC_ERROR)
            continue
        missing = requirements(spec, runner, path)
        if missing:
            _say(
                f"{path}: task {spec.name} cannot ship yet: {len(missing)} requirement(s) missing (docs/adding-a-benchmark.md, 'Before it ships')",
                err=True,
            )
            for item in missing:
                _say(item.render(), err=True)
            status = max(status, EXIT_MISSING)
        else:
            _say(f"ok  {path}  (task {spec.name}: ready to ship)")
    return status
