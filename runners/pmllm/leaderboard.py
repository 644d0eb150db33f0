"""The PM-LLM-Benchmark leaderboard table: listing rule, ranking, rounding and cell markup (docs/metrics.md §4.6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from procbench.runners.pmllm.naming import display_name

MIN_VERDICTS = 44
# Table columns after Score/OS/LRM: PCo CC PMo PQ HG FA OPT VI = C1 C2 C3 C4 C5 C6 C8 C7.
COLUMN_CATEGORIES = (1, 2, 3, 4, 5, 6, 8, 7)
COLUMN_TITLES = ("PCo", "CC", "PMo", "PQ", "HG", "FA", "OPT", ":nerd_face: VI")
BOLD_MARGIN = 0.3


@dataclass(frozen=True)
class ModelSums:
    """One model's unrounded sums, as the ``pmllm.sums`` aggregator returns them."""

    model: str
    score: float
    total: float
    categories: tuple[float, ...]  # C1..C8
    verdicts: int

    @classmethod
    def from_metrics(cls, model: str, metrics: Mapping[str, float]) -> ModelSums:
        categories = tuple(metrics[f"c{c}"] for c in range(1, 9))
        return cls(model, metrics["score"], metrics["total"], categories, int(metrics["verdicts"]))

    def rounded(self, category: int) -> float:
        """C values are shown and ranked as ``round(C, 1)``; Score and total stay unrounded."""
        return round(self.categories[category - 1], 1)


def is_listed(sums: ModelSums) -> bool:
    """A model appears on the leaderboard only with at least 44 verdict files."""
    return sums.verdicts >= MIN_VERDICTS


def ranking_key(sums: ModelSums) -> tuple[float | str, ...]:
    """Sorted descending: Score, total, rounded C1..C5, then the model name (so reverse lexicographic)."""
    return (sums.score, sums.total, *(sums.rounded(c) for c in range(1, 6)), sums.model)


def rank(models: Sequence[ModelSums]) -> list[ModelSums]:
    """The listed models in leaderboard order."""
    return sorted((m for m in models if is_listed(m)), key=ranking_key, reverse=True)


def category_cell(value: float, column_max: float) -> str:
    """``:mage_woman: **x**`` at the column maximum, ``**x**`` within 0.3 of it, else ``x``.

    The test runs in binary floating point on the rounded values, like upstream: e.g. 7.1 under a
    maximum of 7.4 is not bold because 7.4 - 0.3 is slightly above 7.1 in doubles.
    """
    text = f"{value:.1f}"
    if value == column_max:
        return f":mage_woman: **{text}**"
    if value >= column_max - BOLD_MARGIN:
        return f"**{text}**"
    return text


def table_rows(
    models: Sequence[ModelSums], flags: Mapping[str, tuple[bool, bool]]
) -> list[list[str]]:
    """Cells of the leaderboard table (Model, Score, OS, LRM, PCo .. VI), ranked; ``flags``: model -> (OS, LRM)."""
    ranked = rank(models)
    maxima = {c: max((m.rounded(c) for m in ranked), default=0.0) for c in COLUMN_CATEGORIES}
    mark = {True: ":white_check_mark:", False: ":x:"}
    rows = []
    for m in ranked:
        is_os, is_lrm = flags.get(m.model, (False, False))
        cells = [category_cell(m.rounded(c), maxima[c]) for c in COLUMN_CATEGORIES]
        rows.append(
            [display_name(m.model), f"**{m.score:.1f}**", mark[is_os], mark[is_lrm], *cells]
        )
    return rows
