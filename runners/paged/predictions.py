"""The prediction validator ``paged.graph_text``: JSON lines ``{"id": <file_index>, "graph": "<text>"}``.

``graph`` is the model's whole output in the textual graph format (``For <actor>:`` headers and
``A -> B`` lines). The official loop scores only the documents it has outputs for, and an empty
output adds nothing to any denominator; here every gold document is scored, a missing one as an
empty output (numerically the same as upstream leaving it out) with a warning, so that the
leaderboard shows which documents were skipped.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from procbench.runners.runtime._types import (
    GoldSet,
    InvalidPredictions,
    PredictionWarning,
    Problem,
    ProblemList,
)
from procbench.runners.paged.parse import LineIssue, parse_text
from procbench.runners.runtime.predictions import ExtraFields, json_objects, oversize
from procbench.runners.runtime.registry import component

EXAMPLES_IN_WARNINGS = 3
# Each item's prediction is the ``graph`` text itself (a str, not a dict): the contract names it by its key in the file.
PREDICTION_FIELDS = {"graph": "str"}


def _json_lines(path: Path, problems: ProblemList) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, record, error in json_objects(path, '{"id": ..., "graph": ...}'):
        if error is not None:
            problems.append(Problem(number, error))
            continue
        yield number, record


def _item_id(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


@component("predictions", "paged.graph_text", fields=PREDICTION_FIELDS)
def read_graph_text(path: Path, gold: GoldSet) -> dict[str, str]:
    """Validate a PAGED prediction file; returns ``file_index`` (str) -> model output text.

    Rejected, each with its line number: invalid UTF-8 or JSON, a line that is not an object, a
    missing ``id`` or ``graph``, an ``id`` that is not an integer (or its string), a ``graph`` that is
    not a string or is longer than the readers' per-text limit, an unknown or duplicate id, and a file
    without any prediction. Warned about: gold
    documents without a prediction (scored as empty output) and lines the official parser ignores or
    cannot use (they are scored the official way).
    """
    problems = ProblemList()
    outputs: dict[str, str] = {}
    first_line: dict[str, int] = {}
    seen_any = False
    extra = ExtraFields(("id", "graph"))
    for number, record in _json_lines(path, problems):
        seen_any = True
        extra.see(number, record)
        absent = [key for key in ("id", "graph") if key not in record]
        if absent:
            problems.append(
                Problem(
                    number,
                    f"missing key{'s' if len(absent) > 1 else ''} {', '.join(map(repr, absent))}",
                )
            )
            continue
        item_id, graph = _item_id(record["id"]), record["graph"]
        if item_id is None:
            problems.append(
                Problem(
                    number,
                    f"'id' must be the document's integer file_index, got {json.dumps(record['id'])[:40]}",
                )
            )
            continue
        if not isinstance(graph, str):
            problems.append(
                Problem(
                    number,
                    f"'graph' must be a string (the model output), got {type(graph).__name__}",
                    item_id,
                )
            )
            continue
        too_long = oversize(
            graph
        )  # the readers' one limit per text (20 times the longest gold graph); node matching grows with its square
        if too_long is not None:
            problems.append(Problem(number, f"'graph' is {too_long}", item_id))
            continue
        if item_id in first_line:
            problems.append(
                Problem(
                    number, f"duplicate id {item_id} (first on line {first_line[item_id]})", item_id
                )
            )
            continue
        first_line[item_id] = number
        if item_id not in gold.items:
            problems.append(
                Problem(number, f"unknown id {item_id}: not a document of this split", item_id)
            )
            continue
        outputs[item_id] = graph
    if not seen_any and not problems:
        problems.append(Problem(None, "the file holds no predictions"))
    if problems:
        raise InvalidPredictions(problems, Path(path).name)
    extra.warn()
    _warn_missing(gold, outputs)
    # each output parsed and dropped at once: only its odd lines are kept (a large file's parses would not fit)
    odd = {
        item_id: found for item_id, text in outputs.items() if (found := parse_text(text).issues)
    }
    _warn_odd_lines(odd, first_line)
    return {item_id: outputs[item_id] for item_id in gold.items if item_id in outputs}


def _warn_missing(gold: GoldSet, outputs: dict[str, str]) -> None:
    missing = [item_id for item_id in gold.items if item_id not in outputs]
    if missing:
        warnings.warn(
            PredictionWarning(
                f"{len(missing)} of {len(gold.items)} documents have no prediction and are scored as empty output "
                f"(officially an empty output adds to no denominator, so they do not lower recall); first: {', '.join(missing[:EXAMPLES_IN_WARNINGS])}"
            ),
            stacklevel=2,
        )


def _warn_odd_lines(odd: dict[str, tuple[LineIssue, ...]], file_line: dict[str, int]) -> None:
    for kind, what in (
        ("unparseable", "have more than one '->' and count nowhere"),
        ("missing_node", "lack a node on one side"),
        ("ignored", "are neither 'A -> B' lines nor 'For <actor>:' headers and are ignored"),
        (
            "prompt_spelling",
            "use DataConstraint(...)/ActionConstraint(...), which the official parser reads as activities (the scorer's prompt_spellings variant reads them "
            "as constraints)",
        ),
    ):
        hits = [
            (item_id, issue)
            for item_id, issues in odd.items()
            for issue in issues
            if issue.kind == kind
        ]
        if not hits:
            continue
        examples = "; ".join(
            f"id {item_id} (file line {file_line[item_id]}) graph line {issue.line_no}: {issue.line[:60]!r}"
            for item_id, issue in hits[:EXAMPLES_IN_WARNINGS]
        )
        documents = len({item_id for item_id, _ in hits})
        warnings.warn(
            PredictionWarning(
                f"{len(hits)} graph lines in {documents} documents {what}; e.g. {examples}"
            ),
            stacklevel=3,
        )
