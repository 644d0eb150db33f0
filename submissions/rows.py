"""An Evaluation as plain rows (picklable, for engines) and as what the store inserts (``store.ScoreRows``)."""

from __future__ import annotations

from collections.abc import Iterable

from procbench.runners.runtime.runner import Evaluation
from procbench.submissions.store import ScoreRows

ItemRow = tuple[str, str, float]  # item_id, metric, value
AggregateRow = tuple[
    str, str, str, float, int
]  # slice, slice_value, metric, value, n_items ('' '' = whole split)


def item_rows(evaluation: Evaluation) -> tuple[ItemRow, ...]:
    return tuple(
        (item.item_id, metric, float(value))
        for item in evaluation.items
        for metric, value in item.values.items()
    )


def aggregate_rows(evaluation: Evaluation) -> tuple[AggregateRow, ...]:
    rows: list[AggregateRow] = [
        ("", "", metric, float(value), evaluation.n_items)
        for metric, value in evaluation.metrics.items()
    ]
    for name, values in evaluation.slices.items():
        for value, result in values.items():
            rows += [
                (name, value, metric, float(v), result.n_items)
                for metric, v in result.metrics.items()
            ]
    return tuple(rows)


def item_frame(sid: str, rows: Iterable[ItemRow]) -> ScoreRows:
    """Submission ``sid``'s item rows, as ``store.insert_submission`` takes them."""
    return ScoreRows(sid, tuple((item_id, metric, float(value)) for item_id, metric, value in rows))


def aggregate_frame(sid: str, rows: Iterable[AggregateRow]) -> ScoreRows:
    """Submission ``sid``'s aggregate rows, as ``store.insert_submission`` takes them."""
    return ScoreRows(sid, tuple((s, v, m, float(x), n) for s, v, m, x, n in rows))
