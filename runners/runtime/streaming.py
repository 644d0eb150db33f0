"""A streamed ``evaluate``: gold and predictions read in chunks, memory bounded by the chunk, not the split.

``TaskRunner.evaluate`` holds the whole split: every gold record, every prediction record and an
:class:`ItemScore` object per item (about 14 KB per OpenPI item, so 14 GB for a million).  This path
gives the same :class:`Evaluation` (the same metrics, slices, fingerprint, warnings and problems) while
holding, besides one chunk of records, only the item ids, byte offsets and the per-item score values in
flat arrays (about 0.35 KB per OpenPI item; measured on generated OpenPI, whole ``procbench score``
process: 1M items in 812 MB peak RSS, against 3.2 GB for 300k items in memory):

1. gold: an index of where each item's rows lie (``TableReader.stream_index``), then the items bound a
   chunk at a time and spilled (pickled) to a temporary file with their labels and answer labels;
2. the fingerprint: the spill read back in id order, written piece by piece as ``hash_json`` writes it;
3. predictions: validated in one streamed pass (``SchemaReader.scan``: every problem with its line,
   capped), keeping only each item's line;
4. scoring: the spill and the prediction lines a chunk at a time, through the task's scorer (and again
   for each answer-label value); the per-item values go into :class:`ScoreRows`;
5. aggregates: the task's own aggregator over :class:`ScoreRows`, which rebuilds each ``ItemScore`` as
   it is read, in the same order, so every sum is the same sum.

It applies where every step is item-wise and the files allow it (``stream_choice.applies``): a declarative JSON-lines
gold (``TableReader.streamable``), a JSON-lines prediction schema and a match scorer (each item scored
from its own records); ``procbench score`` takes it above ``stream_choice.STREAM_BYTES`` of input.
"""

from __future__ import annotations

import json
import _pickle  # the C pickler itself: pickle.py would import struct, re and more on every score (issue #31)
import warnings
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast, overload

from procbench.runners.runtime import digests
from procbench.runners.runtime._types import GoldSet, ItemScore, PredictionWarning
from procbench.runners.runtime.predictions import PredictionRecords, SchemaReader, _loads
from procbench.runners.runtime.stream_choice import applies  # what decides, kept apart (issue #31)
from procbench.runners.runtime.runner import (
    Evaluation,
    SliceResult,
    TaskRunner,
    _canonical,
    cyclic_gc_paused,
)

if TYPE_CHECKING:
    from procbench.runners.runtime.tables import TableReader

CHUNK_ITEMS = 2048  # items bound, scored and held at a time
# The spill: each item's bound record, labels, raw answer views and origin pickled (our own temporary file, read
# back by this process only), about 10x quicker to write and read than JSON and type-faithful (a tuple stays one).
_dumps, _PROTOCOL = _pickle.dumps, -1  # -1: the highest protocol


# -- per-item values in flat arrays ------------------------------------------------------------------
_EXACT_TYPES = (float, int, bool)


class ScoreRows(Sequence[ItemScore]):
    """Item scores kept as flat arrays; each :class:`ItemScore` is rebuilt (equal to the one stored) as it is read.

    Values of type float, bool or int (up to 2**53) are kept as doubles with their names and types (one
    "shape" per distinct list of them); an item with any other value, or an id other than the gold's at
    the position given, is kept as it is.  About 80 bytes per OpenPI item (9 doubles).
    """

    def __init__(self, ids: Sequence[str]):
        self._ids = ids
        self._where = array("i")  # gold position of each row (-1: an item kept as it is)
        self._shape = array("h")  # index into _shapes (-1: an item kept as it is)
        self._start: array[int] | None = None  # where each row's values start, once shapes differ
        self._width = -1  # the one shape's length while every row has it
        self._values = array("d")
        self._shapes: list[tuple[tuple[str, type], ...]] = []
        self._float_names: list[tuple[str, ...] | None] = []  # a shape's names where all are floats
        self._shape_index: dict[tuple[tuple[str, type], ...], int] = {}
        self._all_float: dict[tuple[str, ...], int] = {}  # names -> index of their all-float shape
        self._float_kinds: list[
            tuple[type, ...]
        ] = []  # (float, ...) per all-float shape, () otherwise
        self._odd: dict[int, ItemScore] = {}

    def append(self, item: ItemScore, pos: int, *, checked: bool = False) -> None:
        """Keep ``item``, the score of the gold item at position ``pos`` (-1: unknown; its id is checked unless
        ``checked``: the caller found it at ``pos``)."""
        row = len(self._where)
        values = item.values
        if (
            self._start is None
            and pos >= 0
            and type(values) is dict
            and (checked or item.item_id == self._ids[pos])
        ):  # the common row: float values of the shape every row so far has had
            names = tuple(values)
            index = self._all_float.get(names, -1)
            if (
                index >= 0
                and len(self._shapes[index]) == self._width
                and tuple(map(type, values.values())) == self._float_kinds[index]
            ):
                self._values.extend(values.values())
                self._where.append(pos)
                self._shape.append(index)
                return
        exact = pos >= 0 and type(values) is dict and (checked or item.item_id == self._ids[pos])
        if exact:
            for v in values.values():
                kind = type(v)
                if kind is float or kind is bool:
                    continue
                if kind is not int or not -(2**53) <= v <= 2**53:
                    exact = False
                    break
        index = -1
        if exact:
            shape = tuple((k, type(v)) for k, v in values.items())
            index = self._shape_index.get(shape, -1)
            if index < 0 and len(self._shapes) < 32000:
                index = self._shape_index[shape] = len(self._shapes)
                self._shapes.append(shape)
                self._float_names.append(
                    tuple(name for name, _ in shape) if all(t is float for _, t in shape) else None
                )
                if self._float_names[index] is not None:
                    self._all_float[tuple(name for name, _ in shape)] = index
                    self._float_kinds.append((float,) * len(shape))
                else:
                    self._float_kinds.append(())
        width = len(self._shapes[index]) if index >= 0 else 0
        if self._start is None and (index < 0 or (self._width >= 0 and width != self._width)):
            # rows no longer all alike: from now on each row says where its values start
            self._start = array("q", (r * max(self._width, 0) for r in range(row)))
        if self._start is None:
            self._width = width
        else:
            self._start.append(len(self._values))
        if index < 0:
            self._odd[row] = item
        else:
            self._values.extend(values.values())
        self._where.append(pos if index >= 0 else -1)
        self._shape.append(index)

    def __len__(self) -> int:
        return len(self._where)

    def row(self, row: int) -> ItemScore:
        shape = self._shape[row]
        if shape < 0:
            return self._odd[row]
        start = self._start[row] if self._start is not None else row * self._width
        values = self._values
        names = self._float_names[shape]
        if names is not None:  # every value a float: the dict straight from the array's slice
            return ItemScore(
                self._ids[self._where[row]], dict(zip(names, values[start : start + len(names)]))
            )
        return ItemScore(
            self._ids[self._where[row]],
            {
                name: (values[start + k] if kind is float else kind(values[start + k]))
                for k, (name, kind) in enumerate(self._shapes[shape])
            },
        )

    def item_position(self, row: int, position: Mapping[str, int]) -> int:
        """The gold position of a row's item (-1: its id is no gold item's)."""
        pos = self._where[row]
        return pos if pos >= 0 else position.get(self._odd[row].item_id, -1)

    @overload
    def __getitem__(self, index: int) -> ItemScore: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ItemScore]: ...

    def __getitem__(self, index: int | slice) -> ItemScore | Sequence[ItemScore]:
        if isinstance(index, slice):
            return [self.row(r) for r in range(len(self))[index]]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.row(index)

    def __iter__(self) -> Iterator[ItemScore]:
        for row in range(len(self)):
            yield self.row(row)

    def positions(self, position: Mapping[str, int]) -> Iterator[int]:
        """Each row's gold position (-1: none)."""
        for row in range(len(self)):
            yield self.item_position(row, position)

    def value_sums(self, rows: array[int] | None = None) -> dict[str, float] | None:
        """``{name: sum(item.values.get(name, 0.0) for item in items)}`` for every value name in first-seen order,
        over all rows or the rows ``rows`` (in that order), read from the columns without rebuilding an item.

        The aggregators that sum values (``mean``, ``sum``: runners/library/generic.py) ask for this: through
        ``__iter__`` each of their passes (one per value name, and one for the names) rebuilds every
        ``ItemScore``, which made a streamed OpenPI score take twice the in-memory score's CPU (issue #31).
        The same builtin ``sum`` over the same floats in the same order: the same numbers.  None (sum item by
        item) unless every row has one shape of float values.
        """
        count = len(self) if rows is None else len(rows)
        if count == 0:
            return {}
        if self._odd or self._start is not None or len(self._shapes) != 1:
            return None
        names = self._float_names[0]
        if names is None:
            return None
        width, values = len(names), self._values
        if rows is not None:  # the subset's values gathered in its order: one slice per row
            picked = array("d")
            for row in rows:
                picked.extend(values[row * width : (row + 1) * width])
            values = picked
        return {name: sum(values[k::width]) for k, name in enumerate(names)}


class RowsSubset(Sequence[ItemScore]):
    """The rows ``rows`` (in that order) of a :class:`ScoreRows`: a label slice's items."""

    def __init__(self, scores: ScoreRows, rows: array[int]):
        self._scores, self._rows = scores, rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> ItemScore: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ItemScore]: ...

    def __getitem__(self, index: int | slice) -> ItemScore | Sequence[ItemScore]:
        if isinstance(index, slice):
            return [self._scores.row(r) for r in self._rows[index]]
        return self._scores.row(self._rows[index])

    def __iter__(self) -> Iterator[ItemScore]:
        for row in self._rows:
            yield self._scores.row(row)

    def positions(self, position: Mapping[str, int]) -> Iterator[int]:
        for row in self._rows:
            yield self._scores.item_position(row, position)

    def value_sums(self) -> dict[str, float] | None:
        """:meth:`ScoreRows.value_sums` over these rows."""
        return self._scores.value_sums(self._rows)


class _Labels(Mapping[str, Mapping[str, str]]):
    """Item id -> {label: value} from per-position codes (the Evaluation's ``item_labels``)."""

    def __init__(self, ids: Sequence[str], position: Mapping[str, int], codes: _LabelCodes):
        self._ids, self._position, self._codes = ids, position, codes

    def __getitem__(self, item_id: str) -> Mapping[str, str]:
        return self._codes.labels(self._position[item_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class _LabelCodes:
    """Each item's labels as small integers per label name, in the order the reader gave them."""

    def __init__(self) -> None:
        self.names: dict[str, array[int]] = {}  # label name -> value code per position (-1: none)
        self.values: dict[str, list[str]] = {}
        self.codes: dict[str, dict[str, int]] = {}
        self.orders: list[tuple[str, ...]] = []  # label names of an item, in order
        self.order_index: dict[tuple[str, ...], int] = {}
        self.order = array("i")
        self.count = 0

    def add(self, labels: Mapping[str, str]) -> None:
        order = tuple(labels)
        index = self.order_index.get(order)
        if index is None:
            index = self.order_index[order] = len(self.orders)
            self.orders.append(order)
        self.order.append(index)
        for name, value in labels.items():
            column = self.names.get(name)
            if column is None:
                column = self.names[name] = array("i", [-1]) * self.count
                self.values[name], self.codes[name] = [], {}
            code = self.codes[name].get(value)
            if code is None:
                code = self.codes[name][value] = len(self.values[name])
                self.values[name].append(value)
            column.append(code)
        self.count += 1
        for name, column in self.names.items():
            if len(column) < self.count:
                column.append(-1)

    def labels(self, pos: int) -> dict[str, str]:
        return {
            name: self.values[name][self.names[name][pos]] for name in self.orders[self.order[pos]]
        }

    def value(self, name: str, pos: int) -> str | None:
        column = self.names.get(name)
        if column is None or column[pos] < 0:
            return None
        return self.values[name][column[pos]]


class _Ids(Sequence[str]):
    """Item ids in official order, as one UTF-8 blob and the offsets into it (no string object per item)."""

    def __init__(self, ids: Sequence[str]):
        self._blob = bytearray()
        self._at = array("q", [0])
        for item_id in ids:
            self._blob += item_id.encode("utf-8", "surrogatepass")
            self._at.append(len(self._blob))

    def __len__(self) -> int:
        return len(self._at) - 1

    @overload
    def __getitem__(self, pos: int) -> str: ...

    @overload
    def __getitem__(self, pos: slice) -> Sequence[str]: ...

    def __getitem__(self, pos: int | slice) -> str | Sequence[str]:
        if isinstance(pos, slice):
            return [self[p] for p in range(len(self))[pos]]
        if pos < 0:
            pos += len(self)
        if not 0 <= pos < len(self):
            raise IndexError(pos)
        return self._blob[self._at[pos] : self._at[pos + 1]].decode("utf-8", "surrogatepass")


class _Positions(Mapping[str, int]):
    """Item id -> gold position: the reader's dict until predictions are validated (``_Gold.compact`` drops it: about
    100 bytes an item), then rebuilt from the ids only if asked again (an item scored out of order, ``item_labels``)."""

    def __init__(self, ids: Sequence[str], built: dict[str, int] | None):
        self._ids: Sequence[str] = ids
        self._map: dict[str, int] | None = built

    def _built(self) -> dict[str, int]:
        if self._map is None:
            self._map = {item_id: pos for pos, item_id in enumerate(self._ids)}
        return self._map

    def __getitem__(self, item_id: str) -> int:
        return self._built()[item_id]

    def get(self, item_id: str, default: Any = None) -> Any:
        return self._built().get(item_id, default)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._built()

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._ids)


class _FirstLines:
    """Item id -> line of its first prediction record: an array by gold position, a dict for other ids."""

    def __init__(self, position: Mapping[str, int], count: int):
        self.position = position
        self.known = array("q", [0]) * count
        self.other: dict[str, int] = {}

    def __contains__(self, item_id: object) -> bool:
        pos = self.position.get(item_id)  # type: ignore[call-overload]
        return self.known[pos] > 0 if pos is not None else item_id in self.other

    def __getitem__(self, item_id: str) -> int:
        pos = self.position.get(item_id)
        return self.known[pos] if pos is not None else self.other[item_id]

    def __setitem__(self, item_id: str, line: int) -> None:
        pos = self.position.get(item_id)
        if pos is not None:
            self.known[pos] = line
        else:
            self.other[item_id] = line


# -- the pipeline --------------------------------------------------------------------------------------
def evaluate(
    runner: TaskRunner,
    data_root: Path,
    split: str,
    predictions_path: Path,
    metadata: Mapping[str, Any] | None = None,
    *,
    check: Callable[[GoldSet], None] | None = None,
    chunk: int = CHUNK_ITEMS,
) -> Evaluation:
    """``runner.evaluate(data_root, split, predictions_path, metadata)``, streamed (see the module's text).

    ``check``: called once the gold is read without problems, with a GoldSet that answers
    ``data_findings.lacks_something`` as the whole split would (``procbench score`` refuses unfit data there).
    Raises what ``evaluate`` raises: GoldDataError, FileNotFoundError, InvalidPredictions.
    """
    if not applies(runner, split, metadata):
        raise ValueError(f"task {runner.name!r} cannot be scored streamed")
    if split not in runner.splits:
        raise ValueError(
            f"task {runner.name!r} has no split {split!r} (splits: {', '.join(runner.splits)})"
        )
    reader = cast("TableReader", runner.read_gold)
    import tempfile  # a streamed run only

    with cyclic_gc_paused(), tempfile.TemporaryFile() as spill:
        gold = _read_gold(reader, data_root, split, spill, chunk)
        if check is not None:
            check(gold.summary())
        fingerprint = _fingerprint(runner, reader, gold, spill)
        notes, lines = _validate(runner, predictions_path, gold)
        gold.compact()
        return _score(
            runner, split, gold, fingerprint, notes, lines, predictions_path, spill, chunk, metadata
        )


class _Gold:
    """What the streamed gold read keeps: ids, spill offsets, labels, answer-label values, unmatched keys."""

    def __init__(self, ids: list[str], position: dict[str, int]):
        self.ids: Sequence[str] = ids
        self.position = _Positions(ids, position)
        self.spill_at = array(
            "q", [0]
        )  # where each item's spilled entry starts, then the spill's end
        self.labels = _LabelCodes()
        self.view_values: dict[str, set[str]] = {}
        self.unmatched: dict[str, tuple[str, ...]] = {}
        self.view_fields: dict[str, str] = {}

    def compact(self) -> None:
        """Once predictions are validated: the ids as one blob, the id -> position dict dropped (rebuilt if asked)."""
        self.ids = _Ids(self.ids)
        self.position = _Positions(self.ids, None)

    def summary(self) -> GoldSet:
        """A GoldSet with no items whose labels and views say which labels and values the split has."""
        present = {name: self.labels.values[name][0] for name in self.labels.values}
        return GoldSet(
            items={},
            labels={"": present} if present else {},
            answer_views={
                name: {value: {} for value in sorted(values)}
                for name, values in self.view_values.items()
            },
            unmatched_map_keys=self.unmatched,
        )

    def views(
        self, record: Mapping[str, Any], raw: Mapping[str, Mapping[str, list[str]]]
    ) -> dict[str, dict[str, dict[str, Any]]]:
        """One item's answer views ({rule: {value: restricted record}}), as ``tables._views`` builds them."""
        return {
            name: {
                value: {**record, self.view_fields[name]: list(raw.get(name, {}).get(value, []))}
                for value in sorted(self.view_values.get(name, ()))
            }
            for name in self.view_fields
        }


def _read_gold(
    reader: TableReader, data_root: Path, split: str, spill: IO[bytes], chunk: int
) -> _Gold:
    index = reader.stream_index(data_root, split)
    gold = _Gold(index.ids, index.position)
    gold.view_fields = {rule.name: rule.field for rule in reader.answer_labels}
    offset = 0
    for out in reader.stream_chunks(index, chunk):
        raw_views = out.views
        lines = []
        for item_id, record in out.items.items():
            labels = out.labels.get(item_id, {})
            gold.labels.add(labels)
            raw = {
                name: {
                    value: by_item[item_id]
                    for value, by_item in per_value.items()
                    if item_id in by_item
                }
                for name, per_value in raw_views.items()
            }
            text = _dumps((record, labels, raw, out.origins.get(item_id, "")), _PROTOCOL)
            offset += len(text)
            gold.spill_at.append(offset)
            lines.append(text)
        for name, per_value in raw_views.items():
            gold.view_values.setdefault(name, set()).update(per_value)
        spill.write(b"".join(lines))
    gold.unmatched = reader.stream_finish(index)
    if len(gold.spill_at) != len(gold.ids) + 1:  # one item per primary record without explode
        raise AssertionError("streamed gold read lost items")
    for rule in reader.answer_labels:
        gold.view_values.setdefault(rule.name, set())
    spill.flush()
    return gold


def _spilled(spill: IO[bytes], spill_at: array[int], pos: int) -> tuple[Any, ...]:
    """Item ``pos``'s spilled (record, labels, raw answer views, origin)."""
    spill.seek(spill_at[pos])
    return cast(tuple[Any, ...], _pickle.loads(spill.read(spill_at[pos + 1] - spill_at[pos])))


def _dict_text(pairs: Iterator[tuple[str, str]]) -> Iterator[str]:
    """``json.dumps`` of a str-keyed dict (sorted keys) from its (key, value text) pairs, in sorted order."""
    yield "{"
    first = True
    for key, text in pairs:
        yield ("" if first else ", ") + encode_basestring_ascii(key) + ": " + text
        first = False
    yield "}"


def _fingerprint(runner: TaskRunner, reader: TableReader, gold: _Gold, spill: IO[bytes]) -> str:
    """``TaskRunner.gold``'s fingerprint: sha256 over the spec digest and ``[items, labels, answer_views]`` as JSON with
    sorted keys, written from the spill in id order (the answer views to temporary files, then copied)."""
    digest = digests.sha256()
    digest.update(runner.spec_digest.encode())
    order = sorted(range(len(gold.ids)), key=gold.ids.__getitem__)
    names = sorted(gold.view_fields)
    values = {name: sorted(gold.view_values[name]) for name in names}
    dumps = json.dumps
    import tempfile

    with (
        tempfile.TemporaryFile() as labels_out,
        _TempFiles(sum(len(v) for v in values.values())) as view_out,
    ):
        first = True
        digest.update(b"[{")
        for pos in order:
            record, labels, raw, _ = _spilled(spill, gold.spill_at, pos)
            key = encode_basestring_ascii(gold.ids[pos])
            sep = "" if first else ", "
            first = False
            digest.update(f"{sep}{key}: {dumps(_canonical(record), sort_keys=True)}".encode())
            labels_out.write(f"{sep}{key}: {dumps(_canonical(labels), sort_keys=True)}".encode())
            k = 0
            for name in names:
                field = gold.view_fields[name]
                for value in values[name]:
                    view = {**record, field: list(raw.get(name, {}).get(value, []))}
                    view_out[k].write(
                        f"{sep}{key}: {dumps(_canonical(view), sort_keys=True)}".encode()
                    )
                    k += 1
        digest.update(b"}, ")
        digest.update(b"{" if order else b"")
        _copy(labels_out, digest)
        digest.update(b"}" if order else b"{}")
        digest.update(b", ")
        if not names:
            digest.update(b"{}")
        else:
            digest.update(b"{")
            k = 0
            for n, name in enumerate(names):
                digest.update(
                    (", " if n else "").encode() + encode_basestring_ascii(name).encode() + b": "
                )
                if not values[name]:
                    digest.update(b"{}")
                    continue
                digest.update(b"{")
                for v, value in enumerate(values[name]):
                    digest.update(
                        (", " if v else "").encode()
                        + encode_basestring_ascii(value).encode()
                        + b": "
                    )
                    digest.update(b"{" if order else b"")
                    _copy(view_out[k], digest)
                    digest.update(b"}" if order else b"{}")
                    k += 1
                digest.update(b"}")
            digest.update(b"}")
        digest.update(b"]")
    return digest.hexdigest()


class _TempFiles:
    def __init__(self, count: int):
        self.files: list[IO[bytes]] = []
        self.count = count

    def __enter__(self) -> list[IO[bytes]]:
        import tempfile

        self.files = [tempfile.TemporaryFile() for _ in range(self.count)]
        return self.files

    def __exit__(self, *exc: object) -> None:
        for handle in self.files:
            handle.close()


def _copy(handle: IO[bytes], digest: Any) -> None:
    handle.flush()
    handle.seek(0)
    while block := handle.read(1 << 20):
        digest.update(block)


def _validate(runner: TaskRunner, path: Path, gold: _Gold) -> tuple[list[str], array[int]]:
    """The prediction file validated in one pass, as ``TaskRunner.validate``; the line of each item's record (0: none)."""
    reader = cast(SchemaReader, runner.read_predictions)
    first = _FirstLines(gold.position, len(gold.ids))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PredictionWarning)
        reader.scan(path, gold.position, cast(Any, first), lambda item_id, record: None)
        lines = first.known
        missing = lines.count(0)
        if missing:
            reader.warn_missing(missing, len(gold.ids), gold.ids[lines.index(0)])
    notes = [str(w.message) for w in caught if issubclass(w.category, PredictionWarning)]
    return notes, lines


def _line_offsets(path: Path) -> array[int]:
    """The byte offset of each line of a file (index 0: line 1)."""
    offsets = array("q")
    offset = 0
    with path.open("rb") as handle:
        for raw in handle:
            offsets.append(offset)
            offset += len(raw)
    return offsets


def _prediction(handle: IO[bytes], offsets: array[int], line: int) -> dict[str, Any]:
    """A validated record read back as ``json_objects`` read it."""
    handle.seek(offsets[line - 1])
    raw = handle.readline()
    if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    text = raw.decode("utf-8")
    text = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    return cast(dict[str, Any], _loads(text))


def _score(
    runner: TaskRunner,
    split: str,
    gold: _Gold,
    fingerprint: str,
    notes: list[str],
    lines: array[int],
    path: Path,
    spill: IO[bytes],
    chunk: int,
    metadata: Mapping[str, Any] | None,
) -> Evaluation:
    scorer = runner.make_scorer(metadata or {})
    ids, position = gold.ids, gold.position
    rows = ScoreRows(ids)
    view_slices = [sl for sl in runner.slices if sl.kind == "answer_label"]
    view_rows = {
        (sl.key, value): ScoreRows(ids)
        for sl in view_slices
        for value in sorted(gold.view_values.get(sl.key, ()))
    }
    offsets = _line_offsets(path)
    spill.seek(0)
    with path.open("rb") as handle:
        for start in range(0, len(ids), chunk):
            stop = min(start + chunk, len(ids))
            items: dict[str, Any] = {}
            labels: dict[str, Mapping[str, str]] = {}
            origins: dict[str, str] = {}
            views: dict[str, dict[str, dict[str, Any]]] = {}
            records = PredictionRecords(path.name)
            spill.seek(gold.spill_at[start])
            spilled = memoryview(spill.read(gold.spill_at[stop] - gold.spill_at[start]))
            base = gold.spill_at[start]
            chunk_ids = ids[start:stop]
            for pos in range(start, stop):
                item_id = chunk_ids[pos - start]
                record, item_labels, raw, origin = _pickle.loads(
                    spilled[gold.spill_at[pos] - base : gold.spill_at[pos + 1] - base]
                )
                items[item_id], labels[item_id], origins[item_id] = record, item_labels, origin
                for name, per_value in gold.views(record, raw).items():
                    for value, view in per_value.items():
                        views.setdefault(name, {}).setdefault(value, {})[item_id] = view
                if lines[pos]:
                    records[item_id] = _prediction(handle, offsets, lines[pos])
                    records.lines[item_id] = lines[pos]
            for name in gold.view_fields:
                views.setdefault(name, {})
            for k, item in enumerate(scorer(GoldSet(items, labels, views, origins), records)):
                rows.append(item, _position_of(item, k, chunk_ids, start, position), checked=True)
            for sl in view_slices:
                for value, view_items in views.get(sl.key, {}).items():
                    target = view_rows[(sl.key, value)]
                    scored = scorer(GoldSet(items=view_items, labels=labels), records)
                    for k, item in enumerate(scored):
                        target.append(
                            item, _position_of(item, k, chunk_ids, start, position), checked=True
                        )
    answered = _answered(rows, lines, position)
    slices: dict[str, dict[str, SliceResult]] = {}
    scored_at = array("q", [-1]) * len(ids)
    for row in range(len(rows)):
        pos = rows.item_position(row, position)
        if pos >= 0:  # the last row of an item, as the in-memory slices' id -> item dict
            scored_at[pos] = row
    for sl in runner.slices:
        if sl.kind == "label":
            groups: dict[str, array[int]] = {}
            for pos in range(len(ids)):
                label = gold.labels.value(sl.key, pos)
                if label is not None and scored_at[pos] >= 0:
                    groups.setdefault(label, array("q")).append(scored_at[pos])
            slices[sl.name] = {
                value: SliceResult(
                    len(group),
                    runner.aggregate(RowsSubset(rows, group)),
                    _answered(RowsSubset(rows, group), lines, position),
                )
                for value, group in sorted(groups.items())
            }
        else:
            slices[sl.name] = {
                value: SliceResult(
                    len(scored), runner.aggregate(scored), _answered(scored, lines, position)
                )
                for (key, value), scored in view_rows.items()
                if key == sl.key
            }
    return Evaluation(
        task=runner.name,
        split=split,
        fingerprint=fingerprint,
        n_items=len(rows),
        metrics=runner.aggregate(rows),
        slices=slices,
        items=cast(list[ItemScore], rows),  # a Sequence that rebuilds each ItemScore on reading
        item_labels=_Labels(ids, position, gold.labels),
        warnings=list(notes),
        answered=answered,
    )


def _position_of(
    item: ItemScore, k: int, chunk_ids: Sequence[str], start: int, position: Mapping[str, int]
) -> int:
    """The gold position of a chunk's ``k``-th scored item: where the scorer's order puts it, else by its id (-1:
    none); a position returned holds the item's id."""
    if k < len(chunk_ids) and chunk_ids[k] == item.item_id:
        return start + k
    return position.get(item.item_id, -1)


def _answered(rows: ScoreRows | RowsSubset, lines: array[int], position: Mapping[str, int]) -> int:
    """How many of the rows' items have a prediction record."""
    return sum(1 for pos in rows.positions(position) if pos >= 0 and lines[pos])
