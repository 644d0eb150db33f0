"""The NAACL'18 question counting as first written in Python: the oracle of the declared spec.

specs/propara-naacl18.spec declares this counting with library metrics (binary_outcomes,
answer_outcomes, set_outcomes) over the questions ``propara.naacl18_questions()`` extracts.  This
module keeps the direct, independent transcription of docs/metrics.md §2B.4–2B.5 it replaced, so
that tests can compare the two on real and generated grids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from procbench.runners.propara.naacl18_gold import NULL, UNK, Label, Paragraph
from procbench.runners.propara.naacl18_grid import GridRow, ParagraphGrid, is_location

QUESTION_IDS = tuple(f"q{n}" for n in range(1, 11))
OUTCOMES = ("tp", "fp", "tn", "fn")


def porter2_stemmer() -> tuple[str, Callable[[str], str]]:
    """Porter2 as upstream (PyPI ``stemming`` 1.0.1); NLTK's English Snowball when it is absent.

    The two agree on every alphabetic token of ProPara and give identical counts on the fixture;
    they differ on a few tokens with non-letters (e.g. "g-rated"), see docs/metrics.md §2B.4.
    """
    try:
        from stemming.porter2 import stem
    except ImportError:  # pragma: no cover - depends on the environment
        from nltk.stem.snowball import SnowballStemmer

        return "nltk-snowball-english", SnowballStemmer("english").stem
    return "stemming-porter2", stem


STEMMER_NAME, _STEM = porter2_stemmer()


@lru_cache(maxsize=65536)
def _stemmed(text: str) -> str:
    tokens = text.lower().replace('"', "").split()
    return " " + " ".join(_STEM(token) for token in tokens) + " "


def location_match(predicted: str, gold: str) -> bool:
    """Equal strings, or the stemmed prediction is a token-aligned substring of the stemmed gold."""
    return predicted == gold or _stemmed(predicted) in _stemmed(gold)


@dataclass(frozen=True)
class Events:
    """What a participant's predicted rows say happens to it (2B.4)."""

    created: int | None
    destroyed: int | None
    moved: frozenset[int]


def events(rows: Mapping[int, GridRow]) -> Events:
    ordered = sorted(rows.items())
    created = None
    if ordered and ordered[0][1].source == NULL:
        created = next((sid for sid, row in ordered if row.target != NULL), None)
    destroyed = None
    if ordered and ordered[-1][1].target == NULL:
        destroyed = next((sid for sid, row in reversed(ordered) if row.source != NULL), None)
    moved = frozenset(
        sid
        for sid, row in ordered
        if row.source != NULL and row.target != NULL and row.source != row.target
    )
    return Events(created, destroyed, moved)


@dataclass
class Counts:
    """TP/FP/TN/FN of each question, as ``{"q1": {"tp": .., ...}, ...}``."""

    table: dict[str, dict[str, int]] = field(
        default_factory=lambda: {q: dict.fromkeys(OUTCOMES, 0) for q in QUESTION_IDS}
    )

    def add(self, question: str, outcome: str, n: int = 1) -> None:
        self.table[question][outcome] += n

    def binary(self, question: str, predicted: bool, gold: bool) -> None:
        self.add(question, ("tp" if gold else "fp") if predicted else ("fn" if gold else "tn"))

    def flat(self) -> dict[str, float]:
        return {f"{q}_{o}": float(self.table[q][o]) for q in QUESTION_IDS for o in OUTCOMES}


def count_paragraph(paragraph: Paragraph, grid: ParagraphGrid | None) -> Counts:
    """Q1–Q10 counts of one paragraph; ``grid`` may be None only when nothing was labelled."""
    counts = Counts()
    labelled = paragraph.labelled_participants()
    if not labelled:
        return counts
    assert grid is not None, "validated predictions cover every labelled paragraph"
    predicted = {name: events(grid.rows[name]) for name in labelled}
    for labels in paragraph.annotator_sets:
        _count_annotator(labels, labelled, predicted, grid, counts)
    return counts


def _count_annotator(
    labels: tuple[Label, ...],
    labelled: frozenset[str],
    predicted: Mapping[str, Events],
    grid: ParagraphGrid,
    counts: Counts,
) -> None:
    by_kind = {
        kind: [label for label in labels if label.kind == kind]
        for kind in ("create", "destroy", "move")
    }
    created = {label.participant for label in by_kind["create"]}
    destroyed = {label.participant for label in by_kind["destroy"]}
    moved = {label.participant for label in by_kind["move"]}
    for name in labelled:  # Cat-1: yes/no per labelled participant
        counts.binary("q1", predicted[name].created is not None, name in created)
        counts.binary("q4", predicted[name].destroyed is not None, name in destroyed)
        counts.binary("q7", bool(predicted[name].moved), name in moved)
    for label in by_kind["create"]:  # Cat-2 and Cat-3 of creation
        _count_step(counts, "q2", predicted[label.participant].created, label.sid)
        if label.to_location != UNK:
            _count_location(
                counts, "q3", grid.rows[label.participant][label.sid].target, label.to_location
            )
    for label in by_kind["destroy"]:
        _count_step(counts, "q5", predicted[label.participant].destroyed, label.sid)
        if label.from_location != UNK:
            _count_location(
                counts, "q6", grid.rows[label.participant][label.sid].source, label.from_location
            )
    for name in sorted(moved):  # Q8: the set of move steps of each moved participant
        gold_steps = {label.sid for label in by_kind["move"] if label.participant == name}
        steps = predicted[name].moved
        tp, fp, fn = len(steps & gold_steps), len(steps - gold_steps), len(gold_steps - steps)
        counts.add("q8", "tp", tp)
        counts.add("q8", "fp", fp)
        counts.add("q8", "fn", fn)
        counts.add("q8", "tn", grid.n_steps - tp - fp - fn)
    for label in by_kind["move"]:  # the row is read only when the gold location is known
        if label.from_location != UNK:
            _count_location(
                counts, "q9", grid.rows[label.participant][label.sid].source, label.from_location
            )
        if label.to_location != UNK:
            _count_location(
                counts, "q10", grid.rows[label.participant][label.sid].target, label.to_location
            )


def _count_step(counts: Counts, question: str, predicted_step: int | None, gold_step: int) -> None:
    if predicted_step is None:
        counts.add(question, "fn")
    else:
        counts.add(question, "tp" if predicted_step == gold_step else "fp")


def _count_location(counts: Counts, question: str, predicted: str, gold: str) -> None:
    if not is_location(predicted):
        counts.add(question, "fn")
    else:
        counts.add(question, "tp" if location_match(predicted, gold) else "fp")
