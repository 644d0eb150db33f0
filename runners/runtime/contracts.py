"""Run-time checks that gold values are what the spec or a reader's contract says they are.

The checker proves statically that names and types line up; these checks prove it of the data, once
per read.  A value that does not fit is an error naming the item (and its line where known), never
coerced: a string read as a list of characters or a missing field read as an empty list gives
numbers that look plausible and are wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeGuard

from procbench.runners.runtime._types import DataProblem, DataProblems, GoldSet
from procbench.runners.runtime.predictions import COLLECTION_KINDS, FieldType
from procbench.runners.runtime.predictions import describe_value as describe

MISSING = object()

Check = Callable[[Any], bool]

# The Python types a collection value may have (isinstance's second argument).
Collections = tuple[type[Collection[Any]], ...]

# Python-built records (reader components) hold tuples and frozensets where JSON has lists.
PYTHON_COLLECTIONS: Collections = (list, tuple, set, frozenset)


def is_str_list(value: Any) -> TypeGuard[list[str]]:
    """``list(str)``, the hot case: exact types first (no isinstance against ABCs per element)."""
    if type(value) is not list:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    for v in value:
        if type(v) is not str and not isinstance(v, str):
            return False
    return True


def _is_str(value: Any) -> bool:
    return type(value) is str or isinstance(value, str)


def checker(ftype: FieldType, collections: Collections = (list,)) -> Check:
    """A predicate for values of ``ftype``, with fast paths for the common types.

    ``collections``: the Python types a ``list(...)`` value may have (``list`` for data read from
    JSON; :data:`PYTHON_COLLECTIONS` for records built by reader components).  ``optional(T)``
    accepts ``None``; whether the value may be *missing* is the caller's decision.
    """
    kind, item = ftype.kind, ftype.item
    if kind == "str":
        return _is_str
    if kind == "any":
        return lambda value: True
    if kind == "optional":
        inner = checker(item, collections) if item is not None else None
        return lambda value: value is None or inner is None or inner(value)
    if kind in COLLECTION_KINDS:
        if kind == "list" and item is not None and item.kind == "str" and collections == (list,):
            return is_str_list
        if item is None:
            return lambda value: isinstance(value, collections)
        return _each_of(collections, checker(item, collections))
    if kind == "int":
        return _is_int
    if kind == "record":
        # members as FieldType.accepts checks them (a nested list is a list), each member's check made once
        return _record_of(tuple((name, checker(t)) for name, t in ftype.values))
    return ftype.accepts


def _is_int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def _each_of(collections: Collections, each: Check) -> Check:
    def check(value: Any) -> bool:
        if not isinstance(value, collections):
            return False
        for member in value:
            if not each(member):
                return False
        return True

    return check


def _record_of(members: tuple[tuple[str, Check], ...]) -> Check:
    """``record(...)``: a mapping with the members, or an object with them as attributes (a record)."""

    def check(value: Any) -> bool:
        get = value.get if type(value) is dict or isinstance(value, Mapping) else None
        for name, fits in members:
            member = get(name, MISSING) if get is not None else getattr(value, name, MISSING)
            if member is MISSING or not fits(member):
                return False
        return True

    return check


def mismatch(ftype: FieldType, value: Any, collections: Collections = (list,)) -> str:
    """What is wrong with ``value`` as a ``ftype``: its shape, or the first element that does not fit."""
    target = (
        ftype.item
        if ftype.kind == "optional" and value is not None and ftype.item is not None
        else ftype
    )
    if (
        target.kind in COLLECTION_KINDS
        and target.item is not None
        and isinstance(value, collections)
    ):
        each = checker(target.item, collections)
        for position, element in enumerate(value, 1):
            if not each(element):
                return f"a list whose element {position} is {describe(element)}"
    return describe(value)


def field_value(record: Any, name: str) -> Any:
    """A record's field: the key of a mapping, else the attribute of an object; :data:`MISSING` when absent."""
    if type(record) is dict or isinstance(record, Mapping):
        return record.get(name, MISSING)
    return getattr(record, name, MISSING)


def check_gold_against_contract(
    gold: GoldSet, fields: Mapping[str, FieldType], labels: Collection[str], source: str
) -> None:
    """Raise :class:`GoldDataError` where a reader component's gold breaks its declared contract.

    ``fields``: gold field -> type (``Contract.fields``).  Records may be mappings (the field is a
    key) or objects such as the frozen dataclasses the shipped readers build (the field is an
    attribute); a ``list(T)`` field of an object may be a tuple or a (frozen)set, as Python records
    hold them.  A missing field is an error unless its type is ``optional(T)``.

    ``labels``: item labels the reader promises.  A label that *no* item of the split carries is
    taken as not given on this split (PARADISE's ``explicitness`` exists on test splits only);
    otherwise every item must carry it.  When ``labels`` is a mapping label -> allowed values
    (``Contract.labels``), a non-empty tuple of values is checked too.

    ``source`` names the reader in the message (``"reader paged.graphs"``).  Problems are located by
    ``gold.origins`` where the reader filled it.
    """
    problems = DataProblems(source)
    origins = gold.origins
    checks = [(name, ftype, checker(ftype, PYTHON_COLLECTIONS)) for name, ftype in fields.items()]
    if checks:
        for item_id, record in gold.items.items():
            for name, ftype, ok in checks:
                value = field_value(record, name)
                if value is MISSING:
                    if ftype.kind != "optional":
                        problems.add(
                            DataProblem.at(
                                origins.get(item_id),
                                item_id,
                                f"field {name!r} ({ftype.spelling()}, declared by {source}) is missing",
                            )
                        )
                elif not ok(value):
                    problems.add(
                        DataProblem.at(
                            origins.get(item_id),
                            item_id,
                            f"field {name!r} must be {ftype.spelling()} (declared by {source}), got {mismatch(ftype, value, PYTHON_COLLECTIONS)}",
                        )
                    )
    allowed: Mapping[str, Collection[str]] = labels if isinstance(labels, Mapping) else {}
    for label in labels:
        carried = [item_id for item_id in gold.items if label in gold.labels.get(item_id, {})]
        if not carried:
            continue
        values = allowed.get(label) or ()
        for item_id in gold.items:
            item_labels = gold.labels.get(item_id, {})
            if label not in item_labels:
                problems.add(
                    DataProblem.at(
                        origins.get(item_id),
                        item_id,
                        f"label {label!r} (declared by {source}) is missing; {len(carried)} other items carry it",
                    )
                )
            elif values and item_labels[label] not in values:
                problems.add(
                    DataProblem.at(
                        origins.get(item_id),
                        item_id,
                        f"label {label!r} = {item_labels[label]!r} is not one of {', '.join(map(repr, values))} (declared by {source})",
                    )
                )
    problems.raise_if_any()
