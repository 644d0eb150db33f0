"""The Python API, mirroring the CLI: load a task, score a file, submit it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dsl import SpecError, check_file, compile_spec
from dsl.model import TaskSpec
from procbench.paths import SPECS_DIR, resolve_data_root
from runners.runner import Evaluation, TaskRunner


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
    return sorted(SPECS_DIR.glob("*.spec"))


@functools.lru_cache(maxsize=64)
def _load(path: str, mtime: float) -> tuple[TaskSpec, TaskRunner]:
    result = check_file(path, search=[SPECS_DIR])
    return result.spec, compile_spec(result.spec)


def load_task(name_or_path: str | Path) -> tuple[TaskSpec, TaskRunner]:
    """Check and compile a spec (cached per file version); raises SpecError."""
    path = spec_path(name_or_path)
    return _load(str(path.resolve()), path.stat().st_mtime)


def score(task: str | Path, predictions: str | Path, *, split: str, data_dir: str | Path | None = None, metadata: Mapping[str, Any] | None = None) -> Evaluation:
    """Score a prediction file exactly as ``procbench score`` does."""
    _, runner = load_task(task)
    return runner.evaluate(resolve_data_root(data_dir), split, Path(predictions), metadata)


__all__ = ["SpecError", "all_spec_paths", "load_task", "score", "spec_path"]
