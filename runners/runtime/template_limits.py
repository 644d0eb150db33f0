"""What `procbench check` refuses in a template's filters and tests because the sandbox would refuse it at render.

:mod:`procbench.runners.runtime.templates` bounds a render (the sandbox refuses underscore attributes, sizes past MAX_REPEAT, powers
past MAX_EXPONENT); without this walk a spec with ``question|attr('__class__')`` or ``question|center(10**9)``
passes `check` and fails only when `judge` renders it.  Each rule here mirrors one the sandbox applies, on what can
be known before the render: filter and test names, attribute names given as text, and sizes written as numbers
(``10**9`` is folded; a size computed from a variable is left to the sandbox).
"""

from __future__ import annotations

import re
import string
from typing import Any

from jinja2 import nodes

from procbench.runners.runtime.templates import LOOP_GUARD, MAX_EXPONENT, MAX_REPEAT, environment

Problem = tuple[
    int, str, str
]  # (line in the template, the text at fault, message), as access_problems gives

# filters that read an attribute named by an argument: (positional index of it, or None) and the keyword
_ATTRIBUTE_ARGS: dict[str, tuple[int | None, str]] = {
    "attr": (0, "name"),
    "selectattr": (0, "attribute"),
    "rejectattr": (0, "attribute"),
    "map": (None, "attribute"),
    "sort": (None, "attribute"),
    "groupby": (0, "attribute"),
    "sum": (None, "attribute"),
    "unique": (None, "attribute"),
    "min": (None, "attribute"),
    "max": (None, "attribute"),
    "join": (None, "attribute"),
}
# filters whose argument is a size the sandbox bounds by MAX_REPEAT: (positional index, keyword)
_SIZE_ARGS: dict[str, tuple[int, str]] = {
    "center": (0, "width"),
    "indent": (0, "width"),
    "batch": (0, "linecount"),
    "slice": (0, "slices"),
}
_PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\d*)(?:\.(\d+))?[hlL]?[diouxXeEfFgGcrsa%]")
_NOT_FOLDED = object()


def _fold(node: nodes.Node | None) -> Any:
    """The value of a constant expression (``10**9``, ``-3``, ``'x'``), or _NOT_FOLDED; never builds a huge number."""
    if isinstance(node, nodes.Const):
        return node.value
    if isinstance(node, nodes.Neg):
        value = _fold(node.node)
        return (
            -value
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else _NOT_FOLDED
        )
    if isinstance(node, (nodes.Pow, nodes.Mul, nodes.Add, nodes.Sub)):
        left, right = _fold(node.left), _fold(node.right)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right)):
            return _NOT_FOLDED
        if isinstance(node, nodes.Pow):
            # past MAX_EXPONENT the sandbox refuses the power itself (reported by _operator_problem), and a result of
            # more than a few thousand bits is far past every size limit: neither is computed
            if right < 0 or right > MAX_EXPONENT or abs(left).bit_length() * right > 4096:
                return _NOT_FOLDED
            return left**right
        return (
            left * right
            if isinstance(node, nodes.Mul)
            else left + right
            if isinstance(node, nodes.Add)
            else left - right
        )
    return _NOT_FOLDED


def _argument(
    node: nodes.Filter | nodes.Test, index: int | None, keyword: str
) -> nodes.Expr | None:
    for pair in node.kwargs:
        if pair.key == keyword:
            return pair.value
    return node.args[index] if index is not None and index < len(node.args) else None


def _attribute_problem(filter_name: str, value: nodes.Expr) -> str | None:
    """Why an attribute named by text (``attr('__class__')``, ``map(attribute='a._b')``) is refused, or None."""
    name = _fold(value)
    if isinstance(name, int) and not isinstance(name, bool):
        return None  # an item index (`sort(attribute=0)`)
    if not isinstance(name, str):
        return f"|{filter_name}: the attribute must be written as text, so that `check` can see which it is"
    internal = next((part for part in name.split(".") if part.startswith("_")), None)
    if internal is not None:
        return f"|{filter_name}: access to {internal!r} is not allowed (names starting with '_' are internal)"
    return None


def _format_problem(node: nodes.Filter) -> str | None:
    """The format filter formats with ``%`` (Python's printf style): its text must be known, without ``{}`` fields that
    reach attributes or items, with no width over MAX_REPEAT."""
    text = _fold(node.node)
    if not isinstance(text, str):
        return None  # a variable's text: the sandbox checks widths at render
    for _, field, spec, _ in string.Formatter().parse(text) if "{" in text else ():
        if field and ("." in field or "[" in field):
            return f"|format: the field {{{field}}} reaches an attribute or item (the format filter formats with %, e.g. '%s')"
    for match in _PERCENT.finditer(text):
        if any(n and (len(n) > 7 or int(n) > MAX_REPEAT) for n in match.groups()):
            return f"|format: a width over {MAX_REPEAT} (the sandbox refuses it)"
    if (node.args or node.kwargs) and not _PERCENT.search(text.replace("%%", "")):
        return "|format: the text has no %-placeholder for its arguments (the format filter formats with %, e.g. '%s', not '{}')"
    return None


def _size_problem(filter_name: str, node: nodes.Filter) -> str | None:
    if filter_name in _SIZE_ARGS:
        index, keyword = _SIZE_ARGS[filter_name]
        value = _argument(node, index, keyword)
        size = _fold(value) if value is not None else None
        if isinstance(size, int) and not isinstance(size, bool) and size > MAX_REPEAT:
            return f"|{filter_name}({size}): a template may not add over {MAX_REPEAT} characters or items (the sandbox refuses it)"
    if filter_name == "wordwrap":
        wrap = _argument(node, 2, "wrapstring")
        text = _fold(wrap) if wrap is not None else None
        if isinstance(text, str) and len(text) > MAX_REPEAT:
            return f"|wordwrap: a wrapstring over {MAX_REPEAT} characters (the sandbox refuses it)"
    return None


def _operator_problem(node: nodes.BinExpr) -> str | None:
    """``**`` past MAX_EXPONENT and ``*`` building over MAX_REPEAT items, with constant operands: refused at render."""
    left, right = _fold(node.left), _fold(node.right)
    if (
        isinstance(node, nodes.Pow)
        and isinstance(right, (int, float))
        and not isinstance(right, bool)
        and abs(right) > MAX_EXPONENT
    ):
        return f"a power over {MAX_EXPONENT} (the sandbox refuses it)"
    if isinstance(node, nodes.Mul):
        for seq, count in ((left, right), (right, left)):
            if (
                isinstance(seq, str)
                and isinstance(count, int)
                and not isinstance(count, bool)
                and len(seq) * count > MAX_REPEAT
            ):
                return (
                    f"'*' building a string over {MAX_REPEAT} characters (the sandbox refuses it)"
                )
    return None


def _named_problem(kind: str, name: Any, known: dict[str, Any]) -> str | None:
    if not isinstance(name, str):
        return f"the {kind} to apply must be written as text, so that `check` can see which it is"
    if name not in known or name == LOOP_GUARD:
        return f"no {kind} named {name!r}"
    return None


def _filter_problems(node: nodes.Filter) -> list[str]:
    env = environment()
    problems = []
    name = node.name
    unknown = _named_problem("filter", name, env.filters)
    if unknown:
        return [unknown]
    position, keyword = _ATTRIBUTE_ARGS.get(name, (None, ""))
    attribute = _argument(node, position, keyword) if keyword else None
    if attribute is not None:
        problems.append(_attribute_problem(name, attribute))
    if name == "attr" and attribute is None:
        problems.append(
            "|attr: the attribute must be written as text, so that `check` can see which it is"
        )
    if name in ("map", "select", "reject") and attribute is None and node.args:
        # map('upper'), select('odd'): the first argument names a filter or test applied to each item, with the rest
        kind, table = ("filter", env.filters) if name == "map" else ("test", env.tests)
        applied = _fold(node.args[0])
        problems.append(_named_problem(kind, applied, table))
        if kind == "filter" and isinstance(applied, str) and applied in env.filters:
            inner = nodes.Filter(
                node.node, applied, node.args[1:], node.kwargs, None, None, lineno=node.lineno
            )
            problems.extend(_filter_problems(inner))
    if name in ("selectattr", "rejectattr") and len(node.args) > 1:
        problems.append(_named_problem("test", _fold(node.args[1]), env.tests))
    if name == "format":
        problems.append(_format_problem(node))
    problems.append(_size_problem(name, node))
    return [p for p in problems if p]


def filter_problems(parsed: nodes.Template) -> list[Problem]:
    """(line, text at fault, message) for each filter, test or constant operation in ``parsed`` that the sandbox would
    refuse at render (or that names no filter or test at all), in the template's order."""
    env = environment()
    problems: list[Problem] = []
    for node in parsed.find_all((nodes.Filter, nodes.Test, nodes.Pow, nodes.Mul)):
        if isinstance(node, nodes.Filter):
            problems.extend((node.lineno, node.name, message) for message in _filter_problems(node))
        elif isinstance(node, nodes.Test):
            unknown = _named_problem("test", node.name, env.tests)
            if unknown:
                problems.append((node.lineno, node.name, unknown))
        elif isinstance(node, (nodes.Pow, nodes.Mul)):
            message = _operator_problem(node)
            if message:
                problems.append(
                    (node.lineno, "**" if isinstance(node, nodes.Pow) else "*", message)
                )
    problems.sort(key=lambda problem: problem[0])
    return problems
