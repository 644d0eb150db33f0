"""The four leaderboard questions and a precision/recall pair (docs/metrics.md §2A.6–2A.7).

How a process's answers are matched is declared in specs/propara.spec with library components
(``phrase_overlap``, record similarity blocks, ``best_match(recall = "precision_if_same_size")``).
"""

from __future__ import annotations

from procbench.runners.runtime.records import Record

QUESTIONS = ("inputs", "outputs", "conversions", "moves")


class PrecisionRecall(Record):
    """Precision and recall of one question of one process."""

    __slots__ = ("precision", "recall")
    precision: float
    recall: float

    def __init__(self, precision: float, recall: float) -> None:
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "recall", recall)

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 0.0 if total == 0 else 2 * self.precision * self.recall / total
