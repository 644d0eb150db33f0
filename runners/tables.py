"""Declarative gold readers: JSONL/JSON/CSV/TSV sources joined on the item id.

The compiler builds a :class:`TableReader` from a spec's ``data`` block; it returns a
:class:`GoldSet` whose records hold the bound fields, plus per-item and per-answer labels.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runners._types import GoldSet

MISSING = object()
_DECODER = json.JSONDecoder()  # json.loads without its per-call argument handling


@dataclass(frozen=True)
class TableSource:
    name: str
    format: str
    path: str
    key: str | None = None
    splits: tuple[str, ...] = ()


@dataclass(frozen=True)
class Membership:
    """Items listed in ``column`` of the file at ``path`` get ``label`` (first matching file wins)."""

    path: str
    column: str
    label: str


@dataclass(frozen=True)
class ItemLabel:
    name: str
    path: tuple[str, ...] = ()
    mapping: Mapping[str, str] | None = None
    default: str | None = None
    members: tuple[Membership, ...] = ()
    splits: tuple[str, ...] = ()  # membership labels exist only on these splits (empty = all)


ROW_INDEX = ("#row",)  # id path meaning "0-based position of the record in the primary source"


@dataclass(frozen=True)
class AnswerLabel:
    """Per-answer labels: gold field ``field`` restricted to the records of ``items`` with one label."""

    name: str
    field: str
    items: tuple[str, ...]
    text: str
    label: str


def iter_records(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line or row number, record) for every record of a data file."""
    if fmt == "jsonl":
        decode = _DECODER.decode
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield number, decode(line)
    elif fmt == "json":
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else []
        yield from enumerate(rows, 1)
    elif fmt in ("csv", "tsv"):
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t" if fmt == "tsv" else ",")
            for number, row in enumerate(reader, 2):
                yield number, dict(row)
    else:
        raise ValueError(f"unknown data format {fmt!r}")


def lookup(record: Any, path: Sequence[str]) -> Any:
    for part in path:
        # the exact-type test first: isinstance against the Mapping ABC is slow, and records are dicts
        if (type(record) is dict or isinstance(record, Mapping)) and part in record:
            record = record[part]
        else:
            return MISSING
    return record


@dataclass(frozen=True)
class TableReader:
    sources: tuple[TableSource, ...]
    id_path: tuple[str, ...]
    fields: tuple[tuple[str, tuple[str, ...]], ...]
    labels: tuple[ItemLabel, ...] = ()
    answer_labels: tuple[AnswerLabel, ...] = ()

    def __call__(self, data_root: Path, split: str) -> GoldSet:
        tables = {s.name: self._load(data_root, split, s) for s in self.sources if not s.splits or split in s.splits}
        primary = self.sources[0].name
        scopes: dict[str, dict[str, Any]] = {}
        for position, (_, record) in enumerate(tables[primary]):
            item_id = position if self.id_path == ROW_INDEX else lookup({primary: record}, self.id_path)
            if item_id is MISSING:
                raise ValueError(f"a record of source {primary!r} has no id at {'.'.join(self.id_path)}")
            # a later record with the same id overwrites the earlier one but keeps its position,
            # as the official readers' dicts do
            scopes[str(item_id)] = {primary: record}
        items: dict[str, dict[str, Any]] = {}
        labels: dict[str, dict[str, str]] = {}
        views: dict[str, dict[str, dict[str, list[str]]]] = {}
        members = {rule.name: self._members(data_root, split, rule) for rule in self.labels if rule.members}
        for item_id, scope in scopes.items():
            for name, rows in tables.items():
                if name != primary:
                    scope[name] = rows.get(item_id, {})
            items[item_id] = {name: _default(lookup(scope, path)) for name, path in self.fields}
            labels[item_id] = {}
            for rule in self.labels:
                if rule.members:
                    if members[rule.name] is not None:
                        labels[item_id][rule.name] = members[rule.name].get(item_id, rule.default or "other")
                else:
                    labels[item_id][rule.name] = self._label(scope, rule)
            for rule in self.answer_labels:
                per_value = views.setdefault(rule.name, {})
                entries = lookup(scope, rule.items)
                for entry in entries if isinstance(entries, list) else []:
                    value = str(entry.get(rule.label, "unknown"))
                    per_value.setdefault(value, {}).setdefault(item_id, []).append(entry.get(rule.text, ""))
        return GoldSet(items=items, labels=labels, answer_views=_views(views, items, self.answer_labels))

    def _load(self, data_root: Path, split: str, source: TableSource) -> Any:
        path = data_root / source.path.format(split=split)
        if not path.is_file():
            raise FileNotFoundError(f"data file for source {source.name!r}, split {split!r} not found: {path}")
        records = list(iter_records(path, source.format))
        if source.key is None:
            return records
        return {str(r.get(source.key)): r for _, r in records}

    @staticmethod
    def _members(data_root: Path, split: str, rule: ItemLabel) -> dict[str, str] | None:
        if rule.splits and split not in rule.splits:
            return None
        out: dict[str, str] = {}
        for member in rule.members:
            path = data_root / member.path.format(split=split)
            if not path.is_file():
                raise FileNotFoundError(f"membership file for label {rule.name!r} not found: {path}")
            fmt = {".csv": "csv", ".tsv": "tsv", ".json": "json"}.get(path.suffix, "jsonl")
            for _, record in iter_records(path, fmt):
                key = record.get(member.column)
                if key is not None:
                    out.setdefault(str(key), member.label)
        return out

    @staticmethod
    def _label(scope: Mapping[str, Any], rule: ItemLabel) -> str:
        value = lookup(scope, rule.path)
        text = "unknown" if value is MISSING or value is None else str(value)
        if rule.mapping is not None:
            return rule.mapping.get(text, rule.default if rule.default is not None else text)
        return text


def _default(value: Any) -> Any:
    return None if value is MISSING else value


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
            value: {item_id: {**record, rule.field: list(answers.get(item_id, []))} for item_id, record in items.items()}
            for value, answers in sorted(per_value.items())
        }
    return out
