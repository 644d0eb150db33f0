"""The templates a spec may declare, by name: who looks each one up, and the variables it is given.

A ``template name { text = ... }`` block is found by its name at run time (``procbench models
judge`` renders ``judge`` and ``judge_image`` with :func:`procbench.runners.pmllm.judge.render_prompt`).  A
name nothing looks up would be ignored without a word, and a variable the renderer does not pass
fails only when a judge is already being called; the checker refuses both against this table.

A template's text comes from a spec, which is untrusted input: every template is parsed and rendered by the
one sandboxed environment below (:func:`environment`, which also bounds the memory a render may take), and
``procbench check`` refuses attribute or item access on anything but the variables the template is given, and
any call (:func:`access_problems`).
"""

from __future__ import annotations

import contextvars
import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import generate_lorem_ipsum

# the judge templates' names, defined without Jinja2 (intake reads them there)
from procbench.runners.runtime.judge_terms import JUDGE, JUDGE_IMAGE

JUDGE_VARIABLES = (
    "question",
    "answer",
    "cot",
    "severe",
)  # what procbench.runners.pmllm.judge.render_prompt passes


@dataclass(frozen=True)
class TemplateUse:
    name: str
    purpose: str
    variables: tuple[str, ...]


KNOWN: dict[str, TemplateUse] = {
    t.name: t
    for t in (
        TemplateUse(
            JUDGE,
            "the LLM judge's prompt for an answer to a textual question (procbench models judge)",
            JUDGE_VARIABLES,
        ),
        TemplateUse(
            JUDGE_IMAGE,
            "the LLM judge's prompt for an answer to a visual question (the image is attached)",
            JUDGE_VARIABLES,
        ),
    )
}


# the longest string or list a template's `*` may build, and the largest exponent of its `**`: a prompt is
# a few KiB, and without a bound `{{ "x" * 10**12 }}` would exhaust memory inside the sandbox.  MAX_REPEAT
# also bounds what one string method or filter may add to its input (a width, padding, separators), and
# MAX_OUTPUT what a whole render may produce (loops over loops): a prompt is the question, the answer and
# a few KiB of text around them, far below it
MAX_REPEAT = 1_000_000
MAX_EXPONENT = 1_000
MAX_OUTPUT = 1 << 24
# a render's wall-clock bound: loops over loops that print nothing never reach MAX_OUTPUT, yet
# `{% for a in question %}{% for b in question %}...` over a few KiB runs for hours; a prompt renders in milliseconds
MAX_RENDER_SECONDS = 5.0
LOOP_GUARD = "procbench_loop_deadline"  # the filter every {% for %}'s iterable is wrapped in at compile time (_Sandbox)
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "procbench_template_deadline", default=None
)

_NUMBERS = re.compile(r"\d+")


def _grow(what: str, extra: int) -> None:
    """SecurityError when ``what`` would add more than MAX_REPEAT characters or items to its input."""
    if extra > MAX_REPEAT:
        raise SecurityError(
            f"a template may not add over {MAX_REPEAT} characters or items with {what}"
        )


def _check_format(what: str, fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A format string (``%``, ``format``) may not ask for a width or precision over MAX_REPEAT, literally or as an argument."""
    if any(len(n) > 7 or int(n) > MAX_REPEAT for n in _NUMBERS.findall(fmt)):
        raise SecurityError(f"a template may not format with a width over {MAX_REPEAT} ({what})")
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_REPEAT:
            raise SecurityError(
                f"a template may not format with a width over {MAX_REPEAT} ({what})"
            )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_str_method(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse, before it runs, a str method whose arguments would make it build a huge string."""
    first = args[0] if args else None
    if name in ("ljust", "rjust", "center", "zfill"):
        _grow(f"str.{name}", _int(first) - len(text))
    elif name == "expandtabs":
        _grow(
            "str.expandtabs", _int(first if args else kwargs.get("tabsize", 8)) * text.count("\t")
        )
    elif name in ("format", "format_map"):
        _check_format(
            f"str.{name}",
            text,
            args
            if name == "format"
            else tuple(dict(first).values())
            if isinstance(first, dict)
            else (),
            kwargs,
        )
    elif (
        name == "replace"
        and len(args) >= 2
        and isinstance(args[0], str)
        and isinstance(args[1], str)
    ):
        old, new = args[0], args[1]
        _grow("str.replace", (len(text) + 1 if not old else len(text) // len(old)) * len(new))
    elif name == "join" and isinstance(first, Sized):
        _grow("str.join", len(text) * len(first))
    elif name == "translate" and isinstance(first, dict):
        longest = max((len(v) for v in first.values() if isinstance(v, str)), default=1)
        _grow("str.translate", len(text) * (longest - 1))


def _bounded_filters(filters: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """Jinja2's filters, those that take a size (a width, a count, a separator) checked before they run."""

    def guard(name: str, check: Callable[..., None]) -> None:
        original = filters[name]
        skip = (
            1 if getattr(original, "jinja_pass_arg", None) is not None else 0
        )  # the environment or eval context

        @functools.wraps(original)  # keeps jinja_pass_arg
        def bounded(*args: Any, **kwargs: Any) -> Any:
            check(*args[skip:], **kwargs)
            return original(*args, **kwargs)

        filters[name] = bounded

    def lines(s: Any) -> int:
        return str(s).count("\n") + 1

    guard(
        "center", lambda value, width=80: _grow("the center filter", _int(width) - len(str(value)))
    )
    guard(
        "indent",
        lambda s, width=4, first=False, blank=False: _grow(
            "the indent filter", (len(width) if isinstance(width, str) else _int(width)) * lines(s)
        ),
    )
    guard(
        "format",
        lambda value, *args, **kwargs: _check_format("the format filter", str(value), args, kwargs),
    )
    guard(
        "replace",
        lambda s, old, new, count=None: _check_str_method(
            "replace", str(s), (str(old), str(new)), {}
        ),
    )
    guard(
        "wordwrap",
        lambda s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True: _grow(
            "the wordwrap filter",
            (len(str(s)) // max(_int(width), 1) + lines(s)) * len(wrapstring or "\n"),
        ),
    )
    guard(
        "batch", lambda value, linecount, fill_with=None: _grow("the batch filter", _int(linecount))
    )
    guard("slice", lambda value, slices, fill_with=None: _grow("the slice filter", _int(slices)))
    guard(
        "join",
        lambda value, d="", attribute=None: _grow("the join filter", len(str(d)) * len(value))
        if hasattr(value, "__len__")
        else None,
    )
    return filters


def _past_deadline() -> None:
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise SecurityError(
            f"a template may not render for more than {MAX_RENDER_SECONDS:g} seconds (loops over loops?)"
        )


def _loop_deadline(iterable: Iterable[Any]) -> Iterator[Any]:
    """A loop's items, the render's deadline checked before each: an empty loop body yields no output to check at."""
    for item in iterable:
        _past_deadline()
        yield item


class _Bounded(jinja2.Template):
    """A template whose render stops at MAX_OUTPUT characters (a loop in a loop can print far more than its input)
    and after MAX_RENDER_SECONDS (checked at each output and at each loop iteration)."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        token = _DEADLINE.set(time.monotonic() + MAX_RENDER_SECONDS)
        try:
            parts, size = [], 0
            for part in self.generate(*args, **kwargs):
                size += len(part)
                if size > MAX_OUTPUT:
                    raise SecurityError(f"a template may not render over {MAX_OUTPUT} characters")
                _past_deadline()
                parts.append(part)
            return "".join(parts)
        finally:
            _DEADLINE.reset(token)


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox (no underscore attributes, no unsafe callables, no mutation of what a template
    is given), with memory bounded: `*`, `**` and `%`, the str methods and filters that pad or repeat, ``lipsum``,
    and the rendered text."""

    intercepted_binops = frozenset({"*", "**", "%"})
    template_class = _Bounded

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters = _bounded_filters(dict(self.filters))
        self.filters[LOOP_GUARD] = _loop_deadline

    def _generate(
        self,
        source: nodes.Template,
        name: str | None,
        filename: str | None,
        defer_init: bool = False,
    ) -> str:
        """Compile with every loop's iterable passed through the deadline check (the parsed tree the checker sees is not changed)."""
        for loop in source.find_all(nodes.For):
            loop.iter = nodes.Filter(
                loop.iter, LOOP_GUARD, [], [], None, None, lineno=loop.lineno
            ).set_environment(self)
        return super()._generate(source, name, filename, defer_init)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if (
                    isinstance(seq, (str, list, tuple))
                    and isinstance(count, int)
                    and len(seq) * count > MAX_REPEAT
                ):
                    raise SecurityError(
                        f"a template may not build a sequence over {MAX_REPEAT} items with '*'"
                    )
        elif operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"a template may not raise to a power over {MAX_EXPONENT}")
        elif operator == "%" and isinstance(left, str):
            _check_format(
                "'%'",
                left,
                right
                if isinstance(right, tuple)
                else tuple(right.values())
                if isinstance(right, dict)
                else (right,),
                {},
            )
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja2's signature)
        method = getattr(
            __obj, "__wrapped__", __obj
        )  # the sandbox wraps str.format to format safely
        target = getattr(method, "__self__", None)
        if isinstance(target, str):
            _check_str_method(getattr(method, "__name__", ""), target, args, kwargs)
        elif __obj is generate_lorem_ipsum:
            n = args[0] if args else kwargs.get("n", 5)
            words = max(_int(a) for a in (*args[2:4], kwargs.get("min", 0), kwargs.get("max", 100)))
            _grow("lipsum", _int(n) * max(words, 100) * 10)
        return super().call(__context, __obj, *args, **kwargs)


class RenderRefused(SecurityError):
    """A spec template that fails at render (a sandbox limit, a filter given the wrong type): one line, the template named."""


def render(template: jinja2.Template, what: str, **variables: Any) -> str:
    """``template`` rendered with ``variables``; any failure of the template's own making is a RenderRefused naming it
    (a template is untrusted input: its failure is a message, never a traceback)."""
    try:
        return template.render(**variables)
    except (
        jinja2.TemplateError,
        TypeError,
        ValueError,
        AttributeError,
        LookupError,
        ArithmeticError,
        RecursionError,
    ) as exc:
        detail = (
            exc.message if isinstance(exc, jinja2.TemplateError) else f"{type(exc).__name__}: {exc}"
        )
        raise RenderRefused(f"{what} could not be rendered: {detail}") from None


@functools.cache
def environment() -> jinja2.Environment:
    """The one environment every spec template is parsed and rendered with (a sandbox; strict about undefined names)."""
    return _Sandbox(autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


_WHAT = {
    "Const": "a literal",
    "List": "a literal",
    "Tuple": "a literal",
    "Dict": "a literal",
    "Filter": "a filter's result",
    "Call": "a call's result",
}
_LOADS = (
    nodes.Include,
    nodes.Import,
    nodes.FromImport,
    nodes.Extends,
)  # need a loader; templates have none
# {% set %} is refused too: `{% set a = answer ~ answer %}{% set b = a ~ a %}...` doubles a string per line,
# and Jinja's `~` cannot be bounded in the sandbox; a template only prints what it is given
_STATEMENTS = (nodes.Assign, nodes.AssignBlock)


def access_problems(
    parsed: nodes.Template, variables: tuple[str, ...]
) -> list[tuple[int, str, str]]:
    """(line in the template, the text at fault, message) for each chain of attribute or item accesses whose
    object is not one of ``variables`` (``cycler.__init__``, a name set inside the template, a literal, a call's
    result) or that reaches an underscore name, for each include/import/extends, and for each call (a method,
    a global such as ``range``, a macro) not already refused as such a chain; one per chain. An empty list: the
    template only reads what it is given."""
    problems: list[tuple[int, str, str]] = []
    inner: set[int] = set()  # the accesses inside a chain already looked at (`a.b.c` is one chain)
    faulty: set[int] = (
        set()
    )  # the outermost access of each chain refused: a call of it is that one mistake
    for node in parsed.find_all((nodes.Getattr, nodes.Getitem, *_LOADS, *_STATEMENTS)):
        if isinstance(node, _LOADS):
            kind = type(node).__name__.lower()
            problems.append((node.lineno, kind, f"{kind} is not available in spec templates"))
            continue
        if isinstance(node, _STATEMENTS):
            problems.append(
                (
                    node.lineno,
                    "set",
                    "set is not available in spec templates (a template prints its variables)",
                )
            )
            continue
        if id(node) in inner:
            continue
        keys, root = [], node
        while isinstance(root, (nodes.Getattr, nodes.Getitem)):
            inner.add(id(root))
            keys.append(
                root.attr
                if isinstance(root, nodes.Getattr)
                else (root.arg.value if isinstance(root.arg, nodes.Const) else None)
            )
            root = root.node
        if not (isinstance(root, nodes.Name) and root.name in variables):
            what = (
                root.name
                if isinstance(root, nodes.Name)
                else _WHAT.get(type(root).__name__, "an expression")
            )
            described = repr(what) if isinstance(root, nodes.Name) else what
            problems.append(
                (
                    node.lineno,
                    what,
                    f"attribute or item access on {described}: only the variables the template is given ({', '.join(variables)}) may be accessed",
                )
            )
            faulty.add(id(node))
            continue
        internal = next(
            (k for k in reversed(keys) if isinstance(k, str) and k.startswith("_")), None
        )
        if internal is not None:
            problems.append(
                (
                    node.lineno,
                    internal,
                    f"access to {internal!r} is not allowed (names starting with '_' are internal)",
                )
            )
            faulty.add(id(node))
    # a template prints what it is given: no calls at all (`question.ljust(10**9)`, `range(...)`, `lipsum(...)`,
    # macros), so nothing it runs can build a huge value; the sandbox bounds them at render time as well
    for call in parsed.find_all(nodes.Call):
        if id(call.node) in faulty:
            continue
        callee = call.node
        name = (
            callee.attr
            if isinstance(callee, nodes.Getattr)
            else callee.name
            if isinstance(callee, nodes.Name)
            else ""
        )
        what, shown = (
            (f"{name}(", f"{name}(...)") if name else ("(", "a call")
        )  # `what` with its bracket: the call, not the name elsewhere
        problems.append(
            (
                call.lineno,
                what,
                f"{shown}: calls are not available in spec templates (a template prints its variables; use filters such as |trim, |upper)",
            )
        )
    problems.sort(key=lambda problem: problem[0])  # stable: in the template's order, line by line
    return problems
