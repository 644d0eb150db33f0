"""Registered components of the AI2 ProPara leaderboard task (docs/metrics.md §2A).

* reader ``propara.answers``: gold action file -> one :class:`ProcessTracks` per process id
* predictions ``propara.action_file``: a prediction action file, validated by the official rules
* scorer ``propara.leaderboard``: per-process precision/recall of inputs, outputs, conversions, moves
* aggregator ``propara.leaderboard``: the official rounded means and overall P/R/F1
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from procbench.runners.runtime._types import (
    GoldSet,
    InvalidPredictions,
    ItemScore,
    PredictionWarning,
    Problem,
    ProblemList,
)
from procbench.runners.propara.action_file import (
    ActionFile,
    ActionRow,
    ProcessTracks,
    build_tracks,
    read_action_file,
)
from procbench.runners.library.generic import Derived, MatchScorer, MatchStage
from procbench.runners.library.matching import BestMatch, PairScorer
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.propara.process_score import QUESTIONS, PrecisionRecall
from procbench.runners.propara.summaries import SUMMARY_FIELDS, derive_summaries
from procbench.runners.library.structured import PhraseOverlap, RecordMean, phrase_overlap
from procbench.runners.library.text import Pipeline, lowercase, remove_leading_article, stem
from procbench.runners.propara.prompts import prompt_labels, read_prompts
from procbench.runners.runtime.registry import component

SPLITS = ("train", "dev", "test")
DEFAULT_ANSWERS = "propara/aristo-leaderboard/propara/data/{split}/answers.tsv"
DEFAULT_PROMPTS = "propara/propara/data/emnlp18/grids.v1.{split}.tsv"
_EXAMPLES = 5
# Leading articles a location loses before it is stemmed (one, the first that matches; docs/metrics.md §2A.5).
ARTICLES = ("a", "an", "the", "your", "his", "their", "my", "another", "other", "this", "that")

# The contract: gold and prediction records are ProcessTracks (attributes, not dict keys).
TRACK_FIELDS = {
    "process_id": "int",
    "num_sentences": "int",
    "participants": "list(any)",
}  # a tuple of ParticipantTrack
PER_QUESTION = tuple(f"{question}_{part}" for question in QUESTIONS for part in ("p", "r", "f1"))
OVERALL = ("precision", "recall", "f1")


# ``prompt`` is absent from every item when the split's grids file is missing (a warning says so).
@component("reader", "propara.answers", fields=TRACK_FIELDS, labels={"prompt": ()})
def read_answers(
    data_root: Path, split: str, *, answers: str = DEFAULT_ANSWERS, prompts: str = DEFAULT_PROMPTS
) -> GoldSet:
    """Gold action file of ``split``: items = process id (str, ascending) -> ProcessTracks.

    Labels: ``prompt`` from the EMNLP'18 grids TSV ("unknown" where a process has none; no label at
    all when the grids file is absent). Both paths are relative to ``data_root``, ``{split}`` filled.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown ProPara split {split!r}; expected one of {SPLITS}")
    path = Path(data_root) / answers.format(split=split)
    if not path.is_file():
        raise FileNotFoundError(path)
    parsed = read_action_file(path)
    if parsed.problems:
        raise ValueError(_gold_problems(path, parsed))
    processes = build_tracks(parsed.rows)
    items = {str(pid): tracks for pid, tracks in processes.items()}
    labels = prompt_labels(items, read_prompts(Path(data_root) / prompts.format(split=split)))
    return GoldSet(items=items, labels=labels)


def _gold_problems(path: Path, parsed: ActionFile) -> str:
    total = InvalidPredictions(
        parsed.problems
    ).count  # the parser keeps the first few and counts the rest
    shown = "\n".join("  " + p.render(str(path)) for p in parsed.problems[:20])
    more = f"\n  ... and {total - 20} more" if total > 20 else ""
    return f"invalid gold action file {path} ({total} problem(s)):\n{shown}{more}"


@component("predictions", "propara.action_file", fields=TRACK_FIELDS)
def read_predictions(path: Path, gold: GoldSet) -> dict[str, ProcessTracks]:
    """A six-column action file checked by the official rules (2A.2), every problem reported.

    Rejected: an empty file, blank lines, fewer than six fields, non-integer ids or sentence numbers,
    sentence numbers below 1 or beyond the gold process's last sentence (upstream would lengthen the
    tracks to any such number), invalid actions/locations, and any difference from the gold
    (process, participant) set. Processes absent from the gold are ignored with a warning, as are
    (silently, upstream) missing or repeated sentence rows.
    """
    path = Path(path)
    parsed = read_action_file(path)
    fits = None if parsed.problems else _fit(parsed.rows, gold)
    if fits is None:  # something is wrong (or may be): the whole report, every problem at its line
        problems = ProblemList(parsed.problems)
        problems.extend(_out_of_range(parsed, gold))
        if parsed.mentions:  # a file none of whose lines names a participant gets no diff on top
            problems.extend(_participant_diff(parsed, gold))
        if problems:
            raise InvalidPredictions(problems, path.name)
    extra = sorted(
        {pid for pid in map(itemgetter(1), parsed.rows) if str(pid) not in gold.items}
        if fits is None
        else fits.extra
    )
    if extra:
        warnings.warn(
            PredictionWarning(
                f"{len(extra)} process(es) not in the gold are ignored: {_sample(extra)}"
            ),
            stacklevel=2,
        )
    if fits is None or not fits.complete:
        _warn_row_oddities(parsed, gold)
    # Tracks are built only for gold processes: an ignored process's sentence numbers are never allocated.
    rows = (
        parsed.rows
        if not extra
        else [row for row in parsed.rows if str(row.process_id) in gold.items]
    )
    return {str(pid): tracks for pid, tracks in build_tracks(rows).items()}


class _Fit(NamedTuple):
    extra: set[int]  # process ids not in the gold (ignored, with a warning)
    complete: bool  # every (process, participant) of the gold has one row per gold sentence


def _fit(rows: Sequence[ActionRow], gold: GoldSet) -> _Fit | None:
    """A clean file's checks against the gold in a few passes over its columns (issue #31): None when
    any check would report a problem, which the rule-by-rule checks below then word and place.

    Not None only when :func:`_out_of_range` and :func:`_participant_diff` find nothing; ``complete``
    False when :func:`_warn_row_oddities` may have something to say.
    """
    pids = tuple(map(itemgetter(1), rows))
    sentences = tuple(map(itemgetter(2), rows))
    names: dict[int, set[str]] = {}
    for pid, name in dict.fromkeys(zip(pids, map(itemgetter(3), rows))):
        names.setdefault(pid, set()).add(name)
    extra = {pid for pid in names if str(pid) not in gold.items}
    for item_id, tracks in gold.items.items():
        if names.get(tracks.process_id) != set(tracks.participant_names()):
            return None  # a process or participant missing, or one unexpected
    most: dict[int, int] = {}
    for pid, sentence in set(zip(pids, sentences)):
        if sentence > most.get(pid, 0):
            most[pid] = sentence
    for pid, sentence in most.items():
        tracks = gold.items.get(str(pid))
        if tracks is not None and sentence > tracks.num_sentences:
            return None  # a row beyond its process's last sentence
    # No sentence row repeated, and as many rows as the gold has (process, participant, sentence)
    # cells: every pair then has one row per sentence (each has at most that many: none is beyond).
    complete = len(set(zip(pids, map(itemgetter(3), rows), sentences))) == len(rows) and (
        len(rows) if not extra else sum(pid not in extra for pid in pids)
    ) == sum(len(names[t.process_id]) * t.num_sentences for t in gold.items.values())
    return _Fit(extra, complete)


def _out_of_range(parsed: ActionFile, gold: GoldSet) -> Iterator[Problem]:
    """Rows of a gold process whose sentence number is beyond the process's last sentence, at their line."""
    for row in parsed.rows:
        tracks = gold.items.get(str(row.process_id))
        if tracks is not None and row.sentence > tracks.num_sentences:
            yield Problem(
                row.line,
                f"sentence number {row.sentence} is outside process {row.process_id}'s sentences 1-{tracks.num_sentences}",
                str(row.process_id),
            )


def _participant_diff(parsed: ActionFile, gold: GoldSet) -> list[Problem]:
    """Missing processes, missing and unexpected participants, in ascending gold process order."""
    first_line: dict[int, dict[str, int]] = {}
    for mention in parsed.mentions:
        first_line.setdefault(mention.process_id, {}).setdefault(mention.participant, mention.line)
    problems: list[Problem] = []
    for item_id, tracks in gold.items.items():
        pid = tracks.process_id
        if pid not in first_line:
            problems.append(Problem(None, f"Process {pid} missing in predictions", item_id))
            continue
        expected = tracks.participant_names()
        for name in expected:
            if name not in first_line[pid]:
                problems.append(
                    Problem(None, f'Process {pid}: participant "{name}" is missing', item_id)
                )
        for name, line in first_line[pid].items():
            if name not in expected:
                problems.append(
                    Problem(line, f'Process {pid}: participant "{name}" is unexpected', item_id)
                )
    return problems


def _warn_row_oddities(parsed: ActionFile, gold: GoldSet) -> None:
    """Officially tolerated, but worth telling: missing or repeated sentence rows (rows beyond the gold are refused)."""
    seen: dict[tuple[int, str], list[int]] = {}
    for row in parsed.rows:
        seen.setdefault((row.process_id, row.participant), []).append(row.sentence)
    missing, repeated = [], []
    for (pid, name), sentences in seen.items():
        tracks = gold.items.get(str(pid))
        if tracks is None:
            continue
        if len(set(sentences)) < len(sentences):
            repeated.append((pid, name))
        if set(range(1, tracks.num_sentences + 1)) - set(sentences):
            missing.append((pid, name))
    notes = [
        (
            missing,
            "lack rows for some gold sentences (scored with the defaults: location unknown, action NONE)",
        ),
        (repeated, "have repeated sentence rows (the later row wins)"),
    ]
    for pairs, what in notes:
        if pairs:
            message = f"{len(pairs)} (process, participant) pair(s) {what}: {_sample(pairs)}"
            warnings.warn(PredictionWarning(message), stacklevel=3)


def _sample(values: Sequence[object]) -> str:
    shown = ", ".join(str(v) for v in values[:_EXAMPLES])
    return shown + (f" and {len(values) - _EXAMPLES} more" if len(values) > _EXAMPLES else "")


@component(
    "scorer",
    "propara.leaderboard",
    needs={"num_sentences": "int", "participants": "list(any)"},
    emits=PER_QUESTION,
)
def score_leaderboard(
    gold: GoldSet, predictions: Mapping[str, ProcessTracks], *, on_zero_denominator: float = 1.0
) -> list[ItemScore]:
    """Per process: ``<question>_p``, ``<question>_r`` (unrounded) and ``<question>_f1`` for drill-down.

    The matching specs/propara.spec declares, built from the same library components, for callers
    of the Python API (a test asserts the two agree value for value on every real process).
    ``on_zero_denominator``: the pair similarity used where upstream divides by zero and crashes
    (every group of one phrase meets every group of the other, e.g. "soil AND Soil" vs "Soil AND soil").
    """
    for item_id in gold.items:
        if item_id not in predictions:
            raise ValueError(
                f"no prediction for process {item_id} (the predictions component rejects such files)"
            )
    return Derived(derive_summaries, _matches(on_zero_denominator))(gold, predictions)


def _matches(on_zero_denominator: float) -> MatchScorer:
    participant = phrase_overlap(on_zero_denominator=on_zero_denominator)
    place = Pipeline.of(
        [lowercase(), remove_leading_article(list(ARTICLES)), stem("porter", unit="whole")]
    )
    location = PhraseOverlap(
        alternatives=place,
        blank_alternative="empties_group",
        on_zero_denominator=on_zero_denominator,
    )
    similarities = {
        "inputs": participant,
        "outputs": participant,
        "conversions": RecordMean(
            ("step",),
            (("locations", location), ("destroyed", participant), ("created", participant)),
        ),
        "moves": RecordMean(
            ("step",), (("participant", participant), ("before", location), ("after", location))
        ),
    }
    matcher = BestMatch(recall="precision_if_same_size")
    return MatchScorer(
        tuple(
            MatchStage(
                q,
                q,
                (),
                PairScorer(similarities[q], guard_empty=False),
                matcher,
                (f"{q}_p", f"{q}_r", f"{q}_f1"),
                FieldType.parse(SUMMARY_FIELDS[q]),
            )
            for q in QUESTIONS
        )
    )


@component("aggregator", "propara.leaderboard", emits=OVERALL + PER_QUESTION)
def aggregate_leaderboard(
    items: Sequence[ItemScore], *, digits: int = 3, round_overall: bool = True
) -> dict[str, float]:
    """The official numbers (2A.7) over ``items``; all zeros for an empty subset.

    Per question: ``<q>_p``/``<q>_r`` = mean over processes rounded to ``digits`` (Python round),
    ``<q>_f1`` from those rounded values (unrounded; upstream prints it with %4.3f). Overall
    ``precision``/``recall`` = mean of the four rounded values, ``f1`` their harmonic mean. With
    ``round_overall`` (default) the overall three are stored rounded to ``digits``, i.e. exactly the
    values upstream's ``-o`` JSON holds (the published leaderboard numbers).
    """
    metrics: dict[str, float] = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    for question in QUESTIONS:
        metrics.update({f"{question}_p": 0.0, f"{question}_r": 0.0, f"{question}_f1": 0.0})
    if not items:
        return metrics
    rounded: dict[str, PrecisionRecall] = {}
    for question in QUESTIONS:
        precision = round(sum(i.values[f"{question}_p"] for i in items) / len(items), digits)
        recall = round(sum(i.values[f"{question}_r"] for i in items) / len(items), digits)
        rounded[question] = PrecisionRecall(precision, recall)
        metrics.update(
            {
                f"{question}_p": precision,
                f"{question}_r": recall,
                f"{question}_f1": rounded[question].f1,
            }
        )
    overall = PrecisionRecall(
        sum(rounded[q].precision for q in QUESTIONS) / len(QUESTIONS),
        sum(rounded[q].recall for q in QUESTIONS) / len(QUESTIONS),
    )
    values: tuple[float, ...] = (overall.precision, overall.recall, overall.f1)
    if round_overall:
        values = tuple(round(v, digits) for v in values)
    metrics["precision"], metrics["recall"], metrics["f1"] = values
    return metrics
