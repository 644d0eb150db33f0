"""``procbench import eee``: an Every Eval Ever (EEE, schema 0.3.0) record of a task the board hosts, onto the board.

* With per-instance data that holds the predictions (each line's ``output.raw``: the prediction file's
  line(s) for the item, as ``procbench export eee`` writes them for a stored JSON-lines file), the
  predictions are put back together into a prediction file and go through the normal intake
  (``submissions.submit``): validated, scored by the board and ranked like any upload.  The record's
  own figures are only compared with the board's (differences are warnings).
* Otherwise the record's figures become an external row (``procbench.submissions.external``): a reference row
  (team ``reference``, no items), shown unranked with its source, over the data it declares (the
  ``data_digest`` of a procbench record; else the task's locked split, as paper rows).

Every input is untrusted: the record and the samples file are size-bounded, parsed with bounded
nesting, checked field by field (the schema's required fields and types that this reads), and the
task a record names must be a plain task name with a spec; any problem is one line (:class:`EeeRefused`)
and nothing is stored.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procbench.imports.logged import loads_log_json
from procbench.runners.runtime.predictions import TooDeep

SCHEMA_MAJOR_MINOR = "0.3"  # the EEE schema version this reads (0.3.x)
MAX_RECORD_BYTES = 16 * 1024 * 1024  # one aggregate record
MAX_SAMPLES_BYTES = 256 * 1024 * 1024  # its per-instance file (as intake's upload limit)
MAX_RESULTS = 10_000
MAX_TEXT = 10_000  # one name or id read from a record
TASK_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
SAMPLES_NAME = re.compile(
    r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}_samples\.jsonl$"
)
SOURCE_TYPES = ("documentation", "evaluation_run")
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")


def result_id(
    task: str, split: str, metric: str, slice_name: str = "", slice_value: str = ""
) -> str:
    """An ``evaluation_result_id`` as ``procbench export eee`` writes it: ``<task>/<split>/<metric>``, ``<task>/<split>[<slice>=<value>]/<metric>``
    for a slice value; :func:`parse_result_id` reads it back."""
    where = f"[{slice_name}={slice_value}]" if slice_name else ""
    return f"{task}/{split}{where}/{metric}"


_RESULT_ID = re.compile(
    r"^(?P<task>[^/\[\]]+)/(?P<split>[^/\[\]]+)(?:\[(?P<slice>[^=\]]*)=(?P<value>[^\]]*)\])?/(?P<metric>[^/]+)$"
)


def parse_result_id(text: str) -> tuple[str, str, str, str, str] | None:
    """(task, split, slice, slice value, metric) of an id :func:`result_id` made; None for any other text."""
    found = _RESULT_ID.match(text)
    if not found:
        return None
    return (
        found["task"],
        found["split"],
        found["slice"] or "",
        found["value"] or "",
        found["metric"],
    )


class EeeRefused(ValueError):
    """An EEE record that cannot be imported; the message is one line and says why."""


@dataclass(frozen=True)
class EeeRecord:
    """What procbench reads from an aggregate record."""

    evaluation_id: str
    task: str
    split: str
    model: str
    organization: str
    source_name: str
    source_type: str
    relationship: str
    results: tuple[
        tuple[dict[str, Any], dict[str, Any], float], ...
    ]  # each evaluation result, its metric_config and its score (a fraction)
    data_digest: (
        str | None
    )  # the data it declares (a procbench record's provenance), None when it declares none
    samples_name: str = ""  # the base name of its per-instance file ('' when it has none)
    team: str = ""  # the team a procbench record names ('' for other records)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class EeeImport:
    """What the import stored."""

    how: str  # "rescored" (a ranked row, through intake) or "external" (an unranked row)
    submission_id: str
    created: bool
    record: EeeRecord
    metrics: Mapping[str, float] = field(
        default_factory=dict
    )  # the board's whole-split figures for a re-scored row
    warnings: tuple[str, ...] = ()
    receipt: str = ""


def _read_bounded(path: Path, limit: int, what: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > limit:
            raise EeeRefused(
                f"{path.name}: the {what} is {size} bytes, over the limit of {limit} bytes; nothing was stored"
            )
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise EeeRefused(f"{path.name}: cannot read the {what} ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise EeeRefused(
            f"{path.name}: the {what} is over the limit of {limit} bytes; nothing was stored"
        )
    return data


def _loads(data: bytes, where: str) -> Any:
    try:
        return loads_log_json(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise EeeRefused(f"{where}: not UTF-8 text (byte {exc.start})") from None
    except TooDeep as exc:
        raise EeeRefused(f"{where}: {exc}") from None
    except ValueError as exc:
        raise EeeRefused(f"{where}: not valid JSON ({str(exc).splitlines()[0][:200]})") from None


def _text(value: Any, where: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise EeeRefused(f"{where} must be a non-empty string (EEE schema)")
    if len(value) > MAX_TEXT:
        raise EeeRefused(f"{where} is longer than {MAX_TEXT} characters")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise EeeRefused(f"{where} must be an object (EEE schema)")
    return value


def _details(value: Any) -> dict[str, str]:
    return (
        {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(value, dict)
        else {}
    )


def read_record(path: Path, *, task: str | None = None, split: str | None = None) -> EeeRecord:
    """Read and check an aggregate record; ``task`` / ``split`` override what the record names (EeeRefused on any problem)."""
    name = path.name
    record = _object(
        _loads(_read_bounded(path, MAX_RECORD_BYTES, "record"), name), f"{name}: the record"
    )
    version = _text(record.get("schema_version"), f"{name}: schema_version")
    if not version.startswith(SCHEMA_MAJOR_MINOR + ".") and version != SCHEMA_MAJOR_MINOR:
        raise EeeRefused(
            f"{name}: schema_version {version[:40]!r} is not {SCHEMA_MAJOR_MINOR}.x, the EEE schema this reads"
        )
    evaluation_id = _text(record.get("evaluation_id"), f"{name}: evaluation_id")
    _text(record.get("retrieved_timestamp"), f"{name}: retrieved_timestamp")
    source = _object(record.get("source_metadata"), f"{name}: source_metadata")
    source_type = source.get("source_type")
    if source_type not in SOURCE_TYPES:
        raise EeeRefused(
            f"{name}: source_metadata.source_type must be one of {', '.join(SOURCE_TYPES)} (EEE schema)"
        )
    relationship = source.get("evaluator_relationship")
    if relationship not in RELATIONSHIPS:
        raise EeeRefused(
            f"{name}: source_metadata.evaluator_relationship must be one of {', '.join(RELATIONSHIPS)} (EEE schema)"
        )
    organization = _text(
        source.get("source_organization_name"), f"{name}: source_metadata.source_organization_name"
    )
    source_name = _text(
        source.get("source_name"), f"{name}: source_metadata.source_name", required=False
    )
    model_info = _object(record.get("model_info"), f"{name}: model_info")
    model = _text(model_info.get("name"), f"{name}: model_info.name")
    _text(model_info.get("id"), f"{name}: model_info.id")
    library = _object(record.get("eval_library"), f"{name}: eval_library")
    _text(library.get("name"), f"{name}: eval_library.name")
    provenance = (
        _details(library.get("additional_details")) if library.get("name") == "procbench" else {}
    )
    task = task or provenance.get("task")
    if not task:
        raise EeeRefused(
            f"{name}: the record does not say which procbench task it is (no procbench provenance); name it with --task"
        )
    if not TASK_NAME.match(task):
        raise EeeRefused(f"{name}: {task[:80]!r} is not a task name")
    split = split or provenance.get("split") or "test"
    if not TASK_NAME.match(split):
        raise EeeRefused(f"{name}: {split[:80]!r} is not a split name")
    results = record.get("evaluation_results")
    if not isinstance(results, list) or not results:
        raise EeeRefused(f"{name}: evaluation_results must be a non-empty list (EEE schema)")
    if len(results) > MAX_RESULTS:
        raise EeeRefused(
            f"{name}: {len(results)} evaluation results, over the limit of {MAX_RESULTS}"
        )
    raw_values: list[tuple[dict[str, Any], dict[str, Any], float]] = []
    for i, result in enumerate(results):
        where = f"{name}: evaluation_results[{i}]"
        result = _object(result, where)
        _text(result.get("evaluation_name"), f"{where}.evaluation_name")
        config = _object(result.get("metric_config"), f"{where}.metric_config")
        if not isinstance(config.get("lower_is_better"), bool):
            raise EeeRefused(
                f"{where}.metric_config.lower_is_better must be true or false (EEE schema)"
            )
        score = _object(result.get("score_details"), f"{where}.score_details").get("score")
        if (
            isinstance(score, bool)
            or not isinstance(score, (int, float))
            or not math.isfinite(float(score))
        ):
            raise EeeRefused(f"{where}.score_details.score must be a finite number (EEE schema)")
        if config.get("metric_unit") == "percent":
            score = float(score) / 100.0  # the board stores fractions
        raw_values.append((result, config, float(score)))
    detailed = record.get("detailed_evaluation_results")
    samples_name = ""
    if detailed is not None:
        detailed = _object(detailed, f"{name}: detailed_evaluation_results")
        file_path = _text(
            detailed.get("file_path"), f"{name}: detailed_evaluation_results.file_path"
        )
        samples_name = file_path.rsplit("/", 1)[-1]
        if not SAMPLES_NAME.match(samples_name):
            raise EeeRefused(
                f"{name}: detailed_evaluation_results.file_path must end in <uuid>_samples.jsonl (EEE schema)"
            )
    return EeeRecord(
        evaluation_id=evaluation_id,
        task=task,
        split=split,
        model=model,
        organization=organization,
        source_name=source_name,
        source_type=str(source_type),
        relationship=str(relationship),
        results=tuple(raw_values),
        data_digest=provenance["data_digest"] if "data_digest" in provenance else None,
        samples_name=samples_name,
        team=provenance.get("team", "")[:MAX_TEXT],
    )


def _match_values(
    record: EeeRecord, spec: Any
) -> tuple[list[tuple[str, str, str, float]], list[str]]:
    """The record's results that are figures of the task (slice, value, metric, score), and a warning for each left out."""
    metrics = {m.name: m for m in spec.metrics}
    by_word = {
        word.lower(): m.name
        for m in spec.metrics
        for word in (m.name, m.display, f"{spec.name}.{m.name}")
        if word
    }
    slices = {word for s in spec.slices for word in (s.name, s.key) if word}
    values: dict[tuple[str, str, str], float] = {}
    warnings = []
    for result, config, score in record.results:
        result_id = result.get("evaluation_result_id")
        parsed = parse_result_id(result_id) if isinstance(result_id, str) else None
        if (
            parsed
            and parsed[0] == record.task
            and parsed[1] == record.split
            and parsed[4] in metrics
        ):
            _, _, slice_name, slice_value, metric = parsed
            if slice_name and slice_name not in slices:
                warnings.append(
                    f"left out {result.get('evaluation_result_id')!r}: {spec.name} has no slice {slice_name!r}"
                )
                continue
        else:
            words = [
                config.get("metric_id"),
                config.get("metric_name"),
                result.get("evaluation_name"),
            ]
            metric = next(
                (by_word[w.lower()] for w in words if isinstance(w, str) and w.lower() in by_word),
                "",
            )
            slice_name = slice_value = ""
            if not metric:
                warnings.append(
                    f"left out the result {str(result.get('evaluation_name'))[:80]!r}: it names no metric of {spec.name}"
                )
                continue
        values[(slice_name, slice_value, metric)] = score
    return [(s, v, m, x) for (s, v, m), x in values.items()], warnings


def _instance_predictions(samples: Path, record: EeeRecord) -> tuple[str | None, str]:
    """The prediction file the instance lines hold (their ``output.raw`` strings in order), or (None, why not)."""
    data = _read_bounded(samples, MAX_SAMPLES_BYTES, "samples file")
    lines = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{samples.name}: line {number}"
        instance = _object(_loads(line, where), where)
        if instance.get("evaluation_id") != record.evaluation_id:
            raise EeeRefused(f"{where}: evaluation_id differs from the record's")
        _text(instance.get("sample_id"), f"{where}: sample_id")
        output = instance.get("output")
        raw = output.get("raw") if isinstance(output, dict) else None
        if (
            not isinstance(raw, list)
            or not raw
            or not all(isinstance(r, str) and r and "\n" not in r and "\r" not in r for r in raw)
        ):
            return None, f"{where} holds no prediction line (output.raw)"
        lines += raw
    if not lines:
        return None, f"{samples.name} has no instance lines"
    return "\n".join(lines) + "\n", ""


def import_eee(
    record_path: Path,
    *,
    db_path: Path,
    data_root: Path,
    task: str | None = None,
    split: str | None = None,
    samples: Path | None = None,
    team: str | None = None,
    token: str | None = None,
) -> EeeImport:
    """Import one EEE record into the store (see the module's docstring). Raises EeeRefused (one line, nothing stored);
    the intake's own errors (InvalidPredictions, SubmissionRefused, MissingData, ScoringFailed) pass through for a re-scored record."""
    from procbench.dsl import SpecError
    from procbench.dsl.tasks import load_task
    from procbench.submissions import external, provenance
    from procbench.submissions import SubmissionRequest, submit as intake_submit

    record = read_record(Path(record_path), task=task, split=split)
    try:
        spec, runner = load_task(record.task)
    except (SpecError, FileNotFoundError, OSError, KeyError) as exc:
        raise EeeRefused(
            f"{Path(record_path).name}: unknown task {record.task!r} ({str(exc).splitlines()[0][:200]})"
        ) from None
    if record.split not in spec.data.splits:
        raise EeeRefused(
            f"{Path(record_path).name}: {spec.name} has no split {record.split!r} (splits: {', '.join(spec.data.splits)})"
        )
    values, warnings = _match_values(record, spec)
    if not values:
        known = ", ".join(m.name for m in spec.metrics)
        raise EeeRefused(
            f"{Path(record_path).name}: none of its {len(record.results)} results is a metric of {spec.name} ({known})"
        )
    samples_path = samples
    if samples_path is None and record.samples_name:
        beside = (
            Path(record_path).parent / record.samples_name
        )  # only the base name: a record never points elsewhere
        samples_path = beside if beside.is_file() else None
        if samples_path is None:
            warnings.append(
                f"the per-instance file {record.samples_name} is not beside the record: the figures are imported as an external row"
            )
    predictions, why_not = (None, "")
    if samples_path is not None:
        predictions, why_not = _instance_predictions(samples_path, record)
        if predictions is None:
            warnings.append(
                f"not re-scorable: {why_not}; the figures are imported as an external row"
            )
    claimed = {m: x for s, _, m, x in values if s == ""}
    meta = {
        "source": f"Every Eval Ever: {record.organization}"
        + (f" ({record.source_name})" if record.source_name else ""),
        "evaluation_id": record.evaluation_id,
        "source_type": record.source_type,
        "evaluator_relationship": record.relationship,
        "source_organization_name": record.organization,
    }
    if predictions is not None:
        assert samples_path is not None
        with tempfile.TemporaryDirectory(prefix="procbench-eee-") as folder:
            file = Path(folder) / "predictions.jsonl"
            file.write_text(predictions, encoding="utf-8")
            outcome = intake_submit(
                SubmissionRequest(
                    split=record.split,
                    predictions=file,
                    model=record.model,
                    team=team or record.team or record.organization,
                    token=token,
                    metadata=meta,
                    filename=samples_path.name,
                ),
                spec,
                runner,
                data_root=data_root,
                db_path=db_path,
            )
        scored = dict(outcome.evaluation.metrics)
        for metric, value in sorted(claimed.items()):
            again = scored.get(metric)
            if again is not None and not math.isclose(again, value, rel_tol=1e-9, abs_tol=1e-9):
                warnings.append(
                    f"the record says {metric} = {value!r}; the board scores it {again!r} (the board's figure is stored)"
                )
        return EeeImport(
            "rescored",
            outcome.submission_id,
            outcome.created,
            record,
            scored,
            tuple(warnings + list(outcome.warnings)),
            outcome.receipt,
        )
    reported_on = (
        record.data_digest
        if record.data_digest is not None
        else provenance.lock_digest(spec, record.split)
    )
    content = json.dumps(
        [record.evaluation_id, record.model, record.organization, sorted(values)], sort_keys=True
    )
    try:
        stored = external.store_external(
            db_path,
            task=spec.name,
            split=record.split,
            model=record.model,
            values=values,
            metadata=meta,
            reported_on=reported_on,
            content=content,
        )
    except LookupError as exc:
        raise EeeRefused(
            f"{Path(record_path).name}: {exc} (the board must host the task and split: submit to it or load its reported rows first)"
        ) from None
    except ValueError as exc:
        raise EeeRefused(f"{Path(record_path).name}: {exc}") from None
    return EeeImport("external", stored.submission_id, stored.created, record, {}, tuple(warnings))
