"""An Evaluation as plain rows (picklable, for engines) and as the frames the store inserts."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from runners.runner import Evaluation
from submissions.store import AGGREGATE_SCHEMA, ITEM_SCHEMA

ItemRow = tuple[str, str, float]  # item_id, metric, value
AggregateRow = tuple[str, str, str, float, int]  # slice, slice_value, metric, value, n_items ('' '' = whole split)


def item_rows(evaluation: Evaluation) -> tuple[ItemRow, ...]:
    return tuple((item.item_id, metric, float(value)) for item in evaluation.items for metric, value in item.values.items())


def aggregate_rows(evaluation: Evaluation) -> tuple[AggregateRow, ...]:
    rows: list[AggregateRow] = [("", "", metric, float(value), evaluation.n_items) for metric, value in evaluation.metrics.items()]
    for name, values in evaluation.slices.items():
        for value, result in values.items():
            rows += [(name, value, metric, float(v), result.n_items) for metric, v in result.metrics.items()]
    return tuple(rows)


def item_frame(sid: str, rows: Iterable[ItemRow]) -> pl.DataFrame:
    return pl.DataFrame([(sid, *r) for r in rows], schema=ITEM_SCHEMA, orient="row")


def aggregate_frame(sid: str, rows: Iterable[AggregateRow]) -> pl.DataFrame:
    return pl.DataFrame([(sid, *r) for r in rows], schema=AGGREGATE_SCHEMA, orient="row")
