"""Validating a PARADISE prediction file: one predicted ending (0-3) per test row index.

Two formats: JSON lines ``{"id": 12, "label": 3}`` or CSV with the header ``id,label``. The format
comes from the extension (.jsonl/.json/.ndjson vs .csv), else from the first non-blank character.
Upstream has no prediction-file scorer, so duplicates, unknown or missing ids and labels outside
0-3 have no official treatment; docs/metrics.md §3.3 says to reject them, and so does this module.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.runners.runtime._types import GoldSet, InvalidPredictions, Problem, ProblemList
from procbench.runners.runtime.predictions import EMPTY_FILE, ExtraFields, json_objects, listed_ids
from procbench.runners.runtime.registry import component

JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
LABELS = range(4)


@dataclass(frozen=True)
class RawPrediction:
    """One parsed line before the checks against the gold set (values may still have any type)."""

    line: int
    item_id: Any
    label: Any


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_json_lines(
    path: Path, problems: ProblemList, extra: ExtraFields
) -> Iterator[RawPrediction]:
    for number, record, error in json_objects(path, '{"id": ..., "label": ...}'):
        if error is not None:
            problems.append(Problem(number, error))
            continue
        extra.see(number, record)
        absent = [key for key in ("id", "label") if key not in record]
        if absent:
            problems.append(
                Problem(
                    number,
                    f"missing key{'s' if len(absent) > 1 else ''} {', '.join(map(repr, absent))}",
                )
            )
            continue
        yield RawPrediction(number, record["id"], record["label"])


def _csv_int(cell: str) -> int | str:
    text = cell.strip()
    try:
        return int(text) if text.lstrip("+-").isdigit() else text
    except ValueError:
        return text


def _parse_csv(text: str, problems: ProblemList) -> Iterator[RawPrediction]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None or [cell.strip() for cell in header] != ["id", "label"]:
        problems.append(
            Problem(1, f"expected the header 'id,label', got {','.join(header or [])!r}")
        )
        return
    for row in reader:
        number = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            problems.append(Problem(number, f"expected 2 columns (id,label), got {len(row)}"))
            continue
        yield RawPrediction(number, _csv_int(row[0]), _csv_int(row[1]))


def _is_json(path: Path, text: str) -> bool:
    if path.suffix.lower() in JSON_SUFFIXES:
        return True
    if path.suffix.lower() == ".csv":
        return False
    return text.lstrip().startswith("{")


def check_predictions(path: Path, gold_ids: set[str]) -> dict[str, int]:
    """Item id -> predicted ending; raises InvalidPredictions listing every problem."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidPredictions(
            [Problem(None, f"not UTF-8 text ({error.reason} at byte {error.start})")], source
        ) from None
    if (
        not text.strip()
    ):  # issue #30: not "no prediction for 500 items: ids 0, 1, ..." for an empty file
        raise InvalidPredictions([Problem(None, EMPTY_FILE)], source)
    problems = ProblemList()
    extra = ExtraFields(("id", "label"))
    raws = (
        _parse_json_lines(Path(path), problems, extra)
        if _is_json(Path(path), text)
        else _parse_csv(text, problems)
    )
    any_record = False
    predictions: dict[str, int] = {}
    first_line: dict[str, int] = {}
    bad_label: set[str] = (
        set()
    )  # gold ids whose line has a bad label: not reported again as missing
    for raw in raws:
        any_record = True
        item_id = str(raw.item_id) if _is_int(raw.item_id) else None
        if item_id is None:
            problems.append(
                Problem(raw.line, f"id must be an integer row index, got {raw.item_id!r}")
            )
        if not _is_int(raw.label) or raw.label not in LABELS:
            # The item id is kept so that the item is not reported a second time as missing.
            problems.append(
                Problem(raw.line, f"label must be an integer 0-3, got {raw.label!r}", item_id)
            )
            if item_id in gold_ids:
                bad_label.add(item_id)
            continue
        if item_id is None:
            continue
        if item_id not in gold_ids:
            problems.append(
                Problem(
                    raw.line, f"unknown id {raw.item_id} (not a row index of this split)", item_id
                )
            )
        elif item_id in first_line:
            problems.append(
                Problem(
                    raw.line,
                    f"duplicate id {item_id} (first given on line {first_line[item_id]})",
                    item_id,
                )
            )
        else:
            first_line[item_id] = raw.line
            predictions[item_id] = raw.label
    if not any_record and not problems:  # blank lines, or a CSV header alone
        raise InvalidPredictions([Problem(None, EMPTY_FILE)], source)
    mentioned = set(predictions) | bad_label
    missing = [item_id for item_id in gold_ids if item_id not in mentioned]
    if missing:
        ordered = sorted(missing, key=int)
        problems.append(
            Problem(
                None,
                f"no prediction for {len(ordered)} item{'s' if len(ordered) != 1 else ''}: ids {listed_ids(ordered)}",
            )
        )
    if problems:
        raise InvalidPredictions(problems, source)
    extra.warn()
    return predictions


# Each item's prediction is the chosen ending itself (an int 0-3, not a dict), named by its key in the file.
@component("predictions", "paradise.labels", fields={"label": "int"})
def read_labels(path: Path, gold: GoldSet) -> dict[str, int]:
    """A PARADISE prediction file (JSON lines ``{"id", "label"}`` or CSV ``id,label``) -> row index -> ending 0-3.

    Rejects bad JSON, wrong types, labels outside 0-3, unknown and duplicate ids and missing items,
    each with its 1-based line number.
    """
    return check_predictions(Path(path), set(gold.items))
