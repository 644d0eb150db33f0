"""An Evaluation as plain rows (picklable, for engines) and as what the store inserts (``store.ScoreRows``).

Item rows travel between processes as tuples (``item_rows``) or, from the processes engine's workers, as
columns (:class:`ItemColumns`, an Arrow table): a PAGED submission has about 70,000 item rows, and the
coordinator that writes them then neither unpickles a tuple per row nor converts each value from Python
into DuckDB (issue #31).  Both are the same rows, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from procbench.runners.runtime.runner import Evaluation
from procbench.submissions.store import ScoreRows

if TYPE_CHECKING:
    import pyarrow as pa

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


ITEM_COLUMNS = ("item_id", "metric", "value")


class ItemColumns(Sequence[ItemRow]):
    """Item rows as columns: an Arrow table (item_id string, metric string, value float64), rows in order.

    A sequence of the same ``(item_id, metric, value)`` tuples as :func:`item_rows` gives (built only when read
    row by row); it pickles as Arrow buffers, and the store inserts it with DuckDB's Arrow scan (:func:`item_frame`).
    """

    __slots__ = ("table",)

    def __init__(self, table: pa.Table) -> None:
        if tuple(table.column_names) != ITEM_COLUMNS:
            raise ValueError(
                f"item columns must be {', '.join(ITEM_COLUMNS)}, not {', '.join(table.column_names)[:200]}"
            )
        self.table = table

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def __iter__(self) -> Iterator[ItemRow]:
        return zip(*(column.to_pylist() for column in self.table.columns), strict=True)

    @overload
    def __getitem__(self, index: int) -> ItemRow: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ItemRow, ...]: ...

    def __getitem__(self, index: int | slice) -> ItemRow | tuple[ItemRow, ...]:
        if isinstance(index, slice):
            return tuple(self)[index]
        row = range(len(self))[index]  # IndexError out of range, as a tuple's
        item_id, metric, value = (column[row].as_py() for column in self.table.columns)
        return (item_id, metric, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ItemColumns):
            return bool(self.table.equals(other.table))
        if isinstance(other, Sequence):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a sequence compared by value, as a list is

    def __repr__(self) -> str:
        return f"ItemColumns({len(self)} rows)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ItemColumns, (self.table,))


def item_columns(rows: Sequence[ItemRow]) -> ItemColumns:
    """``rows`` as :class:`ItemColumns` (three column lists, then one Arrow array each: no Python object per row)."""
    import pyarrow as pa

    return ItemColumns(
        pa.table(
            [
                pa.array([row[0] for row in rows], pa.string()),
                pa.array([row[1] for row in rows], pa.string()),
                pa.array([float(row[2]) for row in rows], pa.float64()),
            ],
            names=list(ITEM_COLUMNS),
        )
    )


# item rows of one result from which it goes to the store as columns in any engine: importing pyarrow costs about
# 0.3 s of CPU once per process, the Arrow insert saves about 2.6 us a row against DuckDB's list parameters
# (a PAGED submission has about 70,000 rows: 0.18 s each)
COLUMNAR_ROWS = 20_000


def as_columns(rows: Sequence[ItemRow]) -> Sequence[ItemRow]:
    """``rows`` as :class:`ItemColumns`, or as they are where Arrow cannot type a row (an id that is no string):
    the same rows, in the same order, either way."""
    if not rows or isinstance(rows, ItemColumns):
        return rows
    try:
        return item_columns(rows)
    except (TypeError, ValueError):  # pyarrow's errors are both
        return rows


def item_frame(sid: str, rows: Iterable[ItemRow]) -> ScoreRows:
    """Submission ``sid``'s item rows, as ``store.insert_submission`` takes them (:class:`ItemColumns` as their table)."""
    if isinstance(rows, ItemColumns):
        return ScoreRows(sid, table=rows.table)
    return ScoreRows(sid, tuple((item_id, metric, float(value)) for item_id, metric, value in rows))


def aggregate_frame(sid: str, rows: Iterable[AggregateRow]) -> ScoreRows:
    """Submission ``sid``'s aggregate rows, as ``store.insert_submission`` takes them."""
    return ScoreRows(sid, tuple((s, v, m, float(x), n) for s, v, m, x, n in rows))
