"""The Python API, mirroring the CLI: check specs, fetch data, score a file, submit it.

    >>> import procbench
    >>> procbench.fetch("PARADISE", split="test")                 # procbench data fetch PARADISE --split test
    >>> result = procbench.score("paradise-tip", "preds.jsonl", split="test")
    >>> outcome = procbench.submit("paradise-tip", "preds.jsonl", split="test", model="my-model", team="me")
    >>> result.to_dict(), result.to_polars()                        # as data: JSON-ready, one row per item
    >>> procbench.score("paradise-tip", "limit20.jsonl", split="test", partial=True).coverage   # a --limit run
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsl import SpecError
from dsl.tasks import all_spec_paths, load_task, spec_path  # re-exported: the API names them
from runners.paths import DEFAULT_DB, SAMPLE_DATA_ROOT, SPECS_DIR, resolve_data_root

if TYPE_CHECKING:  # the checker and compiler (Lark, the registry, NumPy) are imported when a spec is loaded
    from procbench.data import FetchResult
    from procbench.results import ScoreResult, SubmitResult


def reported_file_paths() -> list[Path]:
    """The files of paper rows beside the specs (``reported = file("task.reported")``): spec syntax, not tasks."""
    from dsl.checker import REPORTED_SUFFIX

    return sorted(SPECS_DIR.glob(f"*{REPORTED_SUFFIX}"))


def score(
    task: str | Path,
    predictions: str | Path,
    *,
    split: str,
    data_dir: str | Path | None = None,
    metadata: Mapping[str, Any] | None = None,
    partial: bool = False,
) -> ScoreResult:
    """Score a prediction file exactly as ``procbench score`` does.

    Returns a ScoreResult: ``metrics`` (name -> value), ``slices`` (slice -> value -> SliceResult),
    per-item ``items``, ``n_items``, ``fingerprint``, the validator's ``warnings``; as data with
    ``to_dict()`` / ``to_json()`` / ``to_polars()`` / ``to_pandas()``.  With ``partial=True`` only the
    items the file names are scored (a harness's ``--limit`` run): the metrics are over those items,
    ``coverage`` says how many of the split's, and the result is marked ``partial`` (never a board
    result).  Raises InvalidPredictions (every problem with its line), SpecError, FileNotFoundError
    (data missing), ValueError (``partial`` with a file that does not name its items), DataRefused (a SpecError
    and a ValueError: what ``check --data`` refuses about the split, with the same diagnostics).
    """
    from procbench.partial import prediction_ids, restrict
    from procbench.results import ScoreResult, int_ids, class_labels

    from dsl.datacheck import refuse_unfit_data

    spec, runner = load_task(task)
    root = resolve_data_root(data_dir)
    coverage = None
    refuse_unfit_data(spec, runner, root, split)  # what check --data refuses about this split, in its words (DataRefused)
    try:
        if partial:
            gold, fingerprint = runner.gold(root, split)
            gold, coverage = restrict(gold, prediction_ids(Path(predictions)))
            records, notes = runner.validate(Path(predictions), gold)
            evaluation = runner.evaluate_records(gold, fingerprint, split, records, notes, metadata)
            note = f"partial run: {coverage.scored} of {coverage.total} items scored ({coverage.fraction:.1%}); not comparable with full runs"
            evaluation.warnings.insert(0, note)
        else:
            evaluation = runner.evaluate(root, split, Path(predictions), metadata)
    except ValueError:
        refuse_unfit_data(spec, runner, root, split, force=True)  # scoring stopped on the gold (a value outside a class set): say it as check --data does
        raise
    return ScoreResult(evaluation, partial=partial, coverage=coverage, int_ids=int_ids(spec), classes=class_labels(spec))


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
) -> SubmitResult:
    """Validate, score and store a prediction file in one transaction, as ``procbench submit`` does.

    Returns a SubmitResult: ``submission_id``, ``created`` (False when this very file was already
    stored for this task, split, team and model), ``score`` (a ScoreResult; ``evaluation`` too) and
    ``warnings``; ``to_dict()`` / ``to_json()`` / ``to_polars()``.  Nothing is stored when the file is
    invalid (InvalidPredictions lists every problem).  The same file under another model name is
    refused (SubmissionRefused naming the stored submission): a file is stored once.  Partial runs
    are never submitted: score them with ``score(..., partial=True)``.
    """
    from procbench.results import ScoreResult, SubmitResult, class_labels, int_ids
    from submissions.intake import submit as do_submit

    spec, runner = load_task(task)
    outcome = do_submit(
        spec,
        runner,
        data_root=resolve_data_root(data_dir),
        split=split,
        predictions=Path(predictions),
        model=model,
        team=team,
        db_path=Path(db),
        metadata=dict(metadata or {}),
    )
    scored = ScoreResult(outcome.evaluation, int_ids=int_ids(spec), classes=class_labels(spec))
    return SubmitResult(outcome.submission_id, outcome.created, scored, outcome.team, outcome.receipt, tuple(outcome.warnings))


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
    from dsl.cache import checked_spec
    from dsl.compiler import compile_spec

    paths = [spec_path(s) for s in ([specs] if isinstance(specs, (str, Path)) else specs)] if specs else all_spec_paths()
    out = []
    for path in paths:
        try:
            result = checked_spec(path, search=[path.parent])
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
