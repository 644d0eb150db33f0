"""The NAACL'18 questions of one paragraph and a grid's answers to them (docs/metrics.md §2B.4–2B.5).

The deriver ``propara.naacl18_questions`` is extraction only: for a paragraph's gold it lists every
question instance its annotators' labels ask (per annotator: did each labelled participant get
created? at which step? where to? ...), and for a predicted grid the grid's answer to each of those
instances, in the same order.  How the answers count (TP/FP/TN/FN), how the counts pool and which
number each question reports is declared in specs/propara-naacl18.spec with library metrics
(runners/metrics/_outcomes.py).

Fields (each a list with one entry per question instance, gold and prediction aligned):

* ``created`` / ``destroyed`` / ``moved`` (Q1, Q4, Q7): per annotator and labelled participant, yes/no;
* ``create_step`` / ``destroy_step`` (Q2, Q5): per create/destroy label, the step (the grid's: None
  when it says the event never happens);
* ``create_location`` / ``destroy_location`` (Q3, Q6), ``move_from`` / ``move_to`` (Q9, Q10): per
  label whose gold location is known, the location (the grid's row: None when it is null or unk);
* ``move_steps`` (Q8): per annotator and moved participant, the steps it moves at, ``out_of`` the
  candidate steps (gold: the paragraph's sentences; grid: upstream's K, its first participant's rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from procbench.runners.propara.naacl18_gold import NULL, UNK, Label, Paragraph
from procbench.runners.propara.naacl18_grid import GridRow, ParagraphGrid, is_location
from procbench.runners.runtime.registry import component

QUESTION_FIELDS = {
    "created": "list(bool)",
    "create_step": "list(optional(int))",
    "create_location": "list(optional(str))",
    "destroyed": "list(bool)",
    "destroy_step": "list(optional(int))",
    "destroy_location": "list(optional(str))",
    "moved": "list(bool)",
    "move_steps": "list(record(answers: list(int), out_of: int))",
    "move_from": "list(optional(str))",
    "move_to": "list(optional(str))",
}


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


def _location(value: str) -> str | None:
    return value if is_location(value) else None


class _Answers:
    """One side's answers, appended question by question in the order the gold's labels ask them."""

    def __init__(self) -> None:
        self.fields: dict[str, list[Any]] = {name: [] for name in QUESTION_FIELDS}

    def add(self, name: str, value: Any) -> None:
        self.fields[name].append(value)


@component(
    "deriver",
    "propara.naacl18_questions",
    fields=QUESTION_FIELDS,
    gold_needs={"annotator_sets": "list(list(any))", "num_sentences": "int"},
    prediction_needs={"rows": "any", "n_steps": "int"},
)
def naacl18_questions(record: Any, gold: Paragraph | None) -> dict[str, list[Any]]:
    """The NAACL'18 question instances of a paragraph's labels (``gold`` None), or a grid's answers to them (docs/metrics.md §2B.5)."""
    paragraph: Paragraph = record if gold is None else gold
    grid: ParagraphGrid | None = None if gold is None else record
    labelled = sorted(paragraph.labelled_participants())
    if grid is not None and labelled:
        predicted = {
            name: events(grid.rows[name]) for name in labelled
        }  # the predictions reader ensured every labelled row
    answers = _Answers()
    for labels in paragraph.annotator_sets:
        by_kind: dict[str, list[Label]] = {
            kind: [label for label in labels if label.kind == kind]
            for kind in ("create", "destroy", "move")
        }
        moved = sorted({label.participant for label in by_kind["move"]})
        for name in labelled:  # Cat-1: yes/no per labelled participant
            if grid is None:
                answers.add(
                    "created", any(label.participant == name for label in by_kind["create"])
                )
                answers.add(
                    "destroyed", any(label.participant == name for label in by_kind["destroy"])
                )
                answers.add("moved", name in moved)
            else:
                answers.add("created", predicted[name].created is not None)
                answers.add("destroyed", predicted[name].destroyed is not None)
                answers.add("moved", bool(predicted[name].moved))
        for kind, step, location in (
            ("create", "create_step", "create_location"),
            ("destroy", "destroy_step", "destroy_location"),
        ):
            for label in by_kind[kind]:  # Cat-2 and Cat-3 of creation and destruction
                gold_location = label.to_location if kind == "create" else label.from_location
                if grid is None:
                    answers.add(step, label.sid)
                else:
                    answers.add(
                        step,
                        predicted[label.participant].created
                        if kind == "create"
                        else predicted[label.participant].destroyed,
                    )
                if gold_location != UNK:  # the row is read only when the gold location is known
                    row = None if grid is None else grid.rows[label.participant][label.sid]
                    answers.add(
                        location,
                        gold_location
                        if row is None
                        else _location(row.target if kind == "create" else row.source),
                    )
        for name in moved:  # Q8: the set of move steps of each moved participant
            if grid is None:
                steps = sorted(
                    {label.sid for label in by_kind["move"] if label.participant == name}
                )
                answers.add("move_steps", {"answers": steps, "out_of": paragraph.num_sentences})
            else:
                answers.add(
                    "move_steps", {"answers": sorted(predicted[name].moved), "out_of": grid.n_steps}
                )
        for label in by_kind["move"]:
            row = None if grid is None else grid.rows[label.participant][label.sid]
            if label.from_location != UNK:
                answers.add(
                    "move_from", label.from_location if row is None else _location(row.source)
                )
            if label.to_location != UNK:
                answers.add("move_to", label.to_location if row is None else _location(row.target))
    return answers.fields
