"""The data block's computed values: ``lookup``, ``any``, ``all``, ``distinct``, ``equals`` and an explode's ``product``.

The checker (:mod:`procbench.dsl.checker`) calls these where a field, a label or an explode attribute is
written as a call rather than a path.  Each returns the plain node :mod:`procbench.runners.runtime.data_exprs`
evaluates (a path stays the tuple of its names, so specs without these constructs read, and
fingerprint, as before), or ``None`` after reporting the mistake at its place with a hint.
The syntax is documented in docs/language.md ("Computed values").
"""

from __future__ import annotations

import json
from typing import Any, Protocol, TypeGuard

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import describe
from procbench.runners.runtime.data_exprs import CONDITIONS, is_computed, render, roots
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.id_paths import EXPLODE_JOIN, EXPLODE_KEY


class _Checker(Protocol):
    """What these functions use of the checker (dsl/checker.py, which imports this module)."""

    def error(self, span: s.Span, message: str, hint: str = "") -> None: ...
    def unknown(
        self,
        span: s.Span,
        what: str,
        name: str,
        candidates: list[str] | tuple[str, ...],
        where: str = "",
    ) -> None: ...
    def refer(self, namespace: str, name: str, span: s.Span, what: str = "") -> None: ...
    def _data_path(self, expr: s.Expr, what: str) -> tuple[str, ...] | None: ...


FUNCTIONS = ("lookup", "any", "all", "distinct", "equals")  # computed values of a field or label
USAGE = {
    "lookup": 'lookup(rec.labels, { step = cell.step, event = cell.event }, label, default = "none")',
    "any": 'any(rec.labels, { step = cell.step, label = "yes" })',
    "all": "all(rec.checks, { passed = true })",
    "distinct": 'distinct(rec.labels, event, where = { kind = "event" })',
    "equals": 'equals(cell.step.kind, "header")',
    "product": "product(step = rec.steps, event = rec.events)",
}


def is_computed_call(expr: s.Expr) -> TypeGuard[s.Call]:
    return isinstance(expr, s.Call) and expr.callee.dotted in FUNCTIONS


def _path(
    ck: _Checker, expr: s.Expr, what: str, *, element: bool = False
) -> tuple[str, ...] | None:
    """A path into a source or the exploded element; ``element``: a bare name may be the element itself."""
    if element and isinstance(expr, s.Ref) and len(expr.parts) == 1:
        ck.refer("path_root", expr.parts[0], expr.span, f"explode name in {what}")
        return expr.parts
    if isinstance(expr, s.Ref) and len(expr.parts) >= 2:
        ck.refer("path_root", expr.parts[0], expr.span, f"source or explode name in {what}")
        return expr.parts
    return ck._data_path(expr, what)


def _member(ck: _Checker, expr: s.Expr, what: str) -> tuple[str, ...] | None:
    """A member path within each element of a list: a bare name or a dotted path (``label``, ``meta.kind``)."""
    if isinstance(expr, s.Ref):
        return expr.parts
    ck.error(
        expr.span,
        f"{what} is a member of the list's elements, written as a bare name, got {describe(expr)}",
        "e.g. label, or meta.kind",
    )
    return None


def value(ck: _Checker, expr: s.Expr, what: str, *, element: bool = False) -> Any:
    """A path, a literal (text, number, true/false) or a computed value; ``None`` after an error."""
    if isinstance(expr, (s.Str, s.Num, s.Bool)):
        return ("#const", expr.value)
    if isinstance(expr, s.Call):
        return computed(ck, expr, what, element=element)
    return _path(ck, expr, what, element=element)


def _list(ck: _Checker, expr: s.Expr, what: str, *, element: bool) -> Any:
    """A list operand: a path or ``distinct(...)`` (the other computed values are not lists)."""
    if isinstance(expr, s.Call) and expr.callee.dotted != "distinct":
        ck.error(
            expr.span,
            f"{what}: {expr.callee.dotted}() does not give a list",
            f"a list is a path (rec.steps) or {USAGE['distinct']}",
        )
        return None
    if isinstance(expr, (s.Str, s.Num, s.Bool, s.ListExpr, s.ObjectExpr)):
        ck.error(expr.span, f"{what} is a path to a list, got {describe(expr)}", "e.g. rec.labels")
        return None
    return value(ck, expr, what, element=element)


def _match(
    ck: _Checker, expr: s.Expr, what: str, *, element: bool
) -> tuple[tuple[str, Any], ...] | None:
    """``{ member = value, ... }`` (each member of an element equal to the value), or one value compared with the element itself."""
    if isinstance(expr, s.ObjectExpr):
        if not expr.pairs:
            ck.error(
                expr.span,
                f"{what}: an empty match accepts every element",
                "name at least one member, e.g. { step = cell.step }",
            )
            return None
        out = []
        for pair in expr.pairs:
            if isinstance(pair.value, (s.ListExpr, s.ObjectExpr)) or (
                isinstance(pair.value, s.Call) and pair.value.callee.dotted != "lookup"
            ):
                ck.error(
                    pair.value.span,
                    f"{what}: member {pair.key!r} is compared with a path, a literal or a lookup(...), got {describe(pair.value)}",
                )
                return None
            node = value(ck, pair.value, what, element=element)
            if node is None:
                return None
            out.append((pair.key, node))
        return tuple(out)
    if isinstance(expr, (s.ListExpr, s.Call)):
        ck.error(
            expr.span,
            f"{what}: elements are matched by {{ member = value, ... }} or by one value, got {describe(expr)}",
            "e.g. { step = cell.step }",
        )
        return None
    node = value(ck, expr, what, element=element)
    return None if node is None else (("", node),)


def computed(ck: _Checker, call: s.Call, what: str, *, element: bool = False) -> Any:
    """A computed value written as a call; ``element``: paths may start with the exploded element's name alone."""
    name = call.callee.dotted
    if name not in FUNCTIONS:
        ck.unknown(call.callee.span, "computed value", name, list(FUNCTIONS))
        return None
    usage = f"e.g. {USAGE[name]}"
    args, kwargs = call.args, {kw.name: kw for kw in call.kwargs}
    allowed = {"lookup": ("default",), "distinct": ("where",)}.get(name, ())
    stray = [kw for kw in call.kwargs if kw.name not in allowed]
    if stray:
        ck.error(
            stray[0].span,
            f"{name}() takes no argument {stray[0].name!r}"
            + (f" (it takes {', '.join(allowed)})" if allowed else ""),
            usage,
        )
        return None
    arity = {"lookup": (2, 3), "any": (2, 2), "all": (2, 2), "distinct": (1, 2), "equals": (2, 2)}[
        name
    ]
    if not arity[0] <= len(args) <= arity[1]:
        count = f"{arity[0]}" if arity[0] == arity[1] else f"{arity[0]} or {arity[1]}"
        ck.error(call.span, f"{name}() takes {count} positional arguments, got {len(args)}", usage)
        return None
    inner = f"{name}() in {what}"
    if name == "equals":
        if not isinstance(args[1], (s.Str, s.Num, s.Bool)):
            ck.error(
                args[1].span,
                f"{inner}: the second argument is a literal (text, number, true/false), got {describe(args[1])}",
                usage,
            )
            return None
        left = value(ck, args[0], inner, element=element)
        return None if left is None else ("#equals", left, args[1].value)
    items = _list(ck, args[0], inner, element=element)
    if name in ("any", "all"):
        match = _match(ck, args[1], inner, element=element)
        return None if items is None or match is None else (f"#{name}", items, match)
    if name == "distinct":
        member = _member(ck, args[1], inner) if len(args) > 1 else ()
        match = (
            _match(ck, kwargs["where"].value, inner, element=element) if "where" in kwargs else ()
        )
        return (
            None
            if items is None or member is None or match is None
            else ("#distinct", items, member, match)
        )
    match = _match(ck, args[1], inner, element=element)
    read = _member(ck, args[2], inner) if len(args) > 2 else ()
    has_default, fallback = "default" in kwargs, None
    if has_default:
        written = kwargs["default"].value
        if not isinstance(written, (s.Str, s.Num, s.Bool)):
            ck.error(
                written.span,
                f"{inner}: the default is a literal (text, number, true/false), got {describe(written)}",
                usage,
            )
            return None
        fallback = written.value
    if items is None or match is None or read is None:
        return None
    return ("#lookup", items, match, read, has_default, fallback)


def explode_items(ck: _Checker, expr: s.Expr, where: str) -> Any:
    """``items``: a path, ``product(a = <list>, b = <list>, ...)`` or ``distinct(...)``."""
    if isinstance(expr, s.Call) and expr.callee.dotted == "product":
        if expr.args or len(expr.kwargs) < 2:
            ck.error(
                expr.span,
                "product() takes two or more named lists: each name is a member of the element",
                f"e.g. {USAGE['product']}",
            )
            return None
        names = [kw.name for kw in expr.kwargs]
        if len(set(names)) != len(names):
            ck.error(expr.span, "product() names each list once", f"e.g. {USAGE['product']}")
            return None
        parts = [
            (kw.name, _list(ck, kw.value, f"product() in {where}", element=False))
            for kw in expr.kwargs
        ]
        return None if any(part is None for _, part in parts) else ("#product", tuple(parts))
    if isinstance(expr, s.Call) and expr.callee.dotted == "distinct":
        return computed(ck, expr, where)
    if isinstance(expr, s.Call):
        ck.unknown(
            expr.callee.span,
            "list of an explode's items",
            expr.callee.dotted,
            ["product", "distinct"],
        )
        return None
    if not isinstance(expr, s.Ref):
        ck.error(
            expr.span,
            f"{where} is a path to a list or mapping in a source, got {describe(expr)}",
            "e.g. items = proc.questions",
        )
        return None
    ck.refer("source", expr.parts[0], expr.span, f"source in {where}")
    return expr.parts


def explode_id(ck: _Checker, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
    """``id = [cell.step.id, cell.event]``: several paths into the element, their values joined by the separator."""
    paths = []
    for item in expr.items if isinstance(expr, s.ListExpr) else ():
        if not isinstance(item, s.Ref):
            ck.error(
                item.span,
                f"{where}: each part of a joined id is a path into the element, got {describe(item)}",
                "e.g. id = [cell.step, cell.event]",
            )
            return None
        paths.append(item.parts)
    if len(paths) < 2:
        ck.error(
            expr.span,
            f"{where}: a joined id lists two or more paths into the element",
            "e.g. id = [cell.step, cell.event]",
        )
        return None
    return (EXPLODE_JOIN, *paths)


def conditions(ck: _Checker, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
    """``where``/``skip``: one condition or a list of them; each is any(...), all(...), equals(...) or a path to a boolean."""
    out = []
    for item in expr.items if isinstance(expr, s.ListExpr) else (expr,):
        if isinstance(item, s.Call) and item.callee.dotted in ("lookup", "distinct"):
            ck.error(
                item.span,
                f"{where}: {item.callee.dotted}() is not a condition",
                "a condition is any(...), all(...), equals(...) or a path to true/false",
            )
            return None
        if not isinstance(item, (s.Ref, s.Call)):
            ck.error(
                item.span,
                f"{where} is a condition, got {describe(item)}",
                f"e.g. {USAGE['equals']}, or {USAGE['any']}",
            )
            return None
        node = value(ck, item, where, element=True)
        if node is None:
            return None
        out.append(node)
    return tuple(out)


def check_explode(ck: _Checker, explode: m.ExplodeSpec) -> bool:
    """What needs the explode's name or its items known: a joined id's roots, ``id = key`` over a computed list."""
    if explode.id[:1] == (EXPLODE_JOIN,):
        for path in explode.id[1:]:
            if path[0] != explode.name:
                ck.error(
                    m.span_of(explode, "id"),
                    f"explode {explode.name!r}: each part of a joined id is a path into the element ({explode.name}.<key>), got {'.'.join(path)}",
                    f"e.g. id = [{explode.name}.step, {explode.name}.event]",
                )
                return False
    if explode.name in roots(explode.items):
        ck.error(
            m.span_of(explode, "items"),
            f"explode {explode.name!r}: items are read from the record, before there is an element {explode.name!r} to read",
            "the lists of items are paths into a source, e.g. product(step = rec.steps, event = rec.events)",
        )
        return False
    if is_computed(explode.items) and explode.id == EXPLODE_KEY:
        ck.error(
            m.span_of(explode, "id"),
            f"explode {explode.name!r}: id = key needs a mapping, but {render(explode.items)} is a list",
            "use id = index or a path",
        )
        return False
    return True


def check_field_type(ck: _Checker, binding: m.FieldBinding) -> None:
    """A computed field's declared type against what it computes: any/all/equals give bool, distinct a list."""
    node, ftype = binding.path, binding.type
    if not is_computed(node) or ftype.kind == "any":
        return
    if (
        node[0] == "#lookup" and node[4] and not ftype.accepts(node[5])
    ):  # a default the field cannot hold: a typo, or the wrong type
        ck.error(
            m.span_of(binding, "path"),
            f"field {binding.name!r} is {ftype.spelling()}, but its lookup's default {json.dumps(node[5])} is not a value of that type",
            "the default is the value of the items the list does not mention: one the field's type has",
        )
        return
    wanted = (
        FieldType("bool")
        if node[0] in CONDITIONS
        else FieldType("list")
        if node[0] == "#distinct"
        else None
    )
    if wanted is not None and not wanted.fits(ftype):
        ck.error(
            m.span_of(binding, "type"),
            f"field {binding.name!r} is {ftype.spelling()}, but {render(node)} gives {'true or false' if wanted.kind == 'bool' else 'a list'}",
            f"declare it `{binding.name}: {'bool' if wanted.kind == 'bool' else 'list(str)'} = ...`",
        )
