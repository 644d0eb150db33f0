"""Logged outputs + a task's mapping -> prediction records (checked against the gold when it is at hand)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from procbench.imports.logged import ImportFailed, ImportProblem, LoggedOutput, dotted
from procbench.imports.mapping import ImportMapping
from runners._types import GoldSet

ChoiceRule = Literal["acc", "acc_norm"]
ANSWER_LINE = re.compile(r"ANSWER\s*:\s*\(?\s*([A-Za-z])\s*\)?", re.IGNORECASE)
LONE_LETTER = re.compile(r"^\(?\s*([A-Za-z])\s*[\).:]?$")


@dataclass(frozen=True)
class ImportOptions:
    """Choices a user may make when importing: how to pick an option, how to split text, where ids are."""

    choice_rule: ChoiceRule = "acc"  # lm-eval log-likelihoods: raw argmax (acc) or per-character (acc_norm)
    separator: str | None = None  # overrides the mapping's separator
    id_field: str | None = None  # overrides the mapping's id fields (a dotted path into the logged item)


@dataclass(frozen=True)
class Imported:
    """Prediction records in the task's prediction format, in log order, with what was odd."""

    task: str
    records: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...] = ()

    def write_jsonl(self, path: Path) -> Path:
        """Write the records as JSON lines (the format of every mapped task); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records), encoding="utf-8")
        return path


def _item_id(output: LoggedOutput, mapping: ImportMapping, id_field: str | None) -> tuple[Any, str | None]:
    value: Any = None
    for path in (id_field,) if id_field else mapping.id_fields:
        value = dotted(output.fields, path)
        if value not in (None, ""):
            break
    else:
        if id_field:
            return None, f"no field {id_field!r} in the logged item"
        value = output.sample_id
    if mapping.id_type is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value, None
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip()), None
        if isinstance(value, float) and value.is_integer():
            return int(value), None
        return None, f"item id {value!r} is not an integer row index"
    return (str(value), None) if value is not None else (None, "no item id")


def _letter(text: str, n: int) -> int | None:
    match = ANSWER_LINE.search(text) or LONE_LETTER.match(text.strip())
    if not match:
        return None
    index = ord(match.group(1).upper()) - ord("A")
    return index if 0 <= index < n else None


def _choice(output: LoggedOutput, mapping: ImportMapping, rule: ChoiceRule, gold_item: Any) -> tuple[int | None, str | None]:
    n = mapping.n_choices
    if output.choice is not None:
        return (output.choice, None) if 0 <= output.choice < n else (None, f"answer index {output.choice} is outside 0-{n - 1}")
    if output.choice_scores:
        scores = list(output.choice_scores)
        if len(scores) != n:
            return None, f"{len(scores)} option log-likelihoods, the task has {n} options"
        if rule == "acc_norm":
            if len(output.choice_texts) != n:
                return None, "acc_norm needs the option texts (arguments) in the log"
            # lm-eval divides by the option's length in characters, without the target delimiter
            lengths = [max(len(t[1:] if t.startswith(" ") else t), 1) for t in output.choice_texts]
            scores = [s / length for s, length in zip(scores, lengths)]
        return max(range(n), key=lambda k: (scores[k], -k)), None  # first maximum, as numpy.argmax
    if output.text is None:
        return None, "no output"
    index = _letter(output.text, n)
    if index is not None:
        return index, None
    options = [o.strip() for o in (output.choice_texts or getattr(gold_item, "endings", ()) or ())]
    if output.text.strip() in options:
        return options.index(output.text.strip()), None
    return None, f"cannot tell which option {output.text[:60]!r} chooses (expected a letter A-{mapping.letters[-1]} or an option's text)"


def _texts(output: LoggedOutput, separator: str) -> tuple[list[str] | None, str | None]:
    if output.text is None:
        return None, "no generated text"
    return [piece.strip() for piece in output.text.split(separator) if piece.strip()], None


def to_records(outputs: Sequence[LoggedOutput], mapping: ImportMapping, *, gold: GoldSet | None = None, options: ImportOptions = ImportOptions(), source: str = "") -> Imported:
    """Map every output to a prediction record; raises ImportFailed listing every problem.

    With ``gold``: ids must be items of the split, each once, and the mapping's consistency check
    must pass; items without an output are a warning (the task's validator decides if that is fatal).
    """
    problems: list[ImportProblem] = []
    records: list[dict[str, Any]] = []
    first_seen: dict[Any, str] = {}
    separator = options.separator if options.separator is not None else mapping.separator
    for output in outputs:
        item_id, problem = _item_id(output, mapping, options.id_field)
        if problem:
            problems.append(ImportProblem(output.where, problem))
            continue
        gold_item = None
        if gold is not None:
            if str(item_id) not in gold.items:
                problems.append(ImportProblem(output.where, f"item {item_id!r} is not an item of this split"))
                continue
            gold_item = gold.items[str(item_id)]
            if mapping.check is not None:
                mismatch = mapping.check(output, gold_item)
                if mismatch:
                    problems.append(ImportProblem(output.where, f"item {item_id!r}: {mismatch}"))
                    continue
        if item_id in first_seen:
            problems.append(ImportProblem(output.where, f"item {item_id!r} again (first at {first_seen[item_id]}; more than one epoch or repeat?)"))
            continue
        first_seen[item_id] = output.where
        value, problem = _choice(output, mapping, options.choice_rule, gold_item) if mapping.kind == "choice" else _texts(output, separator)
        if problem:
            problems.append(ImportProblem(output.where, f"item {item_id!r}: {problem}"))
            continue
        records.append({"id": item_id, mapping.prediction_field: value})
    if problems:
        raise ImportFailed(problems, source)
    warnings = []
    if gold is not None:
        missing = [i for i in gold.items if (int(i) if mapping.id_type is int else i) not in first_seen]
        if missing:
            warnings.append(f"{len(missing)} of {len(gold.items)} items of the split have no output in the log (first: {', '.join(map(str, missing[:5]))})")
    return Imported(mapping.task, tuple(records), tuple(warnings))
