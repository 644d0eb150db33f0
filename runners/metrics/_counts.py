"""Micro ratios over counts a scorer emits per item (``measure x { counts = [...]  stats = [...] }``).

Format components count (PAGED's parser counts matched gateways, BLEU sums of matched elements and
the number of elements, per element type); what the benchmark reports from those counts is written
in the spec: which kinds are pooled, which counts are the numerator and the denominator, rounding.

``counts`` lists value prefixes (``node.XOR``, or the three action kinds ``bleu_node.Activity``,
``bleu_node.StartNode``, ``bleu_node.EndNode``) and ``stats`` the count names under each prefix:
four names give precision = Σ stats[0] / Σ stats[1], recall = Σ stats[2] / Σ stats[3] and their F1
(the measure's name is the F1, ``<name>_p`` and ``<name>_r`` the ratios); two names give one ratio.
Sums run over every item of the set and every listed prefix; a zero denominator gives 0, and F1 is 0
when precision + recall is 0.  The order of the additions is the official scorers': each count is
summed over the items first (left to right from 0), then over the prefixes, so the numbers are equal
to the last bit, not just after rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from operator import add
from typing import Any

from procbench.runners.metrics._base import Metric, Stats
from procbench.runners.metrics._derived import _f1


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


class MicroCounts(Metric):
    """Pooled ratios of per-item counts; not registered (a measure's ``counts`` / ``stats`` builds it).

    ``stats`` holds, per position, the count names added together there (``[tp, tn]`` over
    ``[tp, fp, tn, fn]`` is an accuracy); ``prefixes`` (``("",)`` for none) go before each name.
    """

    aggregations = ("micro",)
    library = ""

    def __init__(self, prefixes: Sequence[str], stats: Sequence[Sequence[str]]):
        if len(stats) not in (2, 4):
            raise ValueError(
                f"stats names 2 counts (a ratio) or 4 (precision and recall), got {len(stats)}"
            )
        self.prefixes = tuple(prefixes) or ("",)
        self.stats = tuple(tuple(position) for position in stats)
        self.reads = tuple(
            f"{prefix}.{name}" if prefix else name
            for prefix in self.prefixes
            for names in self.stats
            for name in names
        )
        # each place's columns in :attr:`reads`, prefix by prefix: summed in that order
        width = sum(len(names) for names in self.stats)
        offsets = [sum(len(names) for names in self.stats[:j]) for j in range(len(self.stats))]
        self._columns = [
            [
                p * width + offsets[j] + k
                for p in range(len(self.prefixes))
                for k in range(len(names))
            ]
            for j, names in enumerate(self.stats)
        ]

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        return (name, f"{name}_p", f"{name}_r") if len(self.stats) == 4 else (name,)

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        raise TypeError("a counts measure reads its scorer's values; it computes nothing per item")

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        columns = (
            [reduce(add, column, 0) for column in zip(*rows)] if rows else [0] * len(self.reads)
        )
        totals = [sum(columns[i] for i in position) for position in self._columns]
        if len(totals) == 2:
            return (_ratio(totals[0], totals[1]),)
        precision, recall = _ratio(totals[0], totals[1]), _ratio(totals[2], totals[3])
        return (_f1(precision, recall), precision, recall)
