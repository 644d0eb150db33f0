"""The Python API, mirroring the CLI: check specs, fetch data, score predictions, submit them.

The examples run on the bundled samples (``tests/test_api_doctests.py`` runs them in CI); with the real
data, leave ``data_dir`` out (``PROCBENCH_DATA``) or fetch it first with
``procbench.fetch("PARADISE", split="test")`` (``procbench data fetch PARADISE --split test``).

    >>> import procbench
    >>> from procbench.paths import SAMPLE_DATA_ROOT as samples, SAMPLE_SUBMISSIONS_DIR
    >>> preds = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-weak.jsonl"
    >>> result = procbench.score("paradise-tip", preds, split="test", data_dir=samples)
    >>> result.metrics["accuracy"], result.n_items, result.data_kind   # its label is right for item 3 alone
    (0.125, 8, 'sample')

Records (dicts, one per prediction-file line) and data frames (polars or pandas) score as the file
they stand for would (the sample's gold labels are 2 0 3 1 1 3 0 2: ending 0 is right for items 1 and 6):

    >>> records = [{"id": i, "label": 0} for i in range(8)]
    >>> procbench.score("paradise-tip", records, split="test", data_dir=samples).metrics["accuracy"]
    0.25
    >>> import polars as pl
    >>> procbench.score("paradise-tip", pl.DataFrame(records), split="test", data_dir=samples).metrics["accuracy"]
    0.25

A ``--limit`` run scores only the items it names (``partial=True``), and says how much of the split that is:

    >>> part = procbench.score("paradise-tip", records[:2], split="test", data_dir=samples, partial=True)
    >>> part.partial, part.coverage.scored, part.coverage.total
    (True, 2, 8)

Every failure is an exception importable from ``procbench``:

    >>> try:
    ...     procbench.score("paradise-tip", [{"id": 0, "label": 9}], split="test", data_dir=samples)
    ... except procbench.InvalidPredictions as exc:  # every problem, by record number
    ...     print(exc)
    2 problems in records
      records:1: label must be an integer 0-3, got 9
      records: no prediction for 7 items: ids 1, 2, 3, 4, 5, 6, 7
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from procbench.dsl import SpecError
from procbench.dsl.tasks import (
    all_spec_paths,
    load_task,
    spec_path,
)  # re-exported: the API names them
from procbench.runners.runtime.paths import (
    DEFAULT_DB,
    SAMPLE_DATA_ROOT,
    SPECS_DIR,
    resolve_data_root,
)

if (
    TYPE_CHECKING
):  # the checker and compiler (Lark, the registry, NumPy) are imported when a spec is loaded
    from procbench.dsl.model import TaskSpec
    from procbench.data import FetchResult
    from procbench.results import ScoreResult, SubmitResult
    from procbench.runners.runtime.runner import TaskRunner
    from procbench.submissions.provenance import DataProvenance

# What ``score`` and ``submit`` take as predictions: a file, records (one mapping per line of the file they
# stand for) or a data frame (polars or pandas: one row per record).
Predictions = Union[str, "os.PathLike[str]", Iterable[Mapping[str, Any]], Any]

SUFFIXES = {"jsonl": ".jsonl", "csv": ".csv", "tsv": ".tsv"}
RECORDS_SOURCE = "records"  # what a problem with in-memory records is reported against: ``records:3`` is the third record


def _records(predictions: Any) -> Iterator[Any]:
    """The records of a polars/pandas data frame (its rows as dicts, columns in order), or of an iterable of records."""
    package = type(predictions).__module__.split(".")[0]
    if package == "polars":
        frame = (
            predictions.collect()
            if hasattr(predictions, "collect") and not hasattr(predictions, "iter_rows")
            else predictions
        )
        yield from frame.iter_rows(named=True)
    elif (
        package == "pandas" and hasattr(predictions, "to_dict") and hasattr(predictions, "columns")
    ):
        import polars as pl  # through Arrow: NumPy scalars and nulls become JSON's ints, floats and nulls

        yield from pl.from_pandas(predictions).iter_rows(named=True)
    elif isinstance(predictions, (str, bytes, Mapping)):
        raise TypeError(
            f"predictions must be a file path, an iterable of records (dicts) or a data frame, not a single {type(predictions).__name__}"
        )
    else:
        yield from predictions


def _line(record: Any, fmt: str, number: int) -> str:
    """One line of a prediction file in ``fmt``: a JSON object, or a delimited row of the record's values in order."""
    if fmt in ("csv", "tsv"):
        values = list(record.values()) if isinstance(record, Mapping) else list(record)
        buffer = io.StringIO()
        csv.writer(buffer, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n").writerow(
            ["" if v is None else v for v in values]
        )
        return buffer.getvalue()
    if not isinstance(record, Mapping):
        raise TypeError(
            f"record {number}: a {fmt} prediction file's records are dicts (one JSON object per line), not {type(record).__name__}"
        )
    try:
        return json.dumps(dict(record), ensure_ascii=False, allow_nan=False, default=_plain) + "\n"
    except (TypeError, ValueError) as exc:
        raise TypeError(f"record {number}: not JSON ({exc})") from None


def _plain(value: Any) -> Any:
    """NumPy scalars and arrays, and other sequences, as JSON values (what a frame's cells hold)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


@contextmanager
def prediction_file(spec: TaskSpec, predictions: Predictions) -> Iterator[Path]:
    """A path to score: ``predictions`` itself when it is one, else a temporary file in the task's prediction format.

    Records are written one per line, as JSON objects (``jsonl`` tasks) or as rows of their values in
    order (``tsv``/``csv`` tasks: ProPara's action files), and the file goes through the task's own
    validator and scorer: records give the numbers (and the refusals) the file they stand for gives.
    """
    if isinstance(predictions, (str, os.PathLike)):
        yield Path(predictions)
        return
    fmt = spec.predictions.format
    suffix = SUFFIXES.get(fmt) or (
        spec.predictions.extensions[0] if spec.predictions.extensions else ".jsonl"
    )
    from procbench.runners.runtime._types import InvalidPredictions

    with tempfile.TemporaryDirectory(prefix="procbench-records-") as folder:
        path = Path(folder) / f"predictions{suffix}"
        with path.open("w", encoding="utf-8", newline="") as handle:
            for number, record in enumerate(_records(predictions), start=1):
                handle.write(_line(record, fmt, number))
        try:
            yield path
        except (
            InvalidPredictions
        ) as exc:  # the problems by record number, not by a temporary file's line
            if exc.source in (str(path), path.name):
                exc.source = RECORDS_SOURCE
                exc.args = (exc.render(), *exc.args[1:])
            raise


def provenance(spec: TaskSpec, runner: TaskRunner, root: Path, split: str) -> DataProvenance:
    """What the gold of ``split`` under ``root`` is, as the store records it (``procbench.submissions.provenance``)."""
    from procbench.submissions.provenance import of

    gold, _ = runner.gold(root, split)
    return of(spec, split, root, gold_items=len(gold.items), scorer_digest=runner.spec_digest)


def reported_file_paths() -> list[Path]:
    """The files of paper rows beside the specs (``reported = file("task.reported")``): spec syntax, not tasks."""
    from procbench.dsl.checker import REPORTED_SUFFIX

    return sorted(SPECS_DIR.glob(f"*{REPORTED_SUFFIX}"))


def score(
    task: str | Path,
    predictions: Predictions,
    *,
    split: str,
    data_dir: str | Path | None = None,
    metadata: Mapping[str, Any] | None = None,
    partial: bool = False,
) -> ScoreResult:
    """Score predictions exactly as ``procbench score`` scores a file.

    ``predictions``: a prediction file's path, an iterable of records (dicts: the file's lines) or a
    polars/pandas data frame (one row per record); records and frames give the file's numbers.

    Returns a ScoreResult: ``metrics`` (name -> value), ``slices`` (slice -> value -> SliceResult),
    per-item ``items``, ``n_items``, ``fingerprint``, the validator's ``warnings``, ``coverage``,
    ``provenance`` (``data_kind``, ``data_digest``), ``intervals`` (the board's bootstrap); as data with
    ``to_dict()`` / ``to_json()`` / ``to_polars()`` / ``to_pandas()``.  With ``partial=True`` only the
    items the file names are scored (a harness's ``--limit`` run): the metrics are over those items,
    ``coverage`` says how many of the split's, and the result is marked ``partial`` (never a board
    result).  Raises InvalidPredictions (every problem with its line), SpecError, FileNotFoundError
    (data missing), ValueError (``partial`` with a file that does not name its items), DataRefused (a SpecError
    and a ValueError: what ``check --data`` refuses about the split, with the same diagnostics).
    """
    from procbench.partial import prediction_ids, restrict
    from procbench.results import ScoreResult, int_ids, class_labels

    from procbench.dsl.datacheck import refuse_unfit_data

    from procbench.partial import Coverage

    spec, runner = load_task(task)
    root = resolve_data_root(data_dir)
    coverage = None
    refuse_unfit_data(
        spec, runner, root, split
    )  # what check --data refuses about this split, in its words (DataRefused)
    try:
        with prediction_file(spec, predictions) as path:
            if partial:
                gold, fingerprint = runner.gold(root, split)
                gold, coverage = restrict(gold, prediction_ids(path))
                records, notes = runner.validate(path, gold)
                evaluation = runner.evaluate_records(
                    gold, fingerprint, split, records, notes, metadata
                )
                note = f"partial run: {coverage.scored} of {coverage.total} items scored ({coverage.fraction:.1%}); not comparable with full runs"
                evaluation.warnings.insert(0, note)
            else:
                evaluation = runner.evaluate(root, split, path, metadata)
                coverage = Coverage(
                    evaluation.n_items, evaluation.n_items
                )  # every item of the split scored (``answered``: with a record)
    except ValueError:
        refuse_unfit_data(
            spec, runner, root, split, force=True
        )  # scoring stopped on the gold (a value outside a class set): say it as check --data does
        raise
    known = provenance(spec, runner, root, split)
    return ScoreResult(
        evaluation,
        partial=partial,
        coverage=coverage,
        int_ids=int_ids(spec),
        classes=class_labels(spec),
        provenance=known,
    )


def submit(
    task: str | Path,
    predictions: Predictions,
    *,
    split: str,
    model: str,
    team: str = "anonymous",
    db: str | Path = DEFAULT_DB,
    data_dir: str | Path | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> SubmitResult:
    """Validate, score and store a prediction file in one transaction, as ``procbench submit`` does.

    ``predictions`` as for :func:`score`: a path, records or a data frame (stored as the file they stand for).

    Returns a SubmitResult: ``submission_id``, ``created`` (False when this very file was already
    stored for this task, split, team and model), ``score`` (a ScoreResult; ``evaluation`` too) and
    ``warnings``; ``to_dict()`` / ``to_json()`` / ``to_polars()``.  Nothing is stored when the file is
    invalid (InvalidPredictions lists every problem).  The same file under another model name is
    refused (SubmissionRefused naming the stored submission): a file is stored once.  Partial runs
    are never submitted: score them with ``score(..., partial=True)``.
    """
    from procbench.results import ScoreResult, SubmitResult, class_labels, int_ids
    from procbench.submissions.intake import SubmissionRequest, submit as do_submit

    from procbench.partial import Coverage

    spec, runner = load_task(task)
    root = resolve_data_root(data_dir)
    with prediction_file(spec, predictions) as path:
        outcome = do_submit(
            SubmissionRequest(
                split=split, predictions=path, model=model, team=team, metadata=dict(metadata or {})
            ),
            spec,
            runner,
            data_root=root,
            db_path=Path(db),
        )
    evaluation = outcome.evaluation
    known = provenance(spec, runner, root, split)
    coverage = Coverage(evaluation.n_items, evaluation.n_items)
    scored = ScoreResult(
        evaluation,
        coverage=coverage,
        int_ids=int_ids(spec),
        classes=class_labels(spec),
        provenance=known,
    )
    return SubmitResult(
        outcome.submission_id,
        outcome.created,
        scored,
        outcome.team,
        outcome.receipt,
        tuple(outcome.warnings),
    )


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
    report = data.fetch_all(
        items,
        root,
        cache_dir=Path(cache_dir) if cache_dir else None,
        mirror=mirror,
        show_progress=show_progress,
    )
    if not report.ok:
        raise data.FetchError(
            "\n".join(f"{item.spec.path}: {error}" for item, error in report.failures)
        )
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


def check(
    specs: str | Path | Sequence[str | Path] | None = None,
    *,
    data: bool = False,
    data_dir: str | Path | None = None,
) -> list[SpecCheck]:
    """Check specs (default: every spec in ``specs/``) as ``procbench check [--data]`` does; never raises for spec errors.

    ``data=True`` also checks fields and slices against the data where it is present.
    """
    from procbench.dsl.cache import checked_spec
    from procbench.dsl.compiler import compile_spec

    paths = (
        [spec_path(s) for s in ([specs] if isinstance(specs, (str, Path)) else specs)]
        if specs
        else all_spec_paths()
    )
    out = []
    for path in paths:
        try:
            result = checked_spec(path, search=[path.parent])
        except SpecError as exc:
            out.append(
                SpecCheck(path, None, errors=tuple(d.render(exc.source) for d in exc.diagnostics))
            )
            continue
        warnings = [w.render(result.source) for w in result.warnings]
        errors: list[str] = []
        checked: list[str] = []
        if data:
            from procbench.dsl.datacheck import check_against_data

            root = resolve_data_root(data_dir)
            diagnostics, checked = check_against_data(
                result.spec, compile_spec(result.spec), root, partial=root == SAMPLE_DATA_ROOT
            )
            errors += [d.render(result.source) for d in diagnostics if d.severity == "error"]
            warnings += [d.render(result.source) for d in diagnostics if d.severity != "error"]
        out.append(
            SpecCheck(path, result.spec.name, tuple(errors), tuple(warnings), tuple(checked))
        )
    return out


__all__ = [
    "SpecCheck",
    "SpecError",
    "all_spec_paths",
    "check",
    "fetch",
    "load_task",
    "score",
    "spec_path",
    "submit",
]
