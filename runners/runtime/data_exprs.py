"""Values a data block computes from a record, beyond a path: lookups, any/all, distinct values, products.

docs/language.md ("Computed values") describes the spec side.  A node is plain data (so that a plan
holds it): a path is a tuple of names (``("proc", "labels")``); every other node is a tuple whose
head starts with ``#``, which no source or explode name can:

- ``("#const", value)``;
- ``("#lookup", list, match, read, has_default, default)``: the first element of ``list`` that
  ``match`` accepts, its member at the path ``read`` (the element itself when empty), else ``default``;
- ``("#any", list, match)`` / ``("#all", list, match)``: whether some / every element matches
  (``all`` of an empty list is true, as Python's);
- ``("#distinct", list, member, match)``: the values (of ``member``, or the elements) of the
  elements ``match`` accepts, each once, in first-seen order;
- ``("#equals", node, value)``: whether a value equals a constant;
- ``("#product", ((name, list), ...))``: explode items only, every combination of one element of
  each list, as a record ``{name: element, ...}``.

``match`` is a tuple of ``(member, node)`` pairs: an element matches when each member (``""``: the
element itself) equals the node's value for the item.  Equality is Python's, except that a boolean
never equals a number (JSON ``true`` is not ``1``).  A problem (a list that is not a list, a
lookup without a default that finds nothing, an element without the member read) is an
:class:`ExprError`, which the reader reports at the record's line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from procbench.runners.runtime.contracts import describe

MISSING = object()
Node = tuple[Any, ...]
CONDITIONS = ("#any", "#all", "#equals")  # nodes whose value is a boolean


class ExprError(ValueError):
    """A computed value that cannot be computed for one record."""


def is_path(node: Any) -> bool:
    return (
        isinstance(node, tuple)
        and bool(node)
        and all(isinstance(p, str) for p in node)
        and not node[0].startswith("#")
    )


def is_computed(node: Any) -> bool:
    """Whether a field or label path is a computed value rather than a plain path."""
    return (
        isinstance(node, tuple)
        and bool(node)
        and isinstance(node[0], str)
        and node[0].startswith("#")
    )


def lookup(record: Any, path: Sequence[str]) -> Any:
    for part in path:
        # the exact-type test first: isinstance against the Mapping ABC is slow, and records are dicts
        if (type(record) is dict or isinstance(record, Mapping)) and part in record:
            record = record[part]
        else:
            return MISSING
    return record


def same(a: Any, b: Any) -> bool:
    """Python's equality, except that a boolean is never equal to a number."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def roots(node: Any) -> list[str]:
    """The source or explode names the paths of a node start with, in the order written."""
    if is_path(node):
        return [node[0]]
    out: list[str] = []
    for part in node[1:] if is_computed(node) else node:
        if isinstance(part, tuple):
            out += [r for r in roots(part) if r not in out]
    return out


def evaluate(node: Node, scope: Mapping[str, Any]) -> Any:
    """The node's value in ``scope`` (source or explode name -> record); a missing path is :data:`MISSING`."""
    if is_path(node):
        return lookup(scope, node)
    head = node[0]
    if head == "#const":
        return node[1]
    if head == "#equals":
        value = evaluate(node[1], scope)
        return value is not MISSING and same(value, node[2])
    if head == "#product":
        raise ExprError("product(...) gives an explode's items only")
    elements = _list(node[1], scope)
    # a member no element has is a typo, not a miss: else every lookup would silently give its default
    match = node[3] if head == "#distinct" else node[2]
    read = node[3] if head == "#lookup" else ()
    _present(elements, [member for member, _ in match] + list(read[:1]), node[1])
    if head in ("#any", "#all"):
        accept = _matcher(node[2], scope)
        return (any if head == "#any" else all)(accept(element) for element in elements)
    if head == "#lookup":
        _, _, match, read, has_default, default = node
        accept = _matcher(match, scope)
        for position, element in enumerate(elements):
            if accept(element):
                value = lookup(element, read) if read else element
                if value is MISSING:
                    raise ExprError(
                        f"lookup: element {render(node[1])}[{position}] has no {'.'.join(read)}"
                    )
                return value
        if has_default:
            return default
        raise ExprError(
            f"lookup: no element of {render(node[1])} has {_render_match(match, scope)}, and the lookup has no default"
        )
    if head == "#distinct":
        _, _, member, match = node
        return distinct(elements, member, _matcher(match, scope), render(node[1]))
    raise ExprError(f"unknown computed value {head!r}")


def _present(elements: Sequence[Any], members: Sequence[str], where: Node) -> None:
    """Each member must be a key of some element of a non-empty list (``""``: the element itself)."""
    for member in members:
        if (
            member
            and elements
            and not any(isinstance(e, Mapping) and member in e for e in elements)
        ):
            raise ExprError(f"no element of {render(where)} has a member {member!r}")


def distinct(elements: Sequence[Any], member: Sequence[str], accept: Any, where: str) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for position, element in enumerate(elements):
        if not accept(element):
            continue
        value = lookup(element, member) if member else element
        if value is MISSING:
            raise ExprError(f"distinct: element {where}[{position}] has no {'.'.join(member)}")
        key = _identity(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def elements_of(
    node: Node, scope: Mapping[str, Any]
) -> list[tuple[tuple[int, ...], Any, str]] | None:
    """An explode's items from a computed node: (positions, element, where it is) each, and None if the node is a path.

    A product's element is ``{name: element, ...}`` with the positions of each part; a distinct's
    element is the value, its position that in the distinct list.
    """
    if is_path(node):
        return None
    if node[0] == "#product":
        combos: list[tuple[tuple[int, ...], dict[str, Any], list[str]]] = [((), {}, [])]
        for name, part in node[1]:
            found = _list(part, scope)
            where = render(part)
            combos = [
                (pos + (i,), {**record, name: element}, at + [f"{where}[{i}]"])
                for pos, record, at in combos
                for i, element in enumerate(found)
            ]
        return [(pos, record, " x ".join(at)) for pos, record, at in combos]
    found = evaluate(node, scope)
    if type(found) is not list:
        raise ExprError(f"{render(node)} gives {describe(found)}, not a list")
    return [((i,), element, f"{render(node)}[{i}]") for i, element in enumerate(found)]


def _identity(value: Any) -> Any:
    """What ``distinct`` compares: equal values by :func:`same` (``1`` and ``1.0`` alike, ``true`` and ``1`` not); lists and objects by content."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, str)) or value is None:
        return ("value", value)
    return ("json", json.dumps(value, sort_keys=True, default=str))


def _list(node: Node, scope: Mapping[str, Any]) -> list[Any]:
    found = evaluate(node, scope)
    if type(found) is not list:
        what = "missing" if found is MISSING else "null" if found is None else describe(found)
        raise ExprError(f"{render(node)} is {what}, not a list")
    return found


def _matcher(match: tuple[tuple[str, Node], ...], scope: Mapping[str, Any]) -> Any:
    """A test of one element against ``match``, the wanted values computed once for the item."""
    wanted = []
    for member, node in match:
        value = evaluate(node, scope)
        if value is MISSING:
            raise ExprError(f"{render(node)} is missing")
        wanted.append((member, value))

    def accept(element: Any) -> bool:
        for member, value in wanted:
            got = element if not member else lookup(element, (member,))
            if got is MISSING or not same(got, value):
                return False
        return True

    return accept


def _render_match(match: tuple[tuple[str, Node], ...], scope: Mapping[str, Any]) -> str:
    parts = [
        f"{member or 'the value'} = {json.dumps(evaluate(node, scope), default=str)}"
        for member, node in match
    ]
    return ", ".join(parts) or "any member"


def render(node: Any) -> str:
    """A node as the spec writes it (for messages and ``compile --explain``)."""
    if is_path(node):
        return ".".join(node)
    head = node[0]
    if head == "#const":
        return json.dumps(node[1])

    def match_text(match: tuple[tuple[str, Node], ...]) -> str:
        if len(match) == 1 and not match[0][0]:
            return render(match[0][1])
        return "{ " + ", ".join(f"{member} = {render(value)}" for member, value in match) + " }"

    if head == "#equals":
        return f"equals({render(node[1])}, {json.dumps(node[2])})"
    if head in ("#any", "#all"):
        return f"{head[1:]}({render(node[1])}, {match_text(node[2])})"
    if head == "#lookup":
        _, items, match, read, has_default, default = node
        text = f"lookup({render(items)}, {match_text(match)}" + (
            f", {'.'.join(read)}" if read else ""
        )
        return text + (f", default = {json.dumps(default)})" if has_default else ")")
    if head == "#distinct":
        _, items, member, match = node
        return (
            f"distinct({render(items)}"
            + (f", {'.'.join(member)}" if member else "")
            + (f", where = {match_text(match)})" if match else ")")
        )
    if head == "#product":
        return "product(" + ", ".join(f"{name} = {render(part)}" for name, part in node[1]) + ")"
    return str(node)
