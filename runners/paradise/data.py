"""Reading the PARADISE CSV files (upstream layout ``paradise/src/data/...``) into a GoldSet.

Every file is SWAG-style: ``sent2`` holds the goal (forward tasks) or the tip/warning (reverse
tasks), ``ending0..3`` the four candidates and ``label`` the index of the correct one. Items are
identified by the test row index (docs/metrics.md §3.3): the unnamed first column of the main and reverse
files, the 0-based row position in the keyword-perturbed copies, which have no index column.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from procbench.runners.runtime._types import GoldSet
from procbench.runners.runtime.registry import component

Task = Literal["warning", "tip", "reverse_warning", "reverse_tip"]
FORWARD_TASKS = ("warning", "tip")
PERTURBATIONS = ("drop", "placeholder", "synonym", "mlm")
DATA_DIR = Path("paradise", "src", "data")
RQ_DIR = DATA_DIR / "rq_variations"

EXPLICITNESS = "explicitness"
SIMILARITY = "similarity"  # the paper's Table 4 column: cosine to a tutorial step above 0.5 or not
SIM_ABOVE_HALF, SIM_AT_MOST_HALF = "sim > 0.5", "sim <= 0.5"
STRONGLY_EXPLICIT = "explicit (>0.75)"
EXPLICIT = "explicit (>0.5)"
IMPLICIT = "implicit"
# The contract: ParadiseItem's attributes (endings: a 4-tuple) and the slice labels with their values.
ITEM_FIELDS = {"goal": "str", "endings": "list(str)", "label": "int"}
LABEL_VALUES = {
    EXPLICITNESS: (STRONGLY_EXPLICIT, EXPLICIT, IMPLICIT),
    SIMILARITY: (SIM_ABOVE_HALF, SIM_AT_MOST_HALF),
}


@dataclass(frozen=True)
class ParadiseItem:
    """One multiple-choice item: the prompt (goal, or tip/warning when reversed), 4 endings, the gold index."""

    goal: str
    endings: tuple[str, str, str, str]
    label: int


def splits_of(task: Task) -> tuple[str, ...]:
    """The split names a task accepts."""
    if task in FORWARD_TASKS:
        return ("dev", "test", *(f"test_{p}" for p in PERTURBATIONS))
    return ("test",)


def split_file(task: Task, split: str) -> Path:
    """The data file of (task, split), relative to the data root."""
    if task not in (*FORWARD_TASKS, "reverse_warning", "reverse_tip"):
        raise ValueError(
            f"unknown PARADISE task {task!r}; expected warning, tip, reverse_warning or reverse_tip"
        )
    if split not in splits_of(task):
        raise ValueError(
            f"unknown split {split!r} for PARADISE task {task!r}; expected one of {', '.join(splits_of(task))}"
        )
    if task.startswith("reverse_"):
        return RQ_DIR / "rq4" / f"{task}_test.csv"
    if split in ("dev", "test"):
        return DATA_DIR / f"{task}_{split}.csv"
    return RQ_DIR / "rq1" / f"{task}_{split}.csv"


def read_rows(path: Path) -> list[dict[str, str]]:
    """The data rows of one CSV as dicts keyed by header ("" for the unnamed index column)."""
    if not path.is_file():
        raise FileNotFoundError(f"PARADISE data file not found: {path}")
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _item(row: dict[str, str]) -> ParadiseItem:
    endings = (row["ending0"], row["ending1"], row["ending2"], row["ending3"])
    return ParadiseItem(goal=row["sent2"], endings=endings, label=int(row["label"]))


def load_split(data_root: Path, task: Task, split: str) -> dict[str, ParadiseItem]:
    """Items of (task, split) keyed by row index (as str), in file order."""
    rows = read_rows(Path(data_root) / split_file(task, split))
    items: dict[str, ParadiseItem] = {}
    for position, row in enumerate(rows):
        # rq1 copies have no index column: their item index is the row position (docs/metrics.md §3.4).
        index = row.get("", str(position))
        items[str(int(index))] = _item(row)
    return items


def membership(data_root: Path, task: str, threshold: str) -> frozenset[str]:
    """Test row indices listed in ``rq3/<task>_test<threshold>.csv`` (first column = test row index)."""
    rows = read_rows(Path(data_root) / RQ_DIR / "rq3" / f"{task}_test{threshold}.csv")
    return frozenset(str(int(row[""])) for row in rows)


def explicitness_labels(
    data_root: Path, task: str, item_ids: list[str]
) -> dict[str, dict[str, str]]:
    """Disjoint explicitness slice: >0.75 first, then the rest of the >0.5 file, else implicit.

    The rq3 files (docs/metrics.md §3.4) list the test rows above 0.5 and above 0.75 (a subset of the former); a
    slice dimension needs one value per item, so the three values are made disjoint.
    The paper's "Sim>0.5" column is therefore the union of the first two values, which is what the
    second dimension ``similarity`` gives directly.
    """
    strong = membership(data_root, task, "0.75")
    explicit = membership(data_root, task, "0.5")
    labels: dict[str, dict[str, str]] = {}
    for item_id in item_ids:
        value = (
            STRONGLY_EXPLICIT
            if item_id in strong
            else EXPLICIT
            if item_id in explicit
            else IMPLICIT
        )
        labels[item_id] = {
            EXPLICITNESS: value,
            SIMILARITY: SIM_ABOVE_HALF if item_id in explicit else SIM_AT_MOST_HALF,
        }
    return labels


# Both labels exist only on the test and test_<perturbation> splits of warning and tip (not dev, not
# the reverse tasks): the rq3 membership files list test rows only.
@component("reader", "paradise.choices", fields=ITEM_FIELDS, labels=LABEL_VALUES)
def read_choices(data_root: Path, split: str, *, task: Task) -> GoldSet:
    """PARADISE multiple-choice items of one task and split, keyed by row index.

    Splits: ``dev``, ``test`` and the keyword-perturbed ``test_drop``, ``test_placeholder``,
    ``test_synonym``, ``test_mlm`` for warning/tip; ``test`` for the reverse tasks. Test and
    perturbed splits of forward tasks carry the slice ``explicitness`` (explicit (>0.75),
    explicit (>0.5), implicit; disjoint).
    """
    items = load_split(Path(data_root), task, split)
    labels: dict[str, dict[str, str]] = {}
    if task in FORWARD_TASKS and split != "dev":
        labels = explicitness_labels(Path(data_root), task, list(items))
    return GoldSet(items=items, labels=labels)
