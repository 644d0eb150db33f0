"""The templates a spec may declare, by name: who looks each one up, and the variables it is given.

A ``template name { text = ... }`` block is found by its name at run time (``procbench models
judge`` renders ``judge`` and ``judge_image`` with :func:`runners.pmllm.judge.render_prompt`).  A
name nothing looks up would be ignored without a word, and a variable the renderer does not pass
fails only when a judge is already being called; the checker refuses both against this table.

A template's text comes from a spec, which is untrusted input: every template is parsed and rendered by the
one sandboxed environment below (:func:`environment`), and ``procbench check`` refuses attribute or item
access on anything but the variables the template is given (:func:`access_problems`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

JUDGE = "judge"
JUDGE_IMAGE = "judge_image"
JUDGE_VARIABLES = ("question", "answer", "cot", "severe")  # what runners.pmllm.judge.render_prompt passes


@dataclass(frozen=True)
class TemplateUse:
    name: str
    purpose: str
    variables: tuple[str, ...]


KNOWN: dict[str, TemplateUse] = {
    t.name: t
    for t in (
        TemplateUse(JUDGE, "the LLM judge's prompt for an answer to a textual question (procbench models judge)", JUDGE_VARIABLES),
        TemplateUse(JUDGE_IMAGE, "the LLM judge's prompt for an answer to a visual question (the image is attached)", JUDGE_VARIABLES),
    )
}


# the longest string or list a template's `*` may build, and the largest exponent of its `**`: a prompt is
# a few KiB, and without a bound `{{ "x" * 10**12 }}` would exhaust memory inside the sandbox
MAX_REPEAT = 1_000_000
MAX_EXPONENT = 1_000


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox (no underscore attributes, no unsafe callables, no mutation of what a template
    is given), with `*` and `**` bounded."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int) and len(seq) * count > MAX_REPEAT:
                    raise SecurityError(f"a template may not build a sequence over {MAX_REPEAT} items with '*'")
        elif operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"a template may not raise to a power over {MAX_EXPONENT}")
        return super().call_binop(context, operator, left, right)


@functools.cache
def environment() -> jinja2.Environment:
    """The one environment every spec template is parsed and rendered with (a sandbox; strict about undefined names)."""
    return _Sandbox(autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


_WHAT = {"Const": "a literal", "List": "a literal", "Tuple": "a literal", "Dict": "a literal", "Filter": "a filter's result", "Call": "a call's result"}
_LOADS = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)  # need a loader; templates have none


def access_problems(parsed: nodes.Template, variables: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """(line in the template, the text at fault, message) for each chain of attribute or item accesses whose
    object is not one of ``variables`` (``cycler.__init__``, a name set inside the template, a literal, a call's
    result) or that reaches an underscore name, and for each include/import/extends; one per chain. An empty
    list: the template only reads what it is given."""
    problems: list[tuple[int, str, str]] = []
    inner: set[int] = set()  # the accesses inside a chain already looked at (`a.b.c` is one chain)
    for node in parsed.find_all((nodes.Getattr, nodes.Getitem, *_LOADS)):
        if isinstance(node, _LOADS):
            kind = type(node).__name__.lower()
            problems.append((node.lineno, kind, f"{kind} is not available in spec templates"))
            continue
        if id(node) in inner:
            continue
        keys, root = [], node
        while isinstance(root, (nodes.Getattr, nodes.Getitem)):
            inner.add(id(root))
            keys.append(root.attr if isinstance(root, nodes.Getattr) else (root.arg.value if isinstance(root.arg, nodes.Const) else None))
            root = root.node
        if not (isinstance(root, nodes.Name) and root.name in variables):
            what = root.name if isinstance(root, nodes.Name) else _WHAT.get(type(root).__name__, "an expression")
            described = repr(what) if isinstance(root, nodes.Name) else what
            problems.append((node.lineno, what, f"attribute or item access on {described}: only the variables the template is given ({', '.join(variables)}) may be accessed"))
            continue
        internal = next((k for k in reversed(keys) if isinstance(k, str) and k.startswith("_")), None)
        if internal is not None:
            problems.append((node.lineno, internal, f"access to {internal!r} is not allowed (names starting with '_' are internal)"))
    return problems
