"""Per-task mapping from a foreign log's per-item output to a procbench prediction record.

The table is keyed by task name.  A mapping says which kind of output the task takes (an option
index, or a list of texts split from one generation), which prediction field it fills, where the item
id is in the logged item, and how to check that a logged item is the gold item it claims to be.
A task without an entry here cannot be imported (yet); see docs/ecosystem.md for adding one.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from procbench.imports.logged import LoggedOutput, dotted

Kind = Literal["choice", "text_list"]
Checker = Callable[[LoggedOutput, Any], str | None]


@dataclass(frozen=True)
class ImportMapping:
    """How one task's prediction records are made from logged outputs."""

    task: str
    kind: Kind
    prediction_field: str  # the prediction record's value field ("label", "answers")
    id_fields: tuple[str, ...]  # paths into LoggedOutput.fields tried in order; then the log's own sample id
    id_type: type = str  # int for row-indexed tasks
    n_choices: int = 0  # choice: options per item (letters A.. map to 0..)
    separator: str = ""  # text_list: the generation is split on this
    check: Checker | None = None  # None when the logged item agrees with the gold item, else why not
    notes: str = ""

    @property
    def letters(self) -> str:
        return string.ascii_uppercase[: self.n_choices]


def _paradise_check(output: LoggedOutput, gold: Any) -> str | None:
    """The logged goal and options, where the log has them, must be the gold item's."""
    goal = dotted(output.fields, "sent2")
    if isinstance(goal, str) and goal.strip() != gold.goal.strip():
        return f"its goal {goal[:60]!r} is not the gold item's {gold.goal[:60]!r} (another split or task?)"
    endings = [dotted(output.fields, f"ending{k}") for k in range(4)]
    if all(isinstance(e, str) for e in endings) and [e.strip() for e in endings] != [e.strip() for e in gold.endings]:
        return "its four endings are not the gold item's (another split or task?)"
    shown = [c.strip() for c in output.choice_texts]
    if len(shown) == 4 and shown != [e.strip() for e in gold.endings]:
        return "its options are not the gold item's endings in the gold order"
    return None


_PARADISE = dict(
    kind="choice",
    prediction_field="label",
    # the CSV's unnamed row-index column, as csv.DictReader ("") and pandas/datasets ("Unnamed: 0") name it
    id_fields=("Unnamed: 0", "", "id", "row"),
    id_type=int,
    n_choices=4,
    check=_paradise_check,
    notes="Four-way multiple choice: the chosen ending (0-3). lm-eval log-likelihoods -> argmax; Inspect -> the answer letter A-D.",
)

_OPENPI = dict(
    kind="text_list",
    prediction_field="answers",
    id_fields=("id",),
    id_type=str,
    separator=", ",
    notes="One generation per step, state changes joined by ', ' as in upstream's formatted_for_gpt2 training files.",
)

MAPPINGS: Mapping[str, ImportMapping] = {
    **{task: ImportMapping(task=task, **_PARADISE) for task in ("paradise-tip", "paradise-warning", "paradise-reverse-tip", "paradise-reverse-warning")},
    **{task: ImportMapping(task=task, **_OPENPI) for task in ("openpi", "openpi-head")},
}


def mapping_for(task: str) -> ImportMapping:
    """The mapping of a task; KeyError naming the tasks that have one."""
    try:
        return MAPPINGS[task]
    except KeyError:
        raise KeyError(f"no import mapping for task {task!r} (tasks with one: {', '.join(sorted(MAPPINGS))})") from None
