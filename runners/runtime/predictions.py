"""Declarative prediction-file readers: JSON lines or delimited columns checked against a typed schema.

Reading streams line by line (memory stays bounded by the number of items, not the file size) and
collects every problem with its line number before giving up (the first MAX_PROBLEMS listed, the
rest counted), so a user fixes a file in one go.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from procbench.runners.runtime._types import (
    MAX_PROBLEMS as MAX_PROBLEMS,
)  # re-exported: the one cap of every reader lives in _types
from procbench.runners.runtime._types import (
    GoldSet,
    InvalidPredictions,
    PredictionWarning,
    Problem,
    ProblemList,
)
from procbench.runners.runtime.cells import BadCell, cast_cell
from procbench.runners.runtime.records import Record


SCALAR_KINDS = ("str", "int", "float", "bool", "any")
# Kinds read from a JSON list whose declared kind fixes what a metric makes of it (docs/language.md, types):
# list(T) a sequence compared element by element, ordering(T) a ranked sequence of distinct items, set(T) unordered.
COLLECTION_KINDS = ("list", "ordering", "set")

# Limits on one prediction, whatever the schema says (submitted files are untrusted): each is far
# above what any shipped benchmark's answers need, and far below what makes a scorer run for minutes.
MAX_JSON_DEPTH = (
    64  # nesting of one JSON line (a deeper line is refused at its line, never a RecursionError)
)
MAX_TEXT_CHARS = 100_000  # characters of one string value, anywhere in a record
MAX_LIST_ITEMS = 10_000  # elements of one list value, anywhere in a record


MAX_IDS_LISTED = 20  # ids named in one message (an empty or near-empty file would otherwise list every item of the split)
MAX_EXTRA_FIELDS = 20  # distinct undeclared field names remembered per file (the rest counted): bounded on any file
EMPTY_FILE = "the file holds no records"  # every reader's words for a file without one record (blank lines only, or nothing)


def listed_ids(ids: list[str], limit: int = MAX_IDS_LISTED) -> str:
    """``'0, 1, 2'``, or the first ``limit`` ids and how many more: a message of bounded length however many ids are missing."""
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


class ExtraFields:
    """Fields of a prediction file that its format does not declare, each with the first line it is on and how many records carry it.

    Issue #30: a record's undeclared field was ignored without a word (a 20 MB upload whose answers sat under a
    misspelt key scored as empty).  Readers :meth:`see` every record and :meth:`warn` once at the end: one
    :class:`PredictionWarning` per field, naming the field and its first line.  At most ``MAX_EXTRA_FIELDS``
    names are kept (a file of a million distinct keys costs that many); the rest are counted.
    """

    def __init__(self, declared: Iterable[str], cap: int = MAX_EXTRA_FIELDS) -> None:
        self.declared = frozenset(declared)
        self.cap = cap
        self.first: dict[str, int] = {}
        self.records: dict[str, int] = {}
        self.more = False

    def see(self, line: int, record: Mapping[str, Any]) -> None:
        if len(record) <= len(self.declared) and record.keys() <= self.declared:
            return
        for name in record.keys() - self.declared:
            if name in self.first:
                self.records[name] += 1
            elif len(self.first) < self.cap:
                self.first[name], self.records[name] = line, 1
            else:
                self.more = True

    def messages(self) -> list[str]:
        expected = ", ".join(repr(n) for n in sorted(self.declared))
        out = [
            f"field {name[:60]!r} (line {line}{f' and {self.records[name] - 1} more records' if self.records[name] > 1 else ''}) is not part of this "
            f"task's prediction format ({expected}): ignored; is it misspelt?"
            for name, line in self.first.items()
        ]
        if self.more:
            out.append(f"more undeclared fields than the {self.cap} named above: ignored")
        return out

    def warn(self) -> None:
        for message in self.messages():
            warnings.warn(PredictionWarning(message), stacklevel=3)


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a decoded JSON value nests lists/objects more than ``limit`` levels (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, (list, dict)):
            if depth > limit:
                return True
            stack.extend(
                (child, depth + 1)
                for child in (current.values() if isinstance(current, dict) else current)
            )
    return False


class TooDeep(ValueError):
    """A JSON text nested beyond its limit (MAX_JSON_DEPTH unless the reader says otherwise)."""

    def __init__(self, limit: int = MAX_JSON_DEPTH) -> None:
        super().__init__(f"the JSON is nested more than {limit} levels deep")


def _loads(text: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses nesting beyond ``limit`` with :class:`TooDeep` (never a RecursionError)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(limit) from None
    # Only a text with enough brackets can be too deep: the walk is skipped for ordinary lines.
    if text.count("[") + text.count("{") > limit and too_deep(value, limit):
        raise TooDeep(limit)
    return value


def loads_bounded(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """The depth-bounded ``json.loads`` for other readers (a judge's reply, a foreign harness's log): TooDeep past ``limit``."""
    return _loads(text.decode("utf-8") if isinstance(text, bytes) else text, limit)


def oversize(
    value: Any, max_text: int = MAX_TEXT_CHARS, max_items: int = MAX_LIST_ITEMS
) -> str | None:
    """Why a (depth-checked) value breaks the per-answer limits, or None: the first string or list too long."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str) and len(current) > max_text:
            return f"a string of {len(current)} characters (the limit is {max_text} per value)"
        if isinstance(current, (list, dict)):
            if len(current) > max_items:
                return f"a {'list' if isinstance(current, list) else 'object'} of {len(current)} elements (the limit is {max_items} per value)"
            stack.extend(current.values() if isinstance(current, dict) else current)
    return None


_ABSENT = object()


def member_of(record: Any, name: str) -> Any:
    """A record's member: a mapping's key or an object's attribute (a missing one is a sentinel no type accepts)."""
    if isinstance(record, Mapping):
        return record.get(name, _ABSENT)
    return getattr(record, name, _ABSENT)


def _top_level_parts(text: str) -> list[str]:
    """``text`` split on the commas outside parentheses: ``a: int, b: list(str)`` -> two parts."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


class FieldType(Record):
    """A value type of the spec language (``list(str)``, ``record(...)``), as the runtime checks values against it."""

    __slots__ = ("kind", "item", "values")
    kind: str  # str | int | float | bool | list | ordering | set | optional | enum | record | any
    item: FieldType | None
    # enum: its values; record: its members as (name, FieldType) pairs (one slot, so that the serialised
    # form of every other type, which fingerprints include, stays what it was)
    values: tuple[Any, ...]

    def __init__(
        self, kind: str, item: FieldType | None = None, values: tuple[Any, ...] = ()
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "item", item)
        object.__setattr__(self, "values", values)

    @staticmethod
    def parse(text: str) -> FieldType:
        """``str``, ``list(str)``, ``ordering(str)``, ``set(str)``, ``optional(int)``, ``enum(a, b)``, ``record(step: int, text: str)``: type spellings."""
        text = text.strip()
        if text in SCALAR_KINDS:
            return FieldType(text)
        head, sep, rest = text.partition("(")
        if not sep or not rest.endswith(")"):
            raise ValueError(f"not a type: {text!r}")
        inner = rest[:-1]
        if head in (*COLLECTION_KINDS, "optional"):
            return FieldType(head, FieldType.parse(inner))
        if head == "enum":
            return FieldType(
                "enum", values=tuple(v.strip().strip('"') for v in inner.split(",") if v.strip())
            )
        if head == "record":
            members = []
            for part in _top_level_parts(inner):
                name, colon, spelled = part.partition(":")
                if not colon or not name.strip().isidentifier():
                    raise ValueError(f"not a record member: {part.strip()!r} (write name: type)")
                members.append((name.strip(), FieldType.parse(spelled)))
            if not members or len({n for n, _ in members}) != len(members):
                raise ValueError(f"a record needs members with distinct names: {text!r}")
            return FieldType("record", values=tuple(members))
        raise ValueError(f"not a type: {text!r}")

    def members(self) -> dict[str, FieldType]:
        """A record's members by name (empty for other kinds)."""
        return dict(self.values) if self.kind == "record" else {}

    def fits(self, wanted: FieldType) -> bool:
        """Whether a value of this type can be passed where ``wanted`` is expected (``any`` fits both ways)."""
        if wanted.kind == "any" or self.kind == "any":
            return True
        if wanted.kind == "optional":
            return (
                (wanted.item is None or self.fits(wanted.item))
                if self.kind != "optional"
                else (self.item is None or wanted.item is None or self.item.fits(wanted.item))
            )
        if self.kind == "enum":
            return (
                wanted.kind == "enum"
                and set(self.values) <= set(wanted.values)
                or wanted.kind == "str"
                and all(isinstance(v, str) for v in self.values)
            )
        if self.kind != wanted.kind:
            return self.kind == "int" and wanted.kind == "float"
        if (
            self.kind in COLLECTION_KINDS
        ):  # an ordering or a set is no list, nor the reverse: the declared kind fixes the meaning
            return self.item is None or wanted.item is None or self.item.fits(wanted.item)
        if self.kind == "record":  # every member the other side wants, of a fitting type
            mine = self.members()
            return all(name in mine and mine[name].fits(t) for name, t in wanted.values)
        return True

    def spelling(self) -> str:
        """The type as a spec writes it: ``list(str)``."""
        if self.kind in (*COLLECTION_KINDS, "optional"):
            return f"{self.kind}({self.item.spelling() if self.item else 'any'})"
        if self.kind == "enum":
            return "enum(" + ", ".join(json.dumps(v) for v in self.values) + ")"
        if self.kind == "record":
            return "record(" + ", ".join(f"{n}: {t.spelling()}" for n, t in self.values) + ")"
        return self.kind

    def render(self) -> str:
        if self.kind in (*COLLECTION_KINDS, "optional"):
            return f"{self.kind}<{self.item.render() if self.item else 'any'}>"
        if self.kind == "enum":
            return "enum<" + ", ".join(json.dumps(v) for v in self.values) + ">"
        if self.kind == "record":
            return "record<" + ", ".join(f"{n}: {t.render()}" for n, t in self.values) + ">"
        return self.kind

    def accepts(self, value: Any) -> bool:
        k = self.kind
        if k == "any":
            return True
        if k == "optional":
            return value is None or (self.item is None or self.item.accepts(value))
        if k == "str":
            return isinstance(value, str)
        if k == "int":
            return isinstance(value, int) and not isinstance(value, bool)
        if k == "float":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if k == "bool":
            return isinstance(value, bool)
        if (
            k in COLLECTION_KINDS
        ):  # a JSON list; whether an ordering's items are distinct is the metric's question (Metric.invalid)
            if not isinstance(value, list):
                return False
            item = self.item
            if item is None:
                return True
            if item.kind == "str":  # the commonest list, without a call per member (same rule)
                return all(isinstance(v, str) for v in value)
            return all(item.accepts(v) for v in value)
        if k == "enum":
            return any(value == v and type(value) is type(v) for v in self.values)
        if (
            k == "record"
        ):  # a mapping with the members, or an object with them as attributes (a record, a frozen dataclass)
            if type(value) is dict or isinstance(value, Mapping):  # member_of, asked once a record
                return all(
                    (v := value.get(name, _ABSENT)) is not _ABSENT and t.accepts(v)
                    for name, t in self.values
                )
            return all(
                (v := getattr(value, name, _ABSENT)) is not _ABSENT and t.accepts(v)
                for name, t in self.values
            )
        return False

    def from_text(self, text: str) -> Any:
        """Convert a delimited-file cell; raises ValueError when it does not fit."""
        k = self.kind
        if k in ("str", "any"):
            return text
        if k == "optional":
            return None if text == "" else (self.item.from_text(text) if self.item else text)
        if k == "int":
            return int(text)
        if k == "float":
            return float(text)
        if k == "bool":
            if text.lower() in ("true", "1", "yes"):
                return True
            if text.lower() in ("false", "0", "no"):
                return False
            raise ValueError(text)
        if k == "enum":
            for v in self.values:
                if str(v) == text:
                    return v
            raise ValueError(text)
        value = _loads(text)
        if not self.accepts(value):
            raise ValueError(text)
        return value


class PredictionRecords(dict[str, Any]):
    """item id -> its prediction record, remembering the file and the line each record came from.

    A plain dict to every scorer; a measure that refuses an item (``invalid = "refuse"``) reads the line back
    with :func:`line_of`.  Readers that keep no lines return plain mappings (the item is then named without a line).
    """

    def __init__(self, source: str = "") -> None:
        super().__init__()
        self.source = source
        self.lines: dict[str, int] = {}


def line_of(records: Mapping[str, Any], item_id: str) -> int | None:
    """The line of an item's prediction record, where its reader kept it."""
    lines = getattr(records, "lines", None)
    return lines.get(item_id) if isinstance(lines, dict) else None


class SchemaReader(Record):
    """Reads ``{id, fields...}`` records; the id field is matched against the gold item ids."""

    __slots__ = (
        "format",
        "id_field",
        "fields",
        "max_text_chars",
        "max_list_items",
        "missing_declared",
    )
    format: str  # jsonl | csv | tsv
    id_field: str
    fields: tuple[tuple[str, FieldType], ...]
    max_text_chars: int  # per string value of a declared field
    max_list_items: int  # per list value of a declared field
    missing_declared: (
        bool  # every measure declares how an item without a prediction counts (the warning says so)
    )

    def __init__(
        self,
        format: str,
        id_field: str,
        fields: tuple[tuple[str, FieldType], ...],
        max_text_chars: int = MAX_TEXT_CHARS,
        max_list_items: int = MAX_LIST_ITEMS,
        missing_declared: bool = False,
    ) -> None:
        object.__setattr__(self, "format", format)
        object.__setattr__(self, "id_field", id_field)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "max_text_chars", max_text_chars)
        object.__setattr__(self, "max_list_items", max_list_items)
        object.__setattr__(self, "missing_declared", missing_declared)

    def __call__(self, path: Path, gold: GoldSet) -> dict[str, Any]:
        records = PredictionRecords(path.name)
        self.scan(path, gold.items, records.lines, records.__setitem__)
        missing = [i for i in gold.items if i not in records]
        if missing:
            self.warn_missing(len(missing), len(gold.items), missing[0])
        return records

    def scan(
        self,
        path: Path,
        known: Container[str],
        first_line: MutableMapping[str, int],
        keep: Callable[[str, dict[str, Any]], None],
    ) -> None:
        """Validate every record of the file, streamed: ``keep(item_id, record)`` for each record of a ``known`` item.

        ``first_line`` (item id -> line) is filled for every id read, known or not (duplicates are told by it);
        raises InvalidPredictions with every problem (capped), warns about undeclared fields.  A streamed
        evaluation (runners/runtime/streaming.py) passes compact stand-ins for ``first_line`` and ``keep``.
        """
        problems = ProblemList()

        def report(line: int | None, message: str) -> None:
            problems.append(Problem(line, message))

        any_record = False
        extra = ExtraFields([self.id_field, *(name for name, _ in self.fields)])
        for line, record, error in self._records(path):
            if error is not None:
                report(line, error)
                continue
            any_record = True
            extra.see(line, record)
            ok = True
            for name, ftype in self.fields:
                if name not in record:
                    if ftype.kind != "optional":
                        report(line, f"missing field {name!r} ({ftype.render()})")
                        ok = False
                elif not ftype.accepts(record[name]):
                    report(
                        line,
                        f"field {name!r} must be {ftype.render()}, got {_describe(record[name])}",
                    )
                    ok = False
                elif (
                    why := oversize(record[name], self.max_text_chars, self.max_list_items)
                ) is not None:
                    report(line, f"field {name!r} is too long: {why}")
                    ok = False
            if not ok or self.id_field not in record:
                continue
            item_id = str(record[self.id_field])
            if item_id in first_line:
                report(line, f"duplicate id {item_id!r} (first on line {first_line[item_id]})")
                continue
            first_line[item_id] = line
            if item_id not in known:
                report(line, f"unknown id {item_id!r}: not an item of this split")
                continue
            keep(item_id, record)
        if not any_record and not problems:
            report(None, EMPTY_FILE)
        if problems:
            raise InvalidPredictions(problems, str(path.name))
        extra.warn()

    def warn_missing(self, count: int, total: int, first: str) -> None:
        """The warning for ``count`` of ``total`` items without a prediction record (``first``: the first of them)."""
        counted = (
            "count as the measures' missing = ... declares"
            if self.missing_declared
            else 'score as empty (the default; a measure\'s missing = ... declares otherwise: "refuse", predict(<value>), score(<number>))'
        )
        warnings.warn(
            PredictionWarning(
                f"{count} of {total} items have no prediction and {counted} (first: {first!r})"
            ),
            stacklevel=3,
        )

    def _records(self, path: Path) -> Iterator[tuple[int, dict[str, Any], str | None]]:
        if self.format == "jsonl":
            yield from json_objects(path)
        else:
            yield from self._delimited_records(path)

    def _delimited_records(self, path: Path) -> Iterator[tuple[int, dict[str, Any], str | None]]:
        import csv  # only a CSV or TSV prediction file needs it (issue #31: ProPara's start-up)

        types = dict(self.fields)
        with _open_text(path) as handle:
            reader = csv.reader(handle, delimiter="\t" if self.format == "tsv" else ",")
            try:
                header = next(reader)
            except StopIteration:
                return
            except (UnicodeDecodeError, csv.Error) as exc:
                yield 1, {}, _decode_message(exc)
                return
            header = [h.lstrip("\ufeff").strip() for h in header]
            absent = [
                name for name, t in self.fields if name not in header and t.kind != "optional"
            ]
            if absent:
                yield (
                    1,
                    {},
                    f"header lacks column(s) {', '.join(absent)} (found: {', '.join(header)})",
                )
                return
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except (UnicodeDecodeError, csv.Error) as exc:
                    yield reader.line_num, {}, _decode_message(exc)
                    return
                line = reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    yield line, {}, f"expected {len(header)} columns, found {len(row)}"
                    continue
                record, errors = _typed_row(header, row, types)
                if not errors:
                    yield line, record, None
                for error in errors:  # every bad cell of the row, each at the row's line
                    yield line, {}, error


def _typed_row(
    header: list[str], row: list[str], types: Mapping[str, FieldType]
) -> tuple[dict[str, Any], list[str]]:
    """A delimited row's declared columns read as their types (runners/runtime/cells.py), and a message per cell that does not read."""
    record: dict[str, Any] = {}
    errors = []
    for name, cell in zip(header, row):
        ftype = types.get(name)
        if ftype is None:
            continue
        try:
            record[name] = cast_cell(ftype, cell)
        except BadCell as exc:
            errors.append(f"column {name!r} must be {ftype.render()}, got {cell!r}: {exc}")
    return record, errors


def json_objects(path: Path, shape: str = "") -> Iterator[tuple[int, dict[str, Any], str | None]]:
    """(1-based line, object, problem) for each non-blank line of a JSON-lines file, streamed.

    A leading UTF-8 BOM is ignored; each line is decoded on its own so that one bad byte costs one
    line; a line that is not a JSON object, or nests deeper than MAX_JSON_DEPTH, yields ``({}, message)``.  ``shape`` (e.g.
    ``{"id": ..., "label": ...}``) is named in the message for a non-object line.
    """
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, {}, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
                continue
            if not text.strip():
                continue
            # issue #30: decoded with its line ending, a line cut short failed *after* the newline ("column 1" of the
            # next line) or inside it ("Invalid control character"): the column is the line's own, as an editor shows it
            text = (
                text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
            )
            try:
                value = _loads(text)
            except json.JSONDecodeError as exc:
                yield number, {}, f"not valid JSON: {exc.msg} (column {exc.colno})"
                continue
            except TooDeep as exc:
                yield number, {}, f"not accepted: {exc}"
                continue
            except ValueError as exc:  # e.g. an integer of more digits than Python converts
                yield number, {}, f"not valid JSON: {exc}"
                continue
            if not isinstance(value, dict):
                yield (
                    number,
                    {},
                    f"expected a JSON object{' ' + shape if shape else ''}, got {_describe(value)}",
                )
                continue
            yield number, value, None


def _open_text(path: Path) -> io.TextIOWrapper:
    return io.TextIOWrapper(path.open("rb"), encoding="utf-8-sig", newline="")


def _decode_message(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not valid UTF-8"
    return f"malformed delimited row: {exc}"


def describe_value(value: Any) -> str:
    """A value's shape in words, for "must be list(str), got ..." (prediction files and gold data alike)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})" if value else "an empty string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def _describe(value: Any) -> str:
    if (
        isinstance(value, list) and value
    ):  # the type check failed on an element, not on the list itself
        return "a list with a non-matching element"
    return describe_value(value)
