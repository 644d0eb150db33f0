"""Typed values that cross the runner boundary.

Every benchmark kernel speaks in these types, so the compiler, the intake and the store never need
to know which benchmark they are handling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One problem found in a user-supplied file (a prediction file, usually).

    ``line`` is 1-based within the file; ``None`` when the problem concerns the file as a whole
    (e.g. "participants missing for process 5").
    """

    line: int | None
    message: str
    item_id: str | None = None

    def render(self, source: str = "") -> str:
        where = f"{source}:{self.line}" if self.line is not None else (source or "file")
        return f"{where}: {self.message}"


class InvalidPredictions(Exception):
    """A prediction file that cannot be scored; carries every problem found, not only the first."""

    def __init__(self, problems: Sequence[Problem], source: str = ""):
        self.problems = list(problems)
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in {self.source or 'the prediction file'}"
        return "\n".join([head, *("  " + p.render(self.source) for p in self.problems)])


@dataclass(frozen=True)
class GoldSet:
    """The gold side of one split: items in official order, plus slice labels.

    ``items``: item id -> whatever record the task's scorer understands (kept in the official
    iteration order). ``labels``: item id -> {slice dimension -> label value}.
    """

    items: Mapping[str, Any]
    labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # Per-answer label views: dimension -> label value -> items with their gold restricted to the
    # answers carrying that value (OpenPI's with/without image).  Scored like the full set.
    answer_views: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class ItemScore:
    """Per-item statistics: the numbers an aggregator needs (scores, counts), keyed by name."""

    item_id: str
    values: Mapping[str, float]


class PredictionWarning(UserWarning):
    """Something odd but officially tolerated in a prediction file (e.g. missing ids scored empty).

    Components raise these with ``warnings.warn``; the runner collects them and shows them to the user.
    """
