"""Which of a board's columns the Board page shows, in which order and how wide (issue #30, deliverable 6).

Three groups, never interleaved:

1. **metric columns**: Rank, the ranking metric and its 95% interval, then the tie mark (where the view has a
   tie test) and Model
   (with the row's kind where papers' rows are on the board and a contamination mark where a card names
   one), then every other metric of the chosen groups (each bounded variant beside the figure it corrects),
   then Details and Coverage;
2. **card columns** (the model card's fields: kind, weights, family, size class, parameters,
   contamination, paper, code) and
3. **bookkeeping columns** (team, who ran and judged, items, source, date), both on demand.

The ranking metric and its interval come before the model's name, so a 390-px phone shows them without
scrolling sideways; the interval column is headed "95% CI" (the metric's name is beside it, in the
column's help), and the widths below let a 1400-px window show at least six metric columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from procbench.leaderboard.model import MetricInfo, TaskInfo

CARD = ("Kind", "Weights", "Family", "Size class", "Parameters", "Contamination", "Paper", "Code")
BOOKKEEPING = ("Team", "Run by", "Judged by", "Items", "Source", "Submitted")
MARKED = (
    "suspected",
    "confirmed",
)  # contamination words shown beside the model even without the card columns
MODEL_PX = (
    120,
    200,
)  # the Model column: as wide as its longest name within these bounds (longer names end in "…"; hover shows them)
RANK_PX = 48
METRIC_PX = (60, 96)  # a metric column: as wide as its header, within these bounds
CI_LABEL = "95% CI"
TIE_LABEL = "Tie"  # the tie-group column's header ("leader", "tied", "best submitted" below it; its help says the rest)
# Home's models × boards grid (issue #30): its columns together fit a 1400-px window's content width, less the frame;
# Page and Boards narrow, the rank columns sharing the rest in proportion to their longest cell
HOME_GRID_PX = 1230
HOME_PAGE_PX, HOME_BOARDS_PX = 56, 64


def ci_column(metric: MetricInfo) -> str:
    """The interval column's key in the board's table (its header on the page is :data:`CI_LABEL`)."""
    return f"{metric.display} {CI_LABEL}"


def header_px(text: str, bounds: tuple[int, int] = METRIC_PX) -> int:
    """A column's width that shows its header whole (within ``bounds``): about 7 px a character and the grid's padding."""
    return int(min(bounds[1], max(bounds[0], 7 * len(text) + 22)))


def order(
    info: TaskInfo,
    columns: Sequence[str],
    metric: MetricInfo,
    *,
    details: bool,
    kinds: Sequence[str] = (),
    contamination: Sequence[str] = (),
    ties: Sequence[str] = (),
    beside_bounded: Sequence[str] = (),
) -> list[str]:
    """The Board's column order: metric columns, then (with ``details``) the card columns, then the bookkeeping ones.

    ``columns``: the board table's columns; ``kinds`` and ``contamination``: the rows' values of those columns
    (papers' rows and contamination marks stay beside the model without ``details``); ``ties``: the tie-group
    column's values (no column where no row has a mark: no tie test in this view); ``beside_bounded``: every
    metric column in the spec's order with each bounded variant after the figure it corrects
    (``boardview.beside_bounded``).
    """
    present = set(columns)
    marks = (
        []
        if details
        else (["Kind"] if "reported" in set(kinds) else [])
        + (["Contamination"] if set(MARKED) & {c.split(" (")[0] for c in contamination} else [])
    )
    others = [
        c for c in (beside_bounded or [m.display for m in info.metrics]) if c != metric.display
    ]
    lead = [
        "Rank",
        metric.display,
        ci_column(metric),
        *(["Tie group"] if any(ties) else []),
        "Model",
        *marks,
    ]
    shown = [*lead, *others, "Details", "Coverage"]
    if details:
        shown += [c for c in CARD if c not in shown] + [c for c in BOOKKEEPING if c not in shown]
    return [c for c in dict.fromkeys(shown) if c in present]


def groups_of(shown: Sequence[str]) -> dict[str, list[str]]:
    """The shown columns by group (``metric``, ``card``, ``bookkeeping``), in their order: what the page's caption and the tests read."""
    out: dict[str, list[str]] = {"metric": [], "card": [], "bookkeeping": []}
    for column in shown:
        out[
            "card" if column in CARD else "bookkeeping" if column in BOOKKEEPING else "metric"
        ].append(column)
    return out
