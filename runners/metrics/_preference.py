"""Pairwise preference: how often a system's per-item score beats a reference's, ties counting half.

Each item holds the reference's score (the gold field: a baseline's grade, a human-written answer's
rating) and the system's (the prediction field), from the same judge or rubric.  The item is a win
where the system's is higher, a tie where they are equal, a loss otherwise, and
``win_rate = (wins + tie_credit x ties) / items`` (``tie_credit`` 0.5 by default, the convention of
AlpacaEval and Chatbot Arena's win rates; ``<measure>_ties`` is the share of ties).  An item
without a prediction is a loss.  ``better = "lower"`` reverses the comparison for scores where lower
is better (a rank, an error count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from procbench.runners.metrics._base import NUMBER, Metric, Stats, library_metric


class WinRate(Metric):
    gold = (NUMBER,)
    prediction = (NUMBER,)
    aggregations = ("mean",)
    library = "win rate with ties at tie_credit (transcribed in docs/metrics.md)"

    def __init__(self, tie_credit: float = 0.5, better: str = "higher"):
        self.tie_credit, self.lower_wins = float(tie_credit), better == "lower"

    def signature(self) -> str:
        return f"tie_credit={self.tie_credit:g};{'lower' if self.lower_wins else 'higher'} wins"

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (":win", ":tie")

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        return (name, f"{name}_ties")

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        if prediction is None:
            return (0.0, 0.0)
        system, reference = (
            (-float(prediction), -float(gold))
            if self.lower_wins
            else (float(prediction), float(gold))
        )
        return (1.0 if system > reference else 0.0, 1.0 if system == reference else 0.0)

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        if not rows:
            return (0.0, 0.0)
        wins, ties = sum(row[0] for row in rows), sum(row[1] for row in rows)
        return ((wins + self.tie_credit * ties) / len(rows), ties / len(rows))


@library_metric("win_rate")
def win_rate(*, tie_credit: float = 0.5, better: Literal["higher", "lower"] = "higher") -> Metric:
    """Share of items where the prediction's score beats the gold (reference) score, ties counting tie_credit: <measure>, <measure>_ties."""
    return WinRate(tie_credit, better)
