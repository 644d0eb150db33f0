"""Reading lm-evaluation-harness per-sample logs (``samples_<task>_<date>.jsonl`` from ``--log_samples``).

Each line is one document under one filter::

    {"doc_id": 0, "doc": {...dataset row...}, "target": ..., "arguments": [...], "resps": [...],
     "filtered_resps": [...], "filter": "none", "metrics": [...], "doc_hash": ..., "acc": 1.0, ...}

* multiple choice (``output_type: multiple_choice``): one request per option; ``arguments[i]`` is
  ``[context, " option"]`` and ``filtered_resps[i]`` is ``[log-likelihood, is_greedy]`` (written as
  numbers by older releases, as strings such as ``["-4.2", "False"]`` by newer ones).  Newer releases
  also write ``arguments`` as ``{"gen_args_0": {"arg_0": context, "arg_1": " option"}, ...}``.
* generation (``generate_until``): one request; ``filtered_resps`` is ``["text"]`` (or ``[["text"]]``)
  after the task's filters, ``resps`` is ``[["raw text"]]``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from procbench.imports.logged import (
    ImportFailed,
    ImportProblem,
    LoggedOutput,
    LogTooDeep,
    loads_log_json,
    object_or_empty,
)


def _arguments(raw: Any) -> list[list[Any]]:
    """``arguments`` as a list of per-request argument lists, whichever layout the release wrote."""
    if isinstance(raw, dict):
        ordered = sorted(
            raw.items(),
            key=lambda kv: int(str(kv[0]).rsplit("_", 1)[-1])
            if str(kv[0]).rsplit("_", 1)[-1].isdigit()
            else 0,
        )
        return [
            [args.get(f"arg_{k}") for k in range(len(args))]
            if isinstance(args, dict)
            else list(args)
            if isinstance(args, list)
            else [args]
            for _, args in ordered
        ]
    if isinstance(raw, list):
        return [list(a) if isinstance(a, (list, tuple)) else [a] for a in raw]
    return []


def _loglikelihood(resp: Any) -> float | None:
    """``[ll, is_greedy]`` (numbers or strings) -> ll; anything else -> None."""
    if (
        isinstance(resp, (list, tuple))
        and len(resp) == 2
        and isinstance(resp[0], (int, float, str))
        and not isinstance(resp[0], bool)
    ):
        try:
            return float(resp[0])
        except ValueError:
            return None
    return None


def _generation(resps: Any) -> str | None:
    """The first text in ``["text"]``, ``[["text"]]`` or ``"text"``."""
    value = resps
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def parse_record(
    record: dict[str, Any], where: str, *, raw: bool = False
) -> LoggedOutput | ImportProblem:
    """One logged document -> LoggedOutput (or the problem with it)."""
    if "doc_id" not in record:
        return ImportProblem(where, "no 'doc_id': not an lm-evaluation-harness samples line")
    responses = record.get("resps" if raw else "filtered_resps")
    if not isinstance(responses, list) or not responses:
        return ImportProblem(where, f"no {'resps' if raw else 'filtered_resps'} list")
    doc = object_or_empty(record.get("doc"))
    arguments = _arguments(record.get("arguments"))
    if raw:  # resps nest one level deeper than filtered_resps: [[ [ll, greedy] ], ...] / [["text"]]
        responses = [
            r[0] if isinstance(r, list) and len(r) == 1 and isinstance(r[0], list) else r
            for r in responses
        ]
    scores = [_loglikelihood(r) for r in responses]
    if len(responses) > 1 and all(s is not None for s in scores):
        options = (
            tuple(str(a[1]) for a in arguments if len(a) > 1)
            if len(arguments) == len(responses)
            else ()
        )
        return LoggedOutput(
            where,
            record["doc_id"],
            doc,
            choice_scores=tuple(s for s in scores if s is not None),
            choice_texts=options,
            fields_root="doc",
        )
    text = _generation(responses)
    if text is None:
        return ImportProblem(
            where,
            f"{'resps' if raw else 'filtered_resps'} holds neither a generation nor per-option log-likelihoods: {json.dumps(responses)[:120]}",
        )
    return LoggedOutput(where, record["doc_id"], doc, text=text, fields_root="doc")


def read_samples(
    path: Path, *, filter_name: str | None = None, raw: bool = False
) -> list[LoggedOutput]:
    """Every document of one samples file (one filter); raises ImportFailed listing every problem."""
    source = str(path)
    problems: list[ImportProblem] = []
    records: list[tuple[str, dict[str, Any]]] = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailed(
            [ImportProblem("file", f"not UTF-8 ({exc.reason} at byte {exc.start})")], source
        ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads_log_json(line)
        except json.JSONDecodeError as exc:
            problems.append(
                ImportProblem(f"line {number}", f"not valid JSON: {exc.msg} (column {exc.colno})")
            )
            continue
        except LogTooDeep as exc:
            problems.append(ImportProblem(f"line {number}", str(exc)))
            continue
        if not isinstance(record, dict):
            problems.append(ImportProblem(f"line {number}", "expected a JSON object per line"))
            continue
        records.append((f"line {number}", record))
    filters = sorted({str(r.get("filter", "none")) for _, r in records})
    if filter_name is None and len(filters) > 1:
        problems.append(
            ImportProblem(
                "file",
                f"the log has several filters ({', '.join(filters)}): choose one with --filter",
            )
        )
    elif filter_name is not None and filter_name not in filters:
        problems.append(
            ImportProblem(
                "file",
                f"no line with filter {filter_name!r} (filters: {', '.join(filters) or 'none'})",
            )
        )
    if problems:
        raise ImportFailed(problems, source)
    outputs: list[LoggedOutput] = []
    for where, record in records:
        if filter_name is not None and str(record.get("filter", "none")) != filter_name:
            continue
        parsed = parse_record(record, where, raw=raw)
        if isinstance(parsed, ImportProblem):
            problems.append(parsed)
        else:
            outputs.append(parsed)
    if problems:
        raise ImportFailed(problems, source)
    if not outputs:
        raise ImportFailed([ImportProblem("file", "no samples in the file")], source)
    return outputs
