"""Declarative gold readers: JSONL/JSON/CSV/TSV sources joined on the item id.

The compiler builds a :class:`TableReader` from a spec's ``data`` block; it returns a
:class:`GoldSet` whose records hold the bound fields, plus per-item and per-answer labels.  Item
ids come from a path into the primary record, its position, or its key in a JSON object; with an
:class:`Explode`, each element of a list or mapping in the primary record is an item of its own.

Reading is strict: a bound field, label path or answer-label key that a record lacks, a value of
the wrong type, or an item with no row in a joined source is a :class:`GoldDataError` naming the
file, line and item, collected over the whole split.  Nothing is read as ``None``, ``[]`` or
``"unknown"`` unless the spec says it may be missing (``optional(T)`` fields, ``optional`` labels
and sources).
"""

from __future__ import annotations

import csv
import json
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procbench.runners.runtime._types import DataProblem, DataProblems, GoldSet
from procbench.runners.runtime.cells import BadCell, cast_cell
from procbench.runners.runtime.contracts import checker, describe, mismatch
from procbench.runners.runtime.data_exprs import (
    MISSING,
    ExprError,
    elements_of,
    evaluate,
    is_computed,
    lookup,
    render,
    roots,
)
from procbench.runners.runtime.id_paths import (
    EXPLODE_INDEX,
    EXPLODE_JOIN,
    EXPLODE_KEY,
    KEY_ID,
    ROW_INDEX,
)
from procbench.runners.runtime.paths import under_data_root
from procbench.runners.runtime.predictions import FieldType

_DECODER = json.JSONDecoder()  # json.loads without its per-call argument handling


@dataclass(frozen=True)
class TableSource:
    """A data file; the first source of a reader is the primary one (one record per item).

    ``key``: the field joined to the item id (secondary sources).  ``optional``: items may have no
    row here; fields and labels drawn from it must then be optional themselves.
    """

    name: str
    format: str
    path: str
    key: str | None = None
    splits: tuple[str, ...] = ()
    optional: bool = False


@dataclass(frozen=True)
class Membership:
    """Items listed in ``column`` of the file at ``path`` get ``label`` (first matching file wins)."""

    path: str
    column: str
    label: str


@dataclass(frozen=True)
class ItemLabel:
    """A per-item label: the value at ``path`` (through ``mapping`` when given), or membership in files.

    ``optional``: the path may be missing (or null) in a record, which then gets ``"unknown"``
    (mapped like any value); otherwise a missing path is an error.  A value that is no key of
    ``mapping`` gets ``default``; without a default it is an error naming file, line and item.
    """

    name: str
    path: tuple[str, ...] = ()
    mapping: Mapping[str, str] | None = None
    default: str | None = None
    members: tuple[Membership, ...] = ()
    splits: tuple[str, ...] = ()  # membership labels exist only on these splits (empty = all)
    optional: bool = False


UNKNOWN = "unknown"  # the label of an optional label path that is missing


@dataclass(frozen=True)
class AnswerLabel:
    """Per-answer labels: gold field ``field`` restricted to the records of ``items`` with one label."""

    name: str
    field: str
    items: tuple[str, ...]
    text: str
    label: str


@dataclass(frozen=True)
class Explode:
    """Each element of the list or mapping at ``items`` (a path from a source) is one item.

    The item id is ``<parent id><separator><element id>``, the element id being its 0-based
    position (:data:`EXPLODE_INDEX`), its key in a mapping (:data:`EXPLODE_KEY`) or the value at a
    path rooted at ``name`` (``("step", "qid")``).  Fields and labels read the element as a source
    called ``name`` beside the parent's sources.  Items keep the file's order.
    """

    name: str
    items: tuple[
        Any, ...
    ]  # a path, or a computed list (runners/runtime/data_exprs.py): product(...), distinct(...)
    id: tuple[Any, ...] = (
        EXPLODE_INDEX  # or ("#join", path, path, ...): the values at the paths, joined by the separator
    )
    separator: str = "/"
    where: tuple[Any, ...] = ()  # conditions an element must meet (all of them) to be an item
    skip: tuple[Any, ...] = ()  # conditions that drop an element (any of them)


# A bound gold field: (name, path, type).  ``None`` as the type checks presence only.
Field = tuple[str, tuple[str, ...], FieldType | None]


def iter_records(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line or row number, record) for every record of a data file.

    For a whole-file ``json`` source the number is the record's 1-based position in the file.
    """
    for number, _, record in iter_keyed_records(path, fmt):
        yield number, record


def iter_keyed_records(path: Path, fmt: str) -> Iterator[tuple[int, str | None, Any]]:
    """As :func:`iter_records`, with each record's key when the file is a JSON object ``{id: record}`` (else ``None``)."""
    if fmt == "json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            for number, (key, record) in enumerate(data.items(), 1):
                yield number, key, record
        elif isinstance(data, list):
            for number, record in enumerate(data, 1):
                yield number, None, record
        return
    for number, record in _iter_plain(path, fmt):
        yield number, None, record


def _iter_plain(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if fmt == "jsonl":
        decode = _DECODER.decode
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield number, decode(line)
    elif fmt in ("csv", "tsv"):
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t" if fmt == "tsv" else ",")
            for number, row in enumerate(reader, 2):
                yield number, dict(row)
    else:
        raise ValueError(f"unknown data format {fmt!r}")


@dataclass
class _Table:
    """One loaded source: its records (a list for the primary, id -> record for keyed ones) and their lines."""

    source: TableSource
    file: str  # relative to the data root, as errors name it
    rows: Any
    lines: dict[str, int]
    keys: list[str] | None = (
        None  # a json object's keys, in order (None when the file is not an object)
    )

    def origin(self, line: int) -> str:
        return f"{self.file}#{line}" if self.source.format == "json" else f"{self.file}:{line}"


@dataclass
class _Collected:
    """What a split's items give, collected while reading: records, labels, origins, answer-label views."""

    matched: dict[str, set[str]]  # map() label -> the keys some item matched
    members: dict[
        str, dict[str, str] | None
    ]  # membership label -> item id -> label (None: not on this split)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    views: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)


@dataclass
class StreamIndex:
    """Where a split's items lie in its JSON-lines sources (:meth:`TableReader.stream_index`).

    ``offsets``/``lines``: per source, the byte offset (-1: no row) and line of each item's row, by position.
    """

    split: str
    ids: list[str] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)
    files: dict[str, tuple[TableSource, str, Path]] = field(default_factory=dict)
    offsets: dict[str, array[int]] = field(default_factory=dict)
    lines: dict[str, array[int]] = field(default_factory=dict)
    members: dict[str, dict[str, str] | None] = field(default_factory=dict)
    matched: dict[str, set[str]] = field(default_factory=dict)
    load_problems: DataProblems = field(default_factory=DataProblems)
    primary_problems: DataProblems = field(default_factory=DataProblems)
    member_problems: DataProblems = field(default_factory=DataProblems)
    bind_problems: DataProblems = field(default_factory=DataProblems)


def _jsonl_offsets(path: Path) -> Iterator[tuple[int, int, Any]]:
    """(1-based line, byte offset, record) for every non-blank line of a JSON-lines file (as ``_iter_plain`` reads it)."""
    decode = _DECODER.decode
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            start, offset = offset, offset + len(raw)
            line = raw.decode("utf-8")
            if line.strip():
                yield number, start, decode(line)


@dataclass(frozen=True)
class TableReader:
    """Reads a split from ``sources`` (the first one primary), binding ``fields`` and labels per item.

    ``fields``: ``(name, path, type)``; the path starts with a source name; a ``None`` type checks
    presence only (a JSON null is then a value).  Paths into a source that does not exist for the
    split (``TableSource.splits``) are not checked: the field reads as ``None`` and the label is
    left out, as membership labels are outside their splits.
    """

    sources: tuple[TableSource, ...]
    id_path: tuple[str, ...]
    fields: tuple[Field, ...]
    labels: tuple[ItemLabel, ...] = ()
    answer_labels: tuple[AnswerLabel, ...] = ()
    explode: Explode | None = None

    def __call__(self, data_root: Path, split: str) -> GoldSet:
        problems = DataProblems(f"split {split!r}")
        tables = {
            s.name: self._load(data_root, split, s, problems)
            for s in self.sources
            if not s.splits or split in s.splits
        }
        primary = tables[self.sources[0].name]
        scopes, lines = self._primary_records(primary, problems)
        out = _Collected(
            matched={rule.name: set() for rule in self.labels if rule.mapping},
            members={
                rule.name: self._members(data_root, split, rule, problems)
                for rule in self.labels
                if rule.members
            },
        )
        self._collect(tables, scopes, lines, problems, out)
        problems.raise_if_any()
        unmatched = {
            rule.name: keys
            for rule in self.labels
            if rule.mapping
            and (keys := tuple(k for k in rule.mapping if k not in out.matched[rule.name]))
        }
        return GoldSet(
            items=out.items,
            labels=out.labels,
            answer_views=_views(out.views, out.items, self.answer_labels),
            origins=out.origins,
            unmatched_map_keys=unmatched,
        )

    # -- a streamed read (runners/runtime/streaming.py): an index of where each item's rows lie, then chunks --
    def streamable(self, split: str) -> bool:
        """Whether :meth:`stream_index` / :meth:`stream_chunks` read this split as ``__call__`` does.

        JSON-lines sources only, joined ones keyed, ids from a path into the primary record, no explode,
        and no computed fields (every bound value is a JSON value: the streamed read spills items as JSON).
        """
        used = [s for s in self.sources if not s.splits or split in s.splits]
        return (
            self.explode is None
            and bool(used)
            and used[0] is self.sources[0]
            and self.sources[0].key is None
            and all(s.format == "jsonl" for s in used)
            and all(s.key is not None for s in used[1:])
            and self.id_path != ROW_INDEX
            and self.id_path[:1] != (KEY_ID,)
            and not any(is_computed(path) for _, path, _ in self.fields)
        )

    def stream_index(self, data_root: Path, split: str, chunk: int = 4096) -> StreamIndex:
        """Every item id in official order and, per source, the byte offset and line of its row.

        The same problems as ``__call__`` finds reading the files (a joined record without its key, a
        primary record without an id), kept in the same order; nothing but ids and offsets is held.
        """
        index = StreamIndex(split)
        used = [s for s in self.sources if not s.splits or split in s.splits]
        for source in used:
            relative = source.path.format(split=split)
            path = under_data_root(data_root, relative, f"source {source.name!r}: path")
            if not path.is_file():
                raise FileNotFoundError(
                    f"data file for source {source.name!r}, split {split!r} not found: {path}"
                )
            index.files[source.name] = (source, relative, path)
            index.offsets[source.name] = array("q")
            index.lines[source.name] = array("q")
        primary = used[0]
        _, relative, path = index.files[primary.name]
        offsets, lines = index.offsets[primary.name], index.lines[primary.name]
        position, ids = index.position, index.ids
        batch: list[tuple[int, int, Any]] = []

        def flush() -> None:
            table = _Table(primary, relative, [(line, record) for line, _, record in batch], {})
            at_line = {line: offset for line, offset, _ in batch}
            scopes, found = self._primary_records(table, index.primary_problems)
            for key in scopes:
                line = found[key]
                known = position.get(key)
                if known is None:
                    position[key] = len(ids)
                    ids.append(key)
                    offsets.append(at_line[line])
                    lines.append(line)
                else:  # a later record of an id replaces the earlier one, in its place (as __call__)
                    offsets[known] = at_line[line]
                    lines[known] = line
            batch.clear()

        for line, offset, record in _jsonl_offsets(path):
            batch.append((line, offset, record))
            if len(batch) >= chunk:
                flush()
        flush()
        for source in used[1:]:
            _, relative, path = index.files[source.name]
            table = _Table(source, relative, [], {})
            offsets, lines = index.offsets[source.name], index.lines[source.name]
            offsets.extend(array("q", [-1]) * len(ids))
            lines.extend(array("q", [0]) * len(ids))
            for line, offset, record in _jsonl_offsets(path):
                key = (
                    record.get(source.key, MISSING)
                    if type(record) is dict or isinstance(record, Mapping)
                    else MISSING
                )
                if key is MISSING or key is None:
                    index.load_problems.add(
                        DataProblem.at(
                            table.origin(line),
                            None,
                            f"record of source {source.name!r} has no key field {source.key!r}",
                        )
                    )
                    continue
                known = position.get(str(key))
                if known is not None:  # the last record of an id wins, as __call__'s dict
                    offsets[known] = offset
                    lines[known] = line
        index.members = {
            rule.name: self._members(data_root, split, rule, index.member_problems)
            for rule in self.labels
            if rule.members
        }
        index.matched = {rule.name: set() for rule in self.labels if rule.mapping}
        return index

    def stream_chunks(self, index: StreamIndex, size: int) -> Iterator[_Collected]:
        """The items of the split, ``size`` at a time and in official order, bound as ``__call__`` binds them.

        Problems collect in ``index.bind_problems``; :meth:`stream_finish` raises them all once the last
        chunk is read.  Each chunk's ``views`` are per answer-label value, as read (not yet restricted).
        """
        handles = {name: path.open("rb") for name, (_, _, path) in index.files.items()}
        try:
            primary = self.sources[0].name
            for start in range(0, len(index.ids), size):
                stop = min(start + size, len(index.ids))
                tables: dict[str, _Table] = {}
                scopes: dict[str, dict[str, Any]] = {}
                found: dict[str, int] = {}
                for name, (source, relative, _) in index.files.items():
                    handle, offsets, lines = handles[name], index.offsets[name], index.lines[name]
                    rows: dict[str, Any] = {}
                    at: dict[str, int] = {}
                    for pos in range(start, stop):
                        offset = offsets[pos]
                        if offset < 0:
                            continue
                        handle.seek(offset)
                        item_id = index.ids[pos]
                        rows[item_id] = _DECODER.decode(handle.readline().decode("utf-8"))
                        at[item_id] = lines[pos]
                    if name == primary:
                        scopes = {item_id: {name: record} for item_id, record in rows.items()}
                        found = at
                        rows, at = {}, {}
                    tables[name] = _Table(source, relative, rows, at)
                out = _Collected(matched=index.matched, members=index.members)
                self._collect(tables, scopes, found, index.bind_problems, out)
                yield out
        finally:
            for handle in handles.values():
                handle.close()

    def stream_finish(self, index: StreamIndex) -> dict[str, tuple[str, ...]]:
        """Raise the problems of a streamed read as ``__call__`` would (same order, same cap); else its unmatched map() keys."""
        problems = DataProblems(f"split {index.split!r}")
        for part in (
            index.load_problems,
            index.primary_problems,
            index.member_problems,
            index.bind_problems,
        ):
            for problem in part.kept:
                problems.add(problem)
            problems.more += part.more
        problems.raise_if_any()
        return {
            rule.name: keys
            for rule in self.labels
            if rule.mapping
            and (keys := tuple(k for k in rule.mapping if k not in index.matched[rule.name]))
        }

    def _field_plan(self, tables: Mapping[str, _Table]) -> list[Any]:
        """Each bound field with what binding it needs: (name, path, source, type, type check, cast)."""
        return [
            (
                name,
                path,
                _root(path),
                ftype,
                checker(ftype) if ftype is not None else None,
                _cast(path, ftype, tables),
            )
            for name, path, ftype in self.fields
        ]

    def _collect(
        self,
        tables: Mapping[str, _Table],
        scopes: Mapping[str, dict[str, Any]],
        lines: Mapping[str, int],
        problems: DataProblems,
        out: _Collected,
    ) -> None:
        """Join and bind the primary records ``scopes`` (item id -> {primary name: record}) into ``out``.

        ``tables`` holds the primary and the joined sources (a streamed read passes the rows of one chunk).
        """
        primary = tables[self.sources[0].name]
        joined = [t for t in tables.values() if t is not primary]
        fields = self._field_plan(tables)
        origins = out.origins
        for parent_id, parent_scope in scopes.items():
            origin = primary.origin(lines[parent_id])
            absent: set[str] = set()  # sources with no row for this item
            for table in joined:
                row = table.rows.get(parent_id)
                if row is None:
                    absent.add(table.source.name)
                    if not table.source.optional:
                        problems.add(
                            DataProblem.at(
                                origin,
                                parent_id,
                                f"source {table.source.name!r} ({table.file}) has no row with {table.source.key} = {parent_id!r}",
                            )
                        )
                    row = {}
                parent_scope[table.source.name] = row
            if self.explode is None:
                units: list[tuple[str, dict[str, Any], str]] = [(parent_id, parent_scope, "")]
            else:
                units = self._explode(parent_id, parent_scope, origin, absent, problems, origins)
            for item_id, scope, context in units:
                origins[item_id] = origin
                at = _Locator(item_id, origin, tables, absent, parent_id, context)
                self._bind(item_id, scope, at, fields, problems, out)

    def _bind(
        self,
        item_id: str,
        scope: dict[str, Any],
        at: _Locator,
        fields: list[Any],
        problems: DataProblems,
        out: _Collected,
    ) -> None:
        """One item's fields, labels and answer labels from its scope (source name -> record), into ``out``."""
        items, labels, matched, members, views = (
            out.items,
            out.labels,
            out.matched,
            out.members,
            out.views,
        )
        record: dict[str, Any] = {}
        for name, path, source, ftype, ok, cast in fields:
            if is_computed(path):
                try:
                    value = evaluate(path, scope)
                except ExprError as exc:
                    at.report(problems, source, f"field {name!r} <- {render(path)}: {exc}")
                    record[name] = None
                    continue
            else:
                value = lookup(scope, path)
                if cast and type(value) is str:  # a CSV/TSV cell: text, read as the declared type
                    try:
                        value = cast_cell(ftype, value)
                    except BadCell as exc:
                        at.report(
                            problems,
                            source,
                            f"field {name!r} <- {'.'.join(path)} must be {ftype.spelling()}, got {value!r}: {exc}",
                        )
                        record[name] = None
                        continue
            if value is MISSING:
                value = None
                if source in scope and (ftype is None or ftype.kind != "optional"):
                    at.report(
                        problems,
                        source,
                        f"field {name!r} <- {'.'.join(path)} is {at.missing(source)}",
                    )
            elif ok is not None and not ok(value):
                at.report(
                    problems,
                    source,
                    f"field {name!r} <- {render(path)} must be {ftype.spelling()}, got {mismatch(ftype, value)}",
                )
            record[name] = value
        items[item_id] = record
        item_labels = labels[item_id] = {}
        for rule in self.labels:
            if rule.members:
                rule_members = members[rule.name]
                if rule_members is not None:
                    item_labels[rule.name] = rule_members.get(item_id, rule.default or "other")
            elif rule.path and _root(rule.path) in scope:
                value = self._label(scope, rule, at, problems)
                if value is not None:
                    if rule.mapping is not None:
                        value = self._mapped(
                            rule, value, at, problems, matched.setdefault(rule.name, set())
                        )
                    if value is not None:
                        item_labels[rule.name] = value
        for answer_rule in self.answer_labels:
            if answer_rule.items[0] in scope:
                self._answer_labels(
                    scope, answer_rule, at, problems, views.setdefault(answer_rule.name, {})
                )

    def _explode(
        self,
        parent_id: str,
        scope: dict[str, Any],
        origin: str,
        absent: set[str],
        problems: DataProblems,
        taken: Mapping[str, str],
    ) -> list[tuple[str, dict[str, Any], str]]:
        """(item id, scope with the element, where the element is) for each element of the parent's list or mapping."""
        spec = self.explode
        assert spec is not None
        where = render(spec.items)

        def fail(message: str) -> None:
            problems.add(DataProblem.at(origin, parent_id, f"explode {spec.name!r}: {message}"))

        if any(root in absent for root in roots(spec.items)):
            return []  # the joined source has no row for this parent: reported once, as a missing row
        found: Any = None
        elements: list[tuple[Any, Any, str, Any]]
        if is_computed(
            spec.items
        ):  # product(...), distinct(...): positions are tuples, one per list
            try:
                computed = elements_of(spec.items, scope) or []
            except ExprError as exc:
                fail(f"items <- {where}: {exc}")
                return []
            found = []
            elements = [(position, position, at, element) for position, element, at in computed]
        elif type(found := lookup(scope, spec.items)) is list:
            elements = [
                (position, position, f"{where}[{position}]", element)
                for position, element in enumerate(found)
            ]
        elif isinstance(found, Mapping):
            elements = [
                (position, key, f"{where}[{json.dumps(key, ensure_ascii=False)}]", element)
                for position, (key, element) in enumerate(found.items())
            ]
        else:
            fail(
                f"items <- {where} is {'missing' if found is MISSING else 'null' if found is None else describe(found)}, not a list or a mapping"
            )
            return []
        if spec.id == EXPLODE_KEY and type(found) is list:
            fail(f"id = key needs a mapping, but items <- {where} is a list")
            return []
        units: list[tuple[str, dict[str, Any], str]] = []
        own: dict[str, str] = {}  # element id -> where the element is (within this parent)
        for position, key, at, element in elements:
            if (spec.where or spec.skip) and not self._kept(
                spec, {**scope, spec.name: element}, at, fail
            ):
                continue
            if spec.id == EXPLODE_INDEX:
                element_id: Any = (
                    spec.separator.join(map(str, position)) if type(position) is tuple else position
                )
            elif spec.id == EXPLODE_KEY:
                element_id = key
            elif spec.id[0] == EXPLODE_JOIN:
                parts = [_element_id(spec.name, element, path) for path in spec.id[1:]]
                bad = next((problem for _, problem in parts if problem), "")
                if bad:
                    fail(f"element {at} has {bad}")
                    continue
                element_id = spec.separator.join(text for text, _ in parts)
            else:
                element_id = lookup({spec.name: element}, spec.id)
                if type(element_id) is not str and (
                    isinstance(element_id, bool) or not isinstance(element_id, (str, int))
                ):
                    what = (
                        "no id"
                        if element_id is MISSING
                        else f"an id that is {describe(element_id)}, not a text or an integer"
                    )
                    fail(f"element {at} has {what} at {'.'.join(spec.id)}")
                    continue
            element_id = str(element_id)
            if element_id in own:
                fail(f"element {at} has the id {element_id!r} of element {own[element_id]}")
                continue
            own[element_id] = at
            item_id = f"{parent_id}{spec.separator}{element_id}"
            if item_id in taken:
                fail(
                    f"element {at} makes the item id {item_id!r}, which the item at {taken[item_id]} already has"
                )
                continue
            units.append((item_id, {**scope, spec.name: element}, at))
        return units

    @staticmethod
    def _kept(spec: Explode, scope: Mapping[str, Any], at: str, fail: Any) -> bool:
        """Whether an element meets every ``where`` condition and no ``skip`` condition (a condition that fails is reported)."""
        for what, conditions in (("where", spec.where), ("skip", spec.skip)):
            for condition in conditions:
                try:
                    value = evaluate(condition, scope)
                except ExprError as exc:
                    fail(f"{what} <- {render(condition)}: element {at}: {exc}")
                    return False
                if type(value) is not bool:
                    shown = "missing" if value is MISSING else describe(value)
                    fail(
                        f"{what} <- {render(condition)}: element {at} gives {shown}, not true or false"
                    )
                    return False
                if value != (what == "where"):
                    return False
        return True

    def _primary_records(
        self, primary: _Table, problems: DataProblems
    ) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
        """Item id -> {primary source name: record}, in file order, and item id -> line."""
        name = primary.source.name
        by_row = self.id_path == ROW_INDEX
        by_key = self.id_path[:1] == (KEY_ID,)
        if by_key and primary.keys is None:
            problems.add(
                DataProblem(
                    primary.file,
                    None,
                    None,
                    f"id = key({name}) needs the file to be a JSON object {{id: record}}; it is {'a JSON array' if primary.rows else 'empty or not an object'}",
                )
            )
            return {}, {}
        keys = primary.keys if by_key else None  # set when by_key (checked above)
        id_path = (
            self.id_path[1:] if self.id_path[:1] == (name,) else None
        )  # the id within the record, without a scope dict
        scopes: dict[str, dict[str, Any]] = {}
        lines: dict[str, int] = {}
        for position, (line, record) in enumerate(primary.rows):
            if by_row:
                item_id: Any = position
            elif keys is not None:
                item_id = keys[position]
            else:
                item_id = (
                    lookup(record, id_path)
                    if id_path is not None
                    else lookup({name: record}, self.id_path)
                )
                if type(item_id) is not str and (
                    isinstance(item_id, bool) or not isinstance(item_id, (str, int))
                ):
                    what = (
                        "no id"
                        if item_id is MISSING
                        else f"an id that is {describe(item_id)}, not a text or an integer"
                    )
                    problems.add(
                        DataProblem.at(
                            primary.origin(line),
                            None,
                            f"record has {what} at {'.'.join(self.id_path)}",
                        )
                    )
                    continue
            # a later record with the same id overwrites the earlier one but keeps its position,
            # as the official readers' dicts do
            key = str(item_id)
            scopes[key] = {name: record}
            lines[key] = line
        return scopes, lines

    def _load(
        self, data_root: Path, split: str, source: TableSource, problems: DataProblems
    ) -> _Table:
        relative = source.path.format(split=split)
        path = under_data_root(
            data_root, relative, f"source {source.name!r}: path"
        )  # again at open: a plan may come from the cache
        if not path.is_file():
            raise FileNotFoundError(
                f"data file for source {source.name!r}, split {split!r} not found: {path}"
            )
        table = _Table(source, relative, [], {})
        keyed = list(iter_keyed_records(path, source.format))
        records = [(line, record) for line, _, record in keyed]
        if source.key is None:
            table.rows = records
            if source.format == "json" and (
                not keyed or keyed[0][1] is not None
            ):  # an object (or nothing): its keys can be ids
                # (every key is set: the file is an object)
                table.keys = (
                    [key for _, key, _ in keyed if key is not None]
                    if keyed or _is_object(path)
                    else None
                )
            return table
        rows: dict[str, Any] = {}
        for line, record in records:
            key = (
                record.get(source.key, MISSING)
                if type(record) is dict or isinstance(record, Mapping)
                else MISSING
            )
            if key is MISSING or key is None:
                problems.add(
                    DataProblem.at(
                        table.origin(line),
                        None,
                        f"record of source {source.name!r} has no key field {source.key!r}",
                    )
                )
                continue
            rows[str(key)] = (
                record  # the last record of an id wins, as a dict built from the file would
            )
            table.lines[str(key)] = line
        table.rows = rows
        return table

    @staticmethod
    def _members(
        data_root: Path, split: str, rule: ItemLabel, problems: DataProblems
    ) -> dict[str, str] | None:
        if rule.splits and split not in rule.splits:
            return None
        out: dict[str, str] = {}
        for member in rule.members:
            relative = member.path.format(split=split)
            path = under_data_root(data_root, relative, f"label {rule.name!r}: membership path")
            if not path.is_file():
                raise FileNotFoundError(
                    f"membership file for label {rule.name!r} not found: {path}"
                )
            fmt = {".csv": "csv", ".tsv": "tsv", ".json": "json"}.get(path.suffix, "jsonl")
            for line, record in iter_records(path, fmt):
                key = record.get(member.column) if isinstance(record, Mapping) else None
                if key is None:
                    problems.add(
                        DataProblem(
                            relative,
                            line,
                            None,
                            f"membership row for label {rule.name!r} has no column {member.column!r}",
                            fmt == "json",
                        )
                    )
                    continue
                out.setdefault(str(key), member.label)
        return out

    @staticmethod
    def _mapped(
        rule: ItemLabel, value: str, at: _Locator, problems: DataProblems, matched: set[str]
    ) -> str | None:
        """``map()``'s one rule (docs/language.md, "Labels through map()"): a key gives its label; any other
        value gives the default, and without a default it is an error (None after reporting it)."""
        assert rule.mapping is not None
        if value in rule.mapping:
            matched.add(value)
            return rule.mapping[value]
        if rule.default is not None:
            return rule.default
        keys = ", ".join(repr(k) for k in list(rule.mapping)[:8]) + (
            ", ..." if len(rule.mapping) > 8 else ""
        )
        message = f"label {rule.name!r} <- {render(rule.path)} is {value!r}, which is no key of its map() ({keys}) and it has no default"
        at.report(problems, _root(rule.path), message)
        return None

    @staticmethod
    def _label(
        scope: Mapping[str, Any], rule: ItemLabel, at: _Locator, problems: DataProblems
    ) -> str | None:
        """The label's raw text (before mapping); None after reporting a problem."""
        source = _root(rule.path)
        if is_computed(rule.path):
            try:
                value = evaluate(rule.path, scope)
            except ExprError as exc:
                at.report(problems, source, f"label {rule.name!r} <- {render(rule.path)}: {exc}")
                return None
        else:
            value = lookup(scope, rule.path)
        if type(value) is str:
            return value
        if value is MISSING or value is None:
            if rule.optional:
                return UNKNOWN
            at.report(
                problems,
                source,
                f"label {rule.name!r} <- {render(rule.path)} is {at.missing(source)}"
                + ("" if value is MISSING else " (null)"),
            )
            return None
        if isinstance(value, (int, float)):  # numbers and booleans name a label as their text
            return str(value)
        at.report(
            problems,
            source,
            f"label {rule.name!r} <- {render(rule.path)} must be a text or a number, got {describe(value)}",
        )
        return None

    @staticmethod
    def _answer_labels(
        scope: Mapping[str, Any],
        rule: AnswerLabel,
        at: _Locator,
        problems: DataProblems,
        per_value: dict[str, dict[str, list[str]]],
    ) -> None:
        entries = lookup(scope, rule.items)
        source, where = rule.items[0], ".".join(rule.items)
        if type(entries) is not list:
            if isinstance(entries, Mapping) and not entries:
                return  # OpenPI writes {} instead of [] for the items that have no answers
            if entries is MISSING or entries is None:
                at.report(
                    problems,
                    source,
                    f"answer_label {rule.name!r}: items <- {where} is {at.missing(source)}",
                )
            else:
                at.report(
                    problems,
                    source,
                    f"answer_label {rule.name!r}: items <- {where} must be a list of objects, got {describe(entries)}",
                )
            return
        item_id = at.item_id
        for position, entry in enumerate(entries, 1):
            if type(entry) is not dict and not isinstance(entry, Mapping):
                at.report(
                    problems,
                    source,
                    f"answer_label {rule.name!r}: entry {position} of {where} must be an object, got {describe(entry)}",
                )
                continue
            text, label = entry.get(rule.text, MISSING), entry.get(rule.label, MISSING)
            if type(text) is not str or type(label) is not str:
                bad = []
                if not isinstance(text, str):
                    bad.append(
                        f"has no {rule.text!r}"
                        if text is MISSING
                        else f"{rule.text!r} must be a text, got {describe(text)}"
                    )
                if label is MISSING:
                    bad.append(f"has no {rule.label!r}")
                elif not isinstance(label, (str, int, float)):  # a number names a label as its text
                    bad.append(f"{rule.label!r} must be a text or a number, got {describe(label)}")
                if bad:
                    at.report(
                        problems,
                        source,
                        f"answer_label {rule.name!r}: entry {position} of {where} {' and '.join(bad)}",
                    )
                    continue
                text, label = str(text), str(label)
            per_value.setdefault(label, {}).setdefault(item_id, []).append(text)


class _Locator:
    """Says where a problem of one item lies: the line of the record of the source a path starts in.

    ``key``: the id joined sources are keyed by (the parent's, for an exploded element); ``context``:
    where the exploded element is (``proc.questions[2]``), added to every message.
    """

    __slots__ = ("item_id", "origin", "tables", "absent", "key", "context")

    def __init__(
        self,
        item_id: str,
        origin: str,
        tables: Mapping[str, _Table],
        absent: set[str],
        key: str | None = None,
        context: str = "",
    ):
        self.item_id, self.origin, self.tables, self.absent = item_id, origin, tables, absent
        self.key, self.context = item_id if key is None else key, context

    def where(self, source: str) -> str:
        table = self.tables.get(source)
        if table is None or source in self.absent or table.source.key is None:
            return self.origin
        return table.origin(table.lines[self.key])

    def missing(self, source: str) -> str:
        if source in self.absent:
            return f"missing: source {source!r} has no row for this item"
        return "missing"

    def report(self, problems: DataProblems, source: str, message: str) -> None:
        table = self.tables.get(source)
        if source in self.absent and table is not None and not table.source.optional:
            return  # the missing row is reported once, not once per field drawn from it
        problems.add(
            DataProblem.at(
                self.where(source),
                self.item_id,
                f"{message} (element {self.context})" if self.context else message,
            )
        )


def _element_id(name: str, element: Any, path: tuple[str, ...]) -> tuple[str, str]:
    """One part of a joined element id as text, and what is wrong with it ("" when nothing)."""
    value = lookup({name: element}, path)
    if type(value) is str or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value), ""
    what = (
        "no id"
        if value is MISSING
        else f"an id that is {describe(value)}, not a text or an integer"
    )
    return "", f"{what} at {'.'.join(path)}"


def _root(path: tuple[Any, ...]) -> str:
    """The source (or explode) name a field or label path starts in: where its problems are located."""
    if is_computed(path):
        found = roots(path)
        return found[0] if found else ""
    return path[0] if path else ""


def _cast(path: tuple[Any, ...], ftype: FieldType | None, tables: Mapping[str, _Table]) -> bool:
    """Whether a field reads a CSV/TSV cell that must be converted to its declared type (runners/runtime/cells.py)."""
    if ftype is None or ftype.kind in ("str", "any") or is_computed(path) or len(path) != 2:
        return False
    table = tables.get(path[0])
    return table is not None and table.source.format in ("csv", "tsv")


def _is_object(path: Path) -> bool:
    """Whether a json file's top level is an object (an empty one has no records to tell by)."""
    return isinstance(json.loads(path.read_text(encoding="utf-8")), dict)


def _views(
    views: dict[str, dict[str, dict[str, list[str]]]],
    items: Mapping[str, Mapping[str, Any]],
    rules: Sequence[AnswerLabel],
) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """For each answer-label dimension and value: every item, its gold field restricted to that value."""
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for rule in rules:
        per_value = views.get(rule.name, {})
        out[rule.name] = {
            value: {
                item_id: {**record, rule.field: list(answers.get(item_id, []))}
                for item_id, record in items.items()
            }
            for value, answers in sorted(per_value.items())
        }
    return out
