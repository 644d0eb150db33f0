"""Tasks by name: the spec file of a task in ``specs/`` and its checked, compiled runner.

Lives in the dsl layer so that everything above it (intake, re-scoring, the demo, the CLI and the
API) loads tasks the same way without importing the API package; ``procbench.api`` re-exports it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procbench.runners.runtime.paths import SPECS_DIR

if (
    TYPE_CHECKING
):  # the checker and compiler (Lark, the registry, NumPy) are imported when a spec is loaded
    from procbench.dsl.board_spec import BoardSpec
    from procbench.dsl.model import TaskSpec
    from procbench.runners.runtime.runner import TaskRunner


def spec_path(name_or_path: str | Path) -> Path:
    """A spec file from a path, or from a task name looked up in ``specs/``."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".spec" or candidate.exists():
        if not candidate.is_file():
            raise FileNotFoundError(f"no spec file at {candidate}")
        return candidate
    named = SPECS_DIR / f"{name_or_path}.spec"
    if named.is_file():
        return named
    known = ", ".join(sorted(p.stem for p in SPECS_DIR.glob("*.spec")))
    raise FileNotFoundError(f"no task named {name_or_path!r} (known: {known})")


def all_spec_paths() -> list[Path]:
    """Every shipped spec, sorted by file name."""
    return sorted(SPECS_DIR.glob("*.spec"))


@functools.lru_cache(maxsize=64)
def _load(path: str, mtime: float) -> tuple[TaskSpec, TaskRunner]:
    from procbench.dsl.cache import (
        checked_spec,
    )  # checked specs are cached by content (dsl/cache.py)
    from procbench.dsl.compiler import compile_spec

    result = checked_spec(path, search=[SPECS_DIR])
    return result.spec, compile_spec(result.spec)


def load_task(name_or_path: str | Path) -> tuple[TaskSpec, TaskRunner]:
    """Check and compile a spec (cached per file version); raises SpecError."""
    path = spec_path(name_or_path)
    return _load(str(path.resolve()), path.stat().st_mtime)


def load_spec(name_or_path: str | Path) -> TaskSpec:
    """The checked spec of a task name or spec file, from the spec cache when nothing it depends on changed
    (dsl/cache.py), without compiling it: with :func:`load_runner`, what :func:`load_task` gives, at a cache
    hit's cost (``procbench submit``, issue #31).  Raises SpecError."""
    from procbench.dsl.cache import checked_spec

    path = spec_path(name_or_path)
    return checked_spec(str(path.resolve()), search=[SPECS_DIR]).spec


def load_runner(name_or_path: str | Path) -> TaskRunner:
    """The compiled runner of a spec, rebuilt from its cached plan when there is one (dsl/plan.py).

    A hit imports the task's component modules and none of the spec language; a miss checks and
    compiles as :func:`load_task` does, then stores the spec's plan.  Raises SpecError.
    """
    return _planned(Path(str(spec_path(name_or_path).resolve())))[0]


def load_board(name_or_path: str | Path) -> tuple[BoardSpec, TaskRunner]:
    """What intake needs of a task: its board fields (dsl/board_spec.py) and its runner, both from the cached plan
    on a hit (no syntax tree imported), else from the spec checked and compiled as :func:`load_task`.  Raises SpecError."""
    from procbench.dsl.board_spec import BoardSpec

    path = Path(str(spec_path(name_or_path).resolve()))
    runner, plan, spec = _planned(path)
    if spec is not None:
        return BoardSpec.of(spec), runner
    board = BoardSpec.from_plan(plan or {}, lambda: load_spec(path))
    if board is None:  # a plan written without them: the checked spec, from the spec cache
        board = BoardSpec.of(load_spec(path))
    # the spec changed between the two reads: both from it as it is now
    if board.name != runner.name:
        spec, runner = load_task(path)
        board = BoardSpec.of(spec)
    return board, runner


def _planned(path: Path) -> tuple[TaskRunner, dict[str, Any] | None, TaskSpec | None]:
    """(the runner, the cached plan it was built from, None) on a hit; (the runner, the plan, the checked spec) on a miss."""
    from procbench.dsl.cache import cached_plan
    from procbench.dsl.gold_fingerprints import for_spec
    from procbench.dsl.plan import FORMAT, build, is_plain

    plan = cached_plan(path, search=[SPECS_DIR])
    if isinstance(plan, dict) and plan.get("format") == FORMAT:
        try:
            runner = build(plan)
        except Exception:  # noqa: BLE001 - a plan that does not build (planted, damaged) is a miss; compiling raises any real error
            pass
        else:
            # the gold's fingerprint remembered by its files' content (dsl/gold_fingerprints.py)
            runner.fingerprints = for_spec(path)
            return runner, plan, None
    spec, runner = load_task(path)
    from procbench.dsl.cache import store_plan
    from procbench.dsl.compiler import plan_of

    plan = plan_of(spec, runner.spec_digest)
    if is_plain(plan):  # always, for what the checker accepts; anything else is not stored
        store_plan(path, [SPECS_DIR], spec, plan)
    runner.fingerprints = for_spec(path)
    return runner, plan, spec
