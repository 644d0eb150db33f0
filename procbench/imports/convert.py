"""Logged outputs + a task's mapping -> prediction records (checked against the gold when it is at hand)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from procbench.imports.logged import ImportFailed, ImportProblem, LoggedOutput, dotted
from procbench.imports.mapping import ImportMapping
from procbench.runners.runtime._types import GoldSet

ChoiceRule = Literal["acc", "acc_norm"]
Unanswered = Literal["refuse", "wrong"]
UNANSWERED: tuple[str, ...] = ("refuse", "wrong")
Errored = Literal["refuse", "wrong", "skip"]
ERRORED: tuple[str, ...] = ("refuse", "wrong", "skip")
ANSWER_LINE = re.compile(r"ANSWER\s*:\s*\(?\s*([A-Za-z])\s*\)?", re.IGNORECASE)
LONE_LETTER = re.compile(r"^\(?\s*([A-Za-z])\s*[\).:]?$")
UNANSWERED_PROBLEM = "unanswered"  # the start of every "this output names no answer" problem
ID_NOT_AN_INDEX = "the item id is not an integer row index"
ERRORED_PROBLEM = "failed in the run"


@dataclass(frozen=True)
class ImportOptions:
    """Choices a user may make when importing: how to pick an option, how to split text, where ids are."""

    choice_rule: ChoiceRule = (
        "acc"  # lm-eval log-likelihoods: raw argmax (acc) or per-character (acc_norm)
    )
    separator: str | None = None  # overrides the mapping's separator
    id_field: str | None = (
        None  # overrides the mapping's id fields (a dotted path into the logged item)
    )
    # An item whose output names no option (no letter, an empty generation): "refuse" lists it as a problem;
    # "wrong" counts it as a wrong answer, as the harnesses' own accuracy does (a choice task needs the gold for that).
    unanswered: Unanswered = "refuse"
    id_offset: int = 0  # added to every integer item id (a log numbered from 1 imports with -1)
    # A sample that failed in the run (Inspect's ``error``; it has no output): "refuse" lists it as a problem,
    # "wrong" writes a wrong answer for it (as "unanswered wrong"), "skip" leaves it out (the file is then partial).
    errored: Errored = "refuse"


@dataclass(frozen=True)
class Imported:
    """Prediction records in the task's prediction format, in log order, with what was odd."""

    task: str
    records: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...] = ()
    unanswered: tuple[
        Any, ...
    ] = ()  # ids written as wrong answers (ImportOptions.unanswered = "wrong")
    unshuffled: int = 0  # items whose logged options were a permutation of the gold's, mapped back
    n_split_items: int | None = None  # items in the split checked against (None: no split given)
    errored: tuple[
        Any, ...
    ] = ()  # ids of samples that failed in the run, written as wrong or left out (ImportOptions.errored)

    def write_jsonl(self, path: Path) -> Path:
        """Write the records as JSON lines (the format of every mapped task); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records),
            encoding="utf-8",
        )
        return path


def _run_said(counts: tuple[int, int] | None) -> str:
    """'; the run's log: 97 of 100 samples completed' (the harness's own count), or ''."""
    return f"; the run's log: {counts[0]} of {counts[1]} samples completed" if counts else ""


def _item_id(
    output: LoggedOutput, mapping: ImportMapping, id_field: str | None, offset: int = 0
) -> tuple[Any, str | None]:
    item_id, problem = _logged_id(output, mapping, id_field)
    if offset and isinstance(item_id, int):
        item_id += offset
    return item_id, problem


def _logged_id(
    output: LoggedOutput, mapping: ImportMapping, id_field: str | None
) -> tuple[Any, str | None]:
    value: Any = None
    for path in (id_field,) if id_field else mapping.id_fields:
        value = dotted(output.fields, path)
        root = f"{output.fields_root}."
        if (
            value in (None, "") and output.fields_root and path.startswith(root)
        ):  # --id-field metadata.x: the path from the sample, not from inside
            value = dotted(output.fields, path.removeprefix(root))
        if value not in (None, ""):
            break
    else:
        if id_field:
            inside = (
                f" in the logged item's {output.fields_root!r}"
                if output.fields_root
                else " in the logged item"
            )
            keys = ", ".join(map(repr, list(output.fields)[:10]))
            return (
                None,
                f"no field {id_field!r}{inside} (--id-field is a dotted path inside it; its fields: {keys or 'none'})",
            )
        value = output.sample_id
    if mapping.id_type is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value, None
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip()), None
        if isinstance(value, float) and value.is_integer():
            return int(value), None
        return None, f"{ID_NOT_AN_INDEX}: {value!r}"
    return (str(value), None) if value is not None else (None, "no item id")


def _letter(text: str, n: int) -> int | None:
    match = ANSWER_LINE.search(text) or LONE_LETTER.match(text.strip())
    if not match:
        return None
    index = ord(match.group(1).upper()) - ord("A")
    return index if 0 <= index < n else None


def _choice(
    output: LoggedOutput, mapping: ImportMapping, rule: ChoiceRule, gold_item: Any
) -> tuple[int | None, str | None]:
    n = mapping.n_choices
    if output.choice is not None:
        return (
            (output.choice, None)
            if 0 <= output.choice < n
            else (None, f"answer index {output.choice} is outside 0-{n - 1}")
        )
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
        return None, UNANSWERED_PROBLEM + ": no output"
    index = _letter(output.text, n)
    if index is not None:
        return index, None
    options = [o.strip() for o in (output.choice_texts or getattr(gold_item, "endings", ()) or ())]
    if output.text.strip() in options:
        return options.index(output.text.strip()), None
    return (
        None,
        f"{UNANSWERED_PROBLEM}: cannot tell which option {output.text[:60]!r} chooses (expected a letter A-{mapping.letters[-1]} or an option's text)",
    )


def _texts(output: LoggedOutput, separator: str) -> tuple[list[str] | None, str | None]:
    if output.text is None:
        return None, UNANSWERED_PROBLEM + ": no generated text"
    return [piece.strip() for piece in output.text.split(separator) if piece.strip()], None


def _gold_options(gold_item: Any) -> tuple[str, ...] | None:
    """The gold item's options in the gold order (PARADISE: its four endings), where it has them."""
    endings = getattr(gold_item, "endings", None)
    return tuple(str(e).strip() for e in endings) if isinstance(endings, (list, tuple)) else None


def unshuffle(output: LoggedOutput, gold_item: Any) -> tuple[LoggedOutput, bool]:
    """Map an output whose options were shown in another order back onto the gold order.

    Inspect's ``shuffle_choices`` logs each sample's options in the order shown, and the answer letter
    refers to that order; the options themselves are the permutation.  Returns the output in gold
    order and whether it was shuffled; an output whose options are not a permutation of the gold's
    is returned unchanged (the task's check then says what differs).
    """
    gold = _gold_options(gold_item)
    shown = tuple(t.strip() for t in output.choice_texts)
    if (
        gold is None
        or len(shown) != len(gold)
        or shown == gold
        or sorted(shown) != sorted(gold)
        or len(set(gold)) != len(gold)
    ):
        return output, False
    to_gold = [gold.index(text) for text in shown]  # shown position -> gold position
    scores = output.choice_scores
    if scores and len(scores) == len(gold):
        ordered = [0.0] * len(gold)
        for position, score in zip(to_gold, scores):
            ordered[position] = score
        scores = tuple(ordered)
    choice = (
        to_gold[output.choice]
        if output.choice is not None and 0 <= output.choice < len(to_gold)
        else output.choice
    )
    texts = tuple(output.choice_texts[to_gold.index(k)] for k in range(len(gold)))
    return replace(
        output,
        choice=choice,
        choice_scores=scores,
        choice_texts=texts,
        text=_relettered(output.text, to_gold),
    ), True


def _relettered(text: str | None, to_gold: list[int]) -> str | None:
    """``ANSWER: B`` in the shown order -> the gold order's letter (for outputs read from the text)."""
    if text is None:
        return None
    index = _letter(text, len(to_gold))
    return f"ANSWER: {chr(ord('A') + to_gold[index])}" if index is not None else text


def _matches(output: LoggedOutput, item_id: Any, gold: GoldSet, mapping: ImportMapping) -> bool:
    """Whether ``output`` is the gold item ``item_id`` (by the task's check; options may be shuffled)."""
    if str(item_id) not in gold.items or mapping.check is None:
        return False
    gold_item = gold.items[str(item_id)]
    return mapping.check(unshuffle(output, gold_item)[0], gold_item) is None


def _shift_hint(
    outputs: Sequence[LoggedOutput],
    ids: Sequence[Any],
    gold: GoldSet,
    mapping: ImportMapping,
    offset: int,
) -> str | None:
    """When every logged item is the gold item one id up or down, say so (ids numbered from 1, or a header row counted)."""
    if (
        mapping.id_type is not int
        or mapping.check is None
        or not ids
        or any(not isinstance(i, int) for i in ids)
    ):
        return None
    for shift in (-1, 1):
        if all(_matches(o, i + shift, gold, mapping) for o, i in zip(outputs, ids)):
            fixed = offset + shift
            how = f"import with --id-offset {fixed:+d}" if fixed else "import without --id-offset"
            return (
                f"the item ids are off by one: every logged item is the gold item with id {'one below' if shift == -1 else 'one above'} its own "
                f"({'ids numbered from 1' if shift == -1 else 'ids numbered from -1'}?); {how}"
            )
    return None


def _id_range(gold: GoldSet, mapping: ImportMapping) -> str:
    if mapping.id_type is int:
        numbers = [int(i) for i in gold.items if str(i).lstrip("-").isdigit()]
        return f" (row indices {min(numbers)}-{max(numbers)})" if numbers else ""
    return ""


def to_records(
    outputs: Sequence[LoggedOutput],
    mapping: ImportMapping,
    *,
    gold: GoldSet | None = None,
    options: ImportOptions = ImportOptions(),
    source: str = "",
    run_counts: tuple[int, int] | None = None,
) -> Imported:
    """Map every output to a prediction record; raises ImportFailed listing every problem.

    With ``gold``: ids must be items of the split, each once, and the mapping's consistency check
    must pass (options shown in another order are mapped back first); items without an output are a
    warning (the task's validator, or ``--partial`` scoring, decides).  ``options.unanswered`` says
    what an output that names no answer becomes, ``options.errored`` what a sample that failed in the run
    becomes; ``run_counts``: (completed, total) as the harness's own log states them, quoted beside errored samples.
    """
    problems: list[ImportProblem] = []
    records: list[dict[str, Any]] = []
    first_seen: dict[Any, str] = {}
    unanswered: list[Any] = []
    errored: list[Any] = []
    unshuffled = 0
    id_problems = 0
    logged: list[tuple[LoggedOutput, Any]] = []  # (output, id as logged) for the off-by-one check
    separator = options.separator if options.separator is not None else mapping.separator
    if options.unanswered not in UNANSWERED:
        raise ValueError(
            f"unanswered must be one of {', '.join(UNANSWERED)}, got {options.unanswered!r}"
        )
    if options.errored not in ERRORED:
        raise ValueError(f"errored must be one of {', '.join(ERRORED)}, got {options.errored!r}")
    for output in outputs:
        item_id, problem = _item_id(output, mapping, options.id_field, options.id_offset)
        if problem:
            problems.append(ImportProblem(output.where, problem))
            continue
        if output.error is None:
            logged.append((output, item_id))
        gold_item = None
        if gold is not None:
            if str(item_id) not in gold.items:
                problems.append(
                    ImportProblem(
                        output.where,
                        f"item {item_id!r} is not an item of this split{_id_range(gold, mapping)}",
                    )
                )
                id_problems += 1
                continue
            gold_item = gold.items[str(item_id)]
        if (
            output.error is not None
        ):  # no output to check or map: the policy says what the sample becomes
            if item_id in first_seen:
                problems.append(
                    ImportProblem(
                        output.where,
                        f"item {item_id!r} again (first at {first_seen[item_id]}; more than one epoch or repeat?)",
                    )
                )
                continue
            first_seen[item_id] = output.where
            if options.errored == "skip":
                errored.append(item_id)
                first_seen.pop(
                    item_id
                )  # left out: the item has no output (the missing-items warning counts it)
                continue
            if options.errored == "wrong":
                value, problem = _wrong_answer(mapping, gold_item, f"sample {ERRORED_PROBLEM}")
                if problem is None:
                    errored.append(item_id)
                    records.append({"id": item_id, mapping.prediction_field: value})
                    continue
                problems.append(ImportProblem(output.where, f"item {item_id!r}: {problem}"))
                continue
            problems.append(
                ImportProblem(
                    output.where, f"item {item_id!r}: sample {ERRORED_PROBLEM}: {output.error}"
                )
            )
            continue
        if gold_item is not None:
            if mapping.kind == "choice":
                output, was_shuffled = unshuffle(output, gold_item)
                unshuffled += was_shuffled
            if mapping.check is not None:
                mismatch = mapping.check(output, gold_item)
                if mismatch:
                    problems.append(ImportProblem(output.where, f"item {item_id!r}: {mismatch}"))
                    id_problems += 1
                    continue
        if item_id in first_seen:
            problems.append(
                ImportProblem(
                    output.where,
                    f"item {item_id!r} again (first at {first_seen[item_id]}; more than one epoch or repeat?)",
                )
            )
            continue
        first_seen[item_id] = output.where
        value, problem = (
            _choice(output, mapping, options.choice_rule, gold_item)
            if mapping.kind == "choice"
            else _texts(output, separator)
        )
        if problem and problem.startswith(UNANSWERED_PROBLEM) and options.unanswered == "wrong":
            value, problem = _wrong_answer(mapping, gold_item, problem)
            if problem is None:
                unanswered.append(item_id)
        if problem:
            problems.append(ImportProblem(output.where, f"item {item_id!r}: {problem}"))
            continue
        records.append({"id": item_id, mapping.prediction_field: value})
    if problems:
        hint = (
            _shift_hint(
                [o for o, _ in logged], [i for _, i in logged], gold, mapping, options.id_offset
            )
            if gold is not None and id_problems
            else None
        )
        if hint:
            problems.insert(0, ImportProblem("ids", hint))
        elif (
            any(p.message.startswith("item ") and UNANSWERED_PROBLEM in p.message for p in problems)
            and options.unanswered == "refuse"
        ):
            hint_text = "to count outputs that name no answer as wrong (as the harness's accuracy does), import with --unanswered wrong"
            problems.append(ImportProblem("hint", hint_text))
        failed = sum(
            ERRORED_PROBLEM in p.message and p.message.startswith("item ") for p in problems
        )
        if failed:
            problems.append(
                ImportProblem(
                    "hint",
                    f"{failed} sample(s) failed in the run{_run_said(run_counts)}: import with --errored skip to leave them out (a partial "
                    "file: the board lists it with its coverage, unranked) or --errored wrong to write each as a wrong answer",
                )
            )
        if any(p.message.startswith(ID_NOT_AN_INDEX) for p in problems) and not options.id_field:
            problems.append(ImportProblem("hint", _id_field_hint(outputs, mapping)))
        elif (
            id_problems and not hint and not options.id_field and mapping.id_type is not int
        ):  # text ids: where they may be
            root = next((o.fields_root for o in outputs if o.fields_root), "")
            inside = f"the logged item's {root!r}" if root else "the logged item"
            problems.append(
                ImportProblem(
                    "hint",
                    f"if the log keeps the item's id in another field, name it with --id-field, a dotted path inside {inside}",
                )
            )
        raise ImportFailed(problems, source)
    warnings = []
    if errored:
        how = (
            "left out (--errored skip: the file is partial)"
            if options.errored == "skip"
            else "written as wrong answers (--errored wrong)"
        )
        shown = ", ".join(map(str, errored[:10]))
        warnings.append(
            f"{len(errored)} sample(s) failed in the run{_run_said(run_counts)} and are {how}: ids {shown}"
        )
    if unanswered:
        shown = ", ".join(map(str, unanswered[:10]))
        warnings.append(
            f"{len(unanswered)} item(s) named no answer and are written as wrong answers (--unanswered wrong): ids {shown}"
        )
    if unshuffled:
        warnings.append(
            f"{unshuffled} item(s) showed their options in another order (shuffled choices): mapped back to the gold order"
        )
    if gold is not None:
        missing = [
            i for i in gold.items if (int(i) if mapping.id_type is int else i) not in first_seen
        ]
        if missing:
            warnings.append(
                f"{len(missing)} of {len(gold.items)} items of the split have no output in the log (first: {', '.join(map(str, missing[:5]))}); "
                "score with --partial to score the logged items only (a --limit run)"
            )
    n_split = len(gold.items) if gold is not None else None
    return Imported(
        mapping.task,
        tuple(records),
        tuple(warnings),
        tuple(unanswered),
        unshuffled,
        n_split,
        tuple(errored),
    )


def _id_field_hint(outputs: Sequence[LoggedOutput], mapping: ImportMapping) -> str:
    """What to pass as --id-field when the ids the log gives are text: the logged item's fields that hold whole numbers."""
    root = next((o.fields_root for o in outputs if o.fields_root), "")
    sample = next((o.fields for o in outputs if o.fields), {})
    numeric = [
        k
        for k, v in sample.items()
        if (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, str) and v.strip().isdigit())
    ]
    inside = f"the logged item's {root!r}" if root else "the logged item"
    found = (
        f"; fields of {inside} holding whole numbers: {', '.join(map(repr, numeric[:5]))}"
        if numeric
        else ""
    )
    example = f" (e.g. --id-field {numeric[0]})" if numeric else ""
    return (
        f"{mapping.task} ids are row indices (whole numbers) and this log's are text: name the field that holds the index with --id-field, a dotted "
        f"path inside {inside}{example}{found}"
    )


def _wrong_answer(mapping: ImportMapping, gold_item: Any, problem: str) -> tuple[Any, str | None]:
    """What an unanswered item is written as under ``--unanswered wrong``: an empty list, or an option other than the gold one.

    A prediction file has no "no answer" for a choice task, so the item gets the option after the
    gold one: accuracy then counts it wrong, exactly as the harness does.
    """
    if mapping.kind == "text_list":
        return [], None
    gold_label = getattr(gold_item, mapping.prediction_field, None)
    if not isinstance(gold_label, int) or mapping.n_choices < 2:
        return (
            None,
            f"{problem}; --unanswered wrong needs the gold answer to write a wrong one: import with --split",
        )
    return (gold_label + 1) % mapping.n_choices, None
