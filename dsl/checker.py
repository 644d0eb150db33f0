"""Syntax tree → typed :class:`dsl.model.TaskSpec`, or every error found, each with a position.

The checker resolves ``extends`` (with cycle detection), substitutes ``params.*``, checks every
block and attribute against the language's schema, resolves component names in the registry and
type-checks their arguments.  Unknown names get a did-you-mean; unused bindings are warnings.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any


from dsl import model as m
from dsl import syntax as s
from dsl.errors import Diagnostic, SpecError
from dsl.parser import parse, parse_file
from runners import registry

# ----------------------------------------------------------------------------------------------
# The language's schema: for each block type, its attributes (name -> kind of value), nested
# block types, how many labels it takes and which attributes are required.


@dataclass(frozen=True)
class BlockSchema:
    attrs: dict[str, str] = field(default_factory=dict)  # "*" = any name
    blocks: dict[str, bool] = field(default_factory=dict)  # type -> may repeat
    labels: int = 0
    required: tuple[str, ...] = ()
    required_blocks: tuple[str, ...] = ()


SCHEMA: dict[str, BlockSchema] = {
    "task": BlockSchema(
        attrs={**{a: "str" for a in ("title", "version", "description", "citation", "url", "license", "benchmark", "extends", "primary")}, "rank_by": "list_str"},
        blocks={"params": False, "data": False, "predictions": False, "normaliser": True, "score": False, "metric": True, "slice": True, "reported": True, "template": True, "fetch": True, "import": True},
        labels=1,
        required=("title", "version", "primary"),
        required_blocks=("data", "predictions", "score"),
    ),
    "params": BlockSchema(attrs={"*": "literal"}),
    "data": BlockSchema(
        attrs={"splits": "list_str", "hidden": "list_str", "id": "label_expr", "reader": "call"},
        blocks={"source": True, "fields": False, "labels": False, "answer_label": True},
        required=("splits",),
    ),
    "source": BlockSchema(attrs={"format": "str", "path": "str", "key": "str", "splits": "list_str"}, labels=1, required=("format", "path")),
    "fields": BlockSchema(attrs={"*": "ref"}),
    "labels": BlockSchema(attrs={"*": "label_expr"}),
    "answer_label": BlockSchema(attrs={"field": "str", "items": "ref", "text": "str", "label": "str"}, labels=1, required=("field", "items", "text", "label")),
    "predictions": BlockSchema(attrs={"format": "str", "id": "str", "reader": "call", "extensions": "list_str"}, blocks={"schema": False}, required=("format",)),
    "schema": BlockSchema(attrs={"*": "type"}),
    "normaliser": BlockSchema(attrs={"steps": "list_call"}, labels=1, required=("steps",)),
    "score": BlockSchema(attrs={"aggregate": "call", "scorer": "call", "metadata": "object"}, blocks={"match": True}, required=("aggregate",)),
    "match": BlockSchema(
        attrs={
            "gold": "ref",
            "prediction": "ref",
            "filters": "list_call",
            "normaliser": "ref",
            "similarity": "call",
            "similarity_normaliser": "ref",
            "matcher": "call",
            "outputs": "list_str",
        },
        labels=1,
        required=("gold", "prediction", "similarity", "matcher", "outputs"),
    ),
    "metric": BlockSchema(attrs={"display": "str", "group": "str", "description": "str", "higher_is_better": "bool", "percent": "bool"}, labels=1),
    "slice": BlockSchema(attrs={"label": "str", "answer_label": "str", "display": "str"}, labels=1),
    "reported": BlockSchema(attrs={"split": "str", "source": "str", "values": "object", "slice": "list_str", "note": "str"}, labels=1, required=("split", "source", "values")),
    "template": BlockSchema(attrs={"text": "str"}, labels=1, required=("text",)),
    "import": BlockSchema(
        attrs={"kind": "str", "field": "str", "id": "list_str", "id_type": "str", "choices": "int", "separator": "str", "check": "call", "notes": "str"},
        labels=1,
        required=("kind", "field", "id"),
    ),
    "fetch": BlockSchema(
        attrs={"path": "str", "sha256": "str", "size": "int", "url": "str", "hub_repo": "str", "hub_file": "str", "revision": "str", "repo_type": "str", "splits": "list_str"},
        labels=1,
        required=("path", "sha256", "size"),
    ),
}

ENUMS = {
    ("source", "format"): ("jsonl", "json", "csv", "tsv"),
    ("predictions", "format"): ("jsonl", "csv", "tsv", "custom"),
    ("fetch", "repo_type"): ("dataset", "model", "space"),
    ("import", "kind"): ("choice", "text_list"),
    ("import", "id_type"): ("str", "int"),
}
SCALAR_TYPES = ("str", "int", "float", "bool", "any")


@dataclass
class CheckResult:
    spec: m.TaskSpec
    warnings: list[Diagnostic]
    source: str


class _Checker:
    def __init__(self, path: str, source: str):
        self.path = path
        self.source = source
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []

    # -- reporting ---------------------------------------------------------------------------
    def error(self, span: s.Span, message: str, hint: str = "") -> None:
        self.errors.append(Diagnostic(self.path, span, message, hint))

    def warn(self, span: s.Span, message: str, hint: str = "") -> None:
        self.warnings.append(Diagnostic(self.path, span, message, hint, severity="warning"))

    def unknown(self, span: s.Span, what: str, name: str, candidates: list[str], where: str = "") -> None:
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75) or difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
        if close:
            hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
        elif candidates:
            hint = "expected one of: " + ", ".join(sorted(candidates))
        else:
            hint = ""
        self.error(span, f"unknown {what} {name!r}" + (f" in {where}" if where else ""), hint)

    # -- structure ---------------------------------------------------------------------------
    def check_structure(self, block: s.Block) -> None:
        schema = SCHEMA[block.type]
        if len(block.labels) != schema.labels:
            want = "a name in quotes" if schema.labels == 1 else "no label"
            example = f'{block.type} "name" {{ ... }}' if schema.labels else f"{block.type} {{ ... }}"
            self.error(block.span, f"block {block.type!r} takes {want}", f"write `{example}`")
        seen_attrs: dict[str, s.Attribute] = {}
        seen_blocks: dict[tuple[str, tuple[str, ...]], s.Block] = {}
        for stmt in block.body:
            if isinstance(stmt, s.Attribute):
                if stmt.name in seen_attrs:
                    self.error(stmt.span, f"attribute {stmt.name!r} is set twice in this {block.type} block", f"first set on line {seen_attrs[stmt.name].span.line}")
                seen_attrs[stmt.name] = stmt
                if "*" not in schema.attrs and stmt.name not in schema.attrs:
                    nested = [b for b in schema.blocks]
                    self.unknown(stmt.span, "attribute", stmt.name, list(schema.attrs) + nested, where=f"a {block.type} block")
                else:
                    kind = schema.attrs.get(stmt.name, schema.attrs.get("*", "literal"))
                    self.check_value(stmt.value, kind, f"{block.type}.{stmt.name}", enum=ENUMS.get((block.type, stmt.name)))
            else:
                if stmt.type not in schema.blocks:
                    self.unknown(stmt.span, "block", stmt.type, list(schema.blocks) + [a for a in schema.attrs if a != "*"], where=f"a {block.type} block")
                    continue
                key = (stmt.type, stmt.labels)
                if key in seen_blocks or (not schema.blocks[stmt.type] and any(k[0] == stmt.type for k in seen_blocks)):
                    self.error(stmt.span, f"duplicate {stmt.type} block{' ' + repr(stmt.labels[0]) if stmt.labels else ''}")
                seen_blocks[key] = stmt
                self.check_structure(stmt)
        for name in schema.required:
            if name not in seen_attrs:
                self.error(block.span, f"{block.type} block is missing required attribute {name!r}", f"add `{name} = ...` inside the {block.type} block")
        for name in schema.required_blocks:
            if not any(k[0] == name for k in seen_blocks):
                self.error(block.span, f"{block.type} block is missing a {name!r} block", f"add `{name} {{ ... }}`")

    def check_value(self, value: s.Expr, kind: str, where: str, enum: tuple[str, ...] | None = None) -> None:
        expect = {
            "str": (s.Str,),
            "int": (s.Num,),
            "bool": (s.Bool,),
            "ref": (s.Ref,),
            "call": (s.Call,),
            "object": (s.ObjectExpr,),
            "list_str": (s.ListExpr,),
            "list_call": (s.ListExpr,),
            "label_expr": (s.Ref, s.Call),
            "type": (s.Ref, s.Call),
            "literal": (s.Str, s.Num, s.Bool, s.ListExpr, s.ObjectExpr),
        }[kind]
        if not isinstance(value, expect):
            names = {"str": "a string", "int": "a whole number", "bool": "true or false", "ref": "a name", "call": "a component call like name(...)", "object": "an object { key = value, ... }",
                     "list_str": "a list of strings", "list_call": "a list of calls", "label_expr": "a field path or map(...)", "type": "a type (str, int, float, bool, any, list(T), optional(T), enum(...))",
                     "literal": "a literal value"}
            self.error(value.span, f"{where} must be {names[kind]}, got {_kind_of(value)}", _value_hint(kind))
            return
        if kind == "list_str":
            for item in value.items:  # type: ignore[union-attr]
                if not isinstance(item, s.Str):
                    self.error(item.span, f"{where} must be a list of strings, got {_kind_of(item)}", 'write strings in double quotes, e.g. ["dev", "test"]')
        if kind == "list_call":
            for item in value.items:  # type: ignore[union-attr]
                if not isinstance(item, s.Call):
                    self.error(item.span, f"each element of {where} must be a call like name(...), got {_kind_of(item)}", f"write {_kind_example(item)}() with parentheses")
        if kind == "int" and isinstance(value, s.Num) and (not isinstance(value.value, int) or value.value < 0):
            self.error(value.span, f"{where} must be a whole number >= 0, got {value.value!r}")
        if enum and isinstance(value, s.Str) and value.value not in enum:
            self.unknown(value.span, f"value for {where}", value.value, list(enum))


# ---------------------------------------------------------------------------------------------
# helpers on expressions


def _kind_of(value: s.Expr) -> str:
    return {
        s.Str: "a string",
        s.Num: "a number",
        s.Bool: "a boolean",
        s.Ref: "a name",
        s.Call: "a call",
        s.ListExpr: "a list",
        s.ObjectExpr: "an object",
    }[type(value)]


def _kind_example(value: s.Expr) -> str:
    return value.dotted if isinstance(value, s.Ref) else "name"


def _value_hint(kind: str) -> str:
    return {
        "str": 'put the value in double quotes, e.g. "text"',
        "call": "components are called with parentheses, e.g. exact() or best_match(dedup = true)",
        "ref": "write the name without quotes",
        "list_str": 'e.g. ["dev", "test"]',
    }.get(kind, "")


def literal(value: s.Expr) -> Any:
    """A literal expression as a frozen Python value (lists → tuples, objects → tagged tuples)."""
    if isinstance(value, (s.Str, s.Num, s.Bool)):
        return value.value
    if isinstance(value, s.ListExpr):
        return tuple(literal(v) for v in value.items)
    if isinstance(value, s.ObjectExpr):
        return ("__object__", tuple((p.key, literal(p.value)) for p in value.pairs))
    if isinstance(value, s.Ref):
        return value.dotted
    raise TypeError(value)


# ---------------------------------------------------------------------------------------------
# extends and params


def _merge(parent: tuple[s.Attribute | s.Block, ...], child: tuple[s.Attribute | s.Block, ...]) -> tuple[s.Attribute | s.Block, ...]:
    """Child statements override the parent's: attributes by name, blocks by (type, labels), recursively."""
    out: list[s.Attribute | s.Block] = list(parent)

    def index_of(stmt: s.Attribute | s.Block) -> int | None:
        for i, existing in enumerate(out):
            if isinstance(stmt, s.Attribute) and isinstance(existing, s.Attribute) and existing.name == stmt.name:
                return i
            if isinstance(stmt, s.Block) and isinstance(existing, s.Block) and (existing.type, existing.labels) == (stmt.type, stmt.labels):
                return i
        return None

    for stmt in child:
        i = index_of(stmt)
        if i is None:
            out.append(stmt)
        elif isinstance(stmt, s.Block) and isinstance(out[i], s.Block):
            out[i] = replace(stmt, body=_merge(out[i].body, stmt.body))  # type: ignore[union-attr]
        else:
            out[i] = stmt
    return tuple(out)


def _substitute(expr: s.Expr, params: dict[str, s.Expr], on_unknown: Callable[[s.Ref], None]) -> s.Expr:
    if isinstance(expr, s.Ref) and expr.parts[0] == "params":
        if len(expr.parts) == 2 and expr.parts[1] in params:
            return params[expr.parts[1]]
        on_unknown(expr)
        return expr
    if isinstance(expr, s.Call):
        return replace(
            expr,
            args=tuple(_substitute(a, params, on_unknown) for a in expr.args),
            kwargs=tuple(replace(k, value=_substitute(k.value, params, on_unknown)) for k in expr.kwargs),
        )
    if isinstance(expr, s.ListExpr):
        return replace(expr, items=tuple(_substitute(i, params, on_unknown) for i in expr.items))
    if isinstance(expr, s.ObjectExpr):
        return replace(expr, pairs=tuple(replace(p, value=_substitute(p.value, params, on_unknown)) for p in expr.pairs))
    return expr


def _substitute_body(body: tuple[s.Attribute | s.Block, ...], params: dict[str, s.Expr], on_unknown: Callable[[s.Ref], None]) -> tuple[s.Attribute | s.Block, ...]:
    out: list[s.Attribute | s.Block] = []
    for stmt in body:
        if isinstance(stmt, s.Attribute):
            out.append(replace(stmt, value=_substitute(stmt.value, params, on_unknown)))
        elif stmt.type == "params":
            out.append(stmt)
        else:
            out.append(replace(stmt, body=_substitute_body(stmt.body, params, on_unknown)))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# components


def _type_ok(value: Any, annotation: Any) -> bool:
    if annotation is Any or annotation is inspect.Parameter.empty:
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return value in args
    if origin in (list, tuple):
        return isinstance(value, tuple) and (not args or all(_type_ok(v, args[0]) for v in value))
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        return any(_type_ok(value, a) for a in args)
    if annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is dict or origin is dict:
        return isinstance(value, tuple) and bool(value) and value[0] == "__object__"
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


class _SpecChecker(_Checker):
    def component(self, call: s.Call, kind: str) -> m.ComponentCall | None:
        name = call.callee.dotted
        try:
            comp = registry.get(kind, name)
        except registry.UnknownComponent as exc:
            candidates = registry.names(kind)
            close = exc.suggestions or difflib.get_close_matches(name, candidates, n=3)
            hint = ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else f"registered {kind}s: {', '.join(candidates)}"
            self.error(call.callee.span, f"unknown {kind} {name!r}", hint)
            return None
        params = list(comp.params)
        bound: dict[str, Any] = {}
        if len(call.args) > len(params):
            self.error(call.span, f"{name}() takes at most {len(params)} positional argument(s), got {len(call.args)}", _signature(comp))
            return None
        for param, arg in zip(params, call.args):
            bound[param.name] = (arg, literal(arg))
        for kw in call.kwargs:
            if comp.param(kw.name) is None:
                self.unknown(kw.span, f"parameter of {name}()", kw.name, [p.name for p in params])
                continue
            if kw.name in bound:
                self.error(kw.span, f"parameter {kw.name!r} of {name}() is given twice")
                continue
            bound[kw.name] = (kw.value, literal(kw.value))
        ok = True
        for param in params:
            if param.name not in bound:
                if param.required:
                    self.error(call.span, f"{name}() is missing required parameter {param.name!r} ({param.type_name()})", _signature(comp))
                    ok = False
                continue
            expr, value = bound[param.name]
            if isinstance(expr, (s.Ref, s.Call)):
                self.error(expr.span, f"parameter {param.name!r} of {name}() must be a literal {param.type_name()}, got {_kind_of(expr)}", "write a string, number, true/false, a list or an object")
                ok = False
            elif not _type_ok(value, param.type):
                self.error(expr.span, f"parameter {param.name!r} of {name}() must be {param.type_name()}, got {_kind_of(expr)}", _signature(comp))
                ok = False
        if not ok:
            return None
        return m.ComponentCall(kind, name, tuple((p.name, bound[p.name][1]) for p in params if p.name in bound))


def _signature(comp: registry.Component) -> str:
    parts = [f"{p.name}: {p.type_name()}" + ("" if p.required else f" = {p.default!r}") for p in comp.params]
    return f"signature: {comp.name}({', '.join(parts)})"


# ---------------------------------------------------------------------------------------------
# entry points


def _find_parent(name: str, near: Path, search: list[Path]) -> Path | None:
    for folder in [near.parent, *search]:
        candidate = folder / f"{name}.spec"
        if candidate.is_file():
            return candidate
    return None


def _load_with_extends(spec_file: s.SpecFile, checker: _SpecChecker, search: list[Path], chain: tuple[str, ...] = ()) -> s.Block | None:
    tasks = [b for b in spec_file.body if isinstance(b, s.Block) and b.type == "task"]
    for stmt in spec_file.body:
        if not (isinstance(stmt, s.Block) and stmt.type == "task"):
            checker.error(stmt.span, "only a `task \"name\" { ... }` block may appear at the top level of a spec", "move this inside the task block")
    if len(tasks) != 1:
        span = tasks[1].span if len(tasks) > 1 else s.Span(1, 1, 1, 1)
        checker.error(span, "a spec file holds exactly one task block" if tasks else "the spec has no task block", 'write `task "name" { ... }`')
        return None
    task = tasks[0]
    extends = task.attribute("extends")
    if extends is None:
        return task
    if not isinstance(extends.value, s.Str):
        checker.error(extends.value.span, "extends must be a string naming another task", 'e.g. extends = "openpi"')
        return None
    parent_name = extends.value.value
    if parent_name in chain or (task.labels and parent_name == task.labels[0]):
        checker.error(extends.value.span, f"extends cycle: {' -> '.join([*chain, parent_name])}", "a task cannot extend itself, directly or through others")
        return None
    parent_path = _find_parent(parent_name, Path(spec_file.path), search)
    if parent_path is None:
        here = [p.stem for p in Path(spec_file.path).parent.glob("*.spec")]
        checker.unknown(extends.value.span, "task to extend", parent_name, here)
        return None
    try:
        parent_file = parse_file(parent_path)
    except SpecError as exc:
        checker.errors.extend(exc.diagnostics)
        return None
    parent_checker = _SpecChecker(str(parent_path), parent_file.source)
    parent = _load_with_extends(parent_file, parent_checker, search, (*chain, task.labels[0] if task.labels else "?"))
    checker.errors.extend(parent_checker.errors)
    if parent is None:
        return None
    body = _merge(tuple(st for st in parent.body if not (isinstance(st, s.Attribute) and st.name == "extends")), task.body)
    return replace(task, body=body)


def check_text(source: str, path: str = "<spec>", search: list[Path] | None = None) -> CheckResult:
    """Parse and check spec text; raises :class:`SpecError` listing every error."""
    spec_file = parse(source, path)
    return _check(spec_file, search or [])


def check_file(path: str | Path, search: list[Path] | None = None) -> CheckResult:
    return _check(parse_file(path), search or [])


def _check(spec_file: s.SpecFile, search: list[Path]) -> CheckResult:
    checker = _SpecChecker(spec_file.path, spec_file.source)
    task = _load_with_extends(spec_file, checker, search)
    if task is None or checker.errors:
        raise SpecError(checker.errors or [Diagnostic(spec_file.path, s.Span(1, 1, 1, 1), "invalid spec")], spec_file.source)
    checker.check_structure(task)
    params_block = next(iter(task.blocks("params")), None)
    params = {a.name: a.value for a in params_block.attributes()} if params_block else {}
    used_params: set[str] = set()

    def unknown_param(ref: s.Ref) -> None:
        checker.unknown(ref.span, "parameter", ".".join(ref.parts[1:]), list(params))

    def tracking(ref: s.Ref) -> None:
        unknown_param(ref)

    class _Tracker(dict):  # records which params are used
        def __contains__(self, key: object) -> bool:
            found = dict.__contains__(self, key)
            if found:
                used_params.add(str(key))
            return found

    task = replace(task, body=_substitute_body(task.body, _Tracker(params), tracking))
    if checker.errors:
        raise SpecError(checker.errors, spec_file.source)
    from dsl.build import build_model  # the model builder is long; it lives in its own module

    spec = build_model(task, checker, {k: literal(v) for k, v in params.items()}, spec_file.path)
    for name, value in params.items():
        if name not in used_params:
            checker.warn(value.span, f"parameter {name!r} is never used", "remove it or refer to it as params." + name)
    if checker.errors or spec is None:
        raise SpecError(checker.errors, spec_file.source)
    return CheckResult(spec, checker.warnings, spec_file.source)
