"""The Python API, mirroring the CLI: check specs, fetch data, score a file, submit it.

    >>> import procbench
    >>> procbench.fetch("PARADISE", split="test")                 # procbench data fetch PARADISE --split test
    >>> result = procbench.score("paradise-tip", "preds.jsonl", split="test")
    >>> outcome = procbench.submit("paradise-tip", "preds.jsonl", split="test", model="my-model", team="me")
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsl import SpecError, check_file, compile_spec
from dsl.model import TaskSpec
from procbench.paths import SAMPLE_DATA_ROOT, SPECS_DIR, resolve_data_root
from runners.runner import Evaluation, TaskRunner

if TYPE_CHECKING:
    from procbench.data import FetchResult
    from submissions.intake import SubmissionOutcome

DEFAULT_DB = Path("var/procbench.duckdb")


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


def reported_file_paths() -> list[Path]:
    """The files of paper rows beside the specs (``reported = file("task.reported")``): spec syntax, not tasks."""
    from dsl.checker import REPORTED_SUFFIX

    return sorted(SPECS_DIR.glob(f"*{REPORTED_SUFFIX}"))


@functools.lru_cache(maxsize=64)
def _load(path: str, mtime: float) -> tuple[TaskSpec, TaskRunner]:
    result = check_file(path, search=[SPECS_DIR])
    return result.spec, compile_spec(result.spec)


def load_task(name_or_path: str | Path) -> tuple[TaskSpec, TaskRunner]:
    """Check and compile a spec (cached per file version); raises SpecError."""
    path = spec_path(name_or_path)
    return _load(str(path.resolve()), path.stat().st_mtime)


def score(task: str | Path, predictions: str | Path, *, split: str, data_dir: str | Path | None = None, metadata: Mapping[str, Any] | None = None) -> Evaluation:
    """Score a prediction file exactly as ``procbench score`` does.

    Returns an Evaluation: ``metrics`` (name -> value), ``slices`` (slice -> value -> SliceResult),
    per-item ``items``, ``n_items``, ``fingerprint`` and the validator's ``warnings``. Raises
    InvalidPredictions (every problem with its line), SpecError, FileNotFoundError (data missing).
    """
    _, runner = load_task(task)
    return runner.evaluate(resolve_data_root(data_dir), split, Path(predictions), metadata)


def submit(
    task: str | Path,
    predictions: str | Path,
    *,
    split: str,
    model: str,
    team: str = "anonymous",
    db: str | Path = DEFAULT_DB,
    data_dir: str | Path | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> SubmissionOutcome:
    """Validate, score and store a prediction file in one transaction, as ``procbench submit`` does.

    Returns a SubmissionOutcome: ``submission_id``, ``created`` (False when the same file was already
    stored for this task, split and team), the ``evaluation`` and ``warnings``. Nothing is stored when
    the file is invalid (InvalidPredictions lists every problem).
    """
    from submissions.intake import submit as do_submit

    spec, runner = load_task(task)
    return do_submit(spec, runner, data_root=resolve_data_root(data_dir), split=split, predictions=Path(predictions), model=model, team=team, db_path=Path(db), metadata=dict(metadata or {}))


def fetch(
    target: str,
    *,
    to: str | Path | None = None,
    split: str | None = None,
    cache_dir: str | Path | None = None,
    mirror: str | None = None,
    show_progress: bool = False,
) -> list[FetchResult]:
    """Download a benchmark's (e.g. ``"PARADISE"``) or a task's data files, as ``procbench data fetch`` does.

    Files land under ``to`` (default: ``PROCBENCH_DATA``, else ``~/.local/share/procbench/data``) in
    the upstream layout, verified against the sizes and sha256 in the specs' ``fetch`` blocks;
    verified files are kept, interrupted downloads resume, and a second call works offline from the
    cache. Returns one FetchResult per file (``path``, ``source``: present / cache / downloaded / hub).
    Raises FetchError naming every file that could not be fetched or verified.
    """
    from procbench import data

    items = data.plan(target, split=split)
    root = Path(to).expanduser().resolve() if to else data.default_fetch_root()
    report = data.fetch_all(items, root, cache_dir=Path(cache_dir) if cache_dir else None, mirror=mirror, show_progress=show_progress)
    if not report.ok:
        raise data.FetchError("\n".join(f"{item.spec.path}: {error}" for item, error in report.failures))
    return list(report.results)


@dataclass(frozen=True)
class SpecCheck:
    """The outcome of checking one spec: its errors and warnings as ``procbench check`` prints them."""

    path: Path
    task: str | None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    data_checked: tuple[str, ...] = ()  # splits checked against the data (``data=True``)

    @property
    def ok(self) -> bool:
        return not self.errors


def check(specs: str | Path | Sequence[str | Path] | None = None, *, data: bool = False, data_dir: str | Path | None = None) -> list[SpecCheck]:
    """Check specs (default: every spec in ``specs/``) as ``procbench check [--data]`` does; never raises for spec errors.

    ``data=True`` also checks fields and slices against the data where it is present.
    """
    paths = [spec_path(s) for s in ([specs] if isinstance(specs, (str, Path)) else specs)] if specs else all_spec_paths()
    out = []
    for path in paths:
        try:
            result = check_file(path, search=[path.parent])
        except SpecError as exc:
            out.append(SpecCheck(path, None, errors=tuple(d.render(exc.source) for d in exc.diagnostics)))
            continue
        warnings = [w.render(result.source) for w in result.warnings]
        errors: list[str] = []
        checked: list[str] = []
        if data:
            from dsl.datacheck import check_against_data

            root = resolve_data_root(data_dir)
            diagnostics, checked = check_against_data(result.spec, compile_spec(result.spec), root, partial=root == SAMPLE_DATA_ROOT)
            errors += [d.render(result.source) for d in diagnostics if d.severity == "error"]
            warnings += [d.render(result.source) for d in diagnostics if d.severity != "error"]
        out.append(SpecCheck(path, result.spec.name, tuple(errors), tuple(warnings), tuple(checked)))
    return out


__all__ = ["SpecCheck", "SpecError", "all_spec_paths", "check", "fetch", "load_task", "score", "spec_path", "submit"]
