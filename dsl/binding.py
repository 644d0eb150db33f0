"""Syntax block + model dataclass → the typed object, validated and constructed in one pass.

The dataclasses in :mod:`procbench.dsl.model` are the schema: their field metadata says how each part is
written (attribute, label, nested block, free-form entries) and their annotations what it holds.
:class:`Binder` walks a block once, reads every statement against that schema, records every name
the spec refers to (resolved by :mod:`procbench.dsl.checker` once all declarations are known), and reports
each mistake once, at its position, with a hint.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.errors import Diagnostic
from procbench.runners.runtime import registry
from procbench.runners.runtime.predictions import COLLECTION_KINDS, SCALAR_KINDS, FieldType

TYPE_SPELLINGS = [
    *SCALAR_KINDS,
    "list(T)",
    "ordering(T)",
    "set(T)",
    "optional(T)",
    "enum(v1, v2, ...)",
]

# Blocks whose written form differs from what the model keeps (the checker expands them).
WRITTEN_AS: dict[str, type] = {
    "metric": m.MetricBlock,
    "reported": m.ReportedTable,
    "fetch": m.FetchBlock,
}


@dataclass(frozen=True)
class Reference:
    """A bare name the spec uses, resolved in ``namespace`` after binding."""

    namespace: str
    name: str
    span: s.Span
    what: str = ""  # how the message calls it, e.g. "metric in rank_by"


def describe(value: s.Expr) -> str:
    return {
        s.Str: "a string",
        s.Num: "a number",
        s.Bool: "true/false",
        s.Ref: "a name",
        s.Call: "a call",
        s.ListExpr: "a list",
        s.ObjectExpr: "an object",
    }[type(value)]


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


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(m))


def _strip_optional(annotation: Any) -> Any:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return args[0]
    return annotation


class Binder:
    """Collects diagnostics and references while binding one spec file."""

    def __init__(self, path: str, source: str):
        self.path = path
        self.source = source
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self.references: list[Reference] = []
        self._reported: set[str] = set()
        self._strays: set[int] = (
            set()
        )  # blocks holding an unknown attribute or block: their "needs `x = ...`" is that typo again
        self.quiet_names: set[str] = (
            set()
        )  # what a misspelt block declares (`nomaliser content`): its uses are that one typo again

    # -- reporting ---------------------------------------------------------------------------
    def error(self, span: s.Span, message: str, hint: str = "") -> None:
        self.errors.append(Diagnostic(self.path, span, message, hint, file_text=self.source))

    def warn(self, span: s.Span, message: str, hint: str = "") -> None:
        self.warnings.append(
            Diagnostic(self.path, span, message, hint, severity="warning", file_text=self.source)
        )

    def unknown(
        self,
        span: s.Span,
        what: str,
        name: str,
        candidates: list[str] | tuple[str, ...],
        where: str = "",
    ) -> None:
        """An unknown name, reported once (a field is also a score field): one typo, one error."""
        key = name
        if key in self._reported or name in self.quiet_names:
            return
        self._reported.add(key)
        candidates = [c for c in candidates if c]
        close = difflib.get_close_matches(
            name, candidates, n=1, cutoff=0.75
        ) or difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
        if close:
            hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
        elif candidates:
            shown = sorted(candidates)
            hint = (
                "expected one of: "
                + ", ".join(shown[:12])
                + (f", ... ({len(shown)} in all)" if len(shown) > 12 else "")
            )
        else:
            hint = ""
        self.error(span, f"unknown {what} {name!r}" + (f" in {where}" if where else ""), hint)

    def refer(self, namespace: str, name: str, span: s.Span, what: str = "") -> None:
        self.references.append(
            Reference(namespace, name, span, what or namespace.replace("_", " "))
        )

    @staticmethod
    def stray_names(cls: type, blk: s.Block) -> set[str]:
        """The names declared by the blocks in ``blk`` that ``cls`` has no place for (a misspelt block type): labels and attributes."""
        tags = {
            f.metadata.get("tag") or f.name
            for f in dataclasses.fields(cls)
            if f.metadata.get("syntax") in ("block", "blocks", "entries")
        }
        out: set[str] = set()
        for stmt in blk.body:
            if isinstance(stmt, s.Block) and stmt.type not in tags:
                out.update(str(label) for label in stmt.labels)
                out.update(a.name for a in stmt.attributes())
        return out

    # -- blocks ------------------------------------------------------------------------------
    def bind(self, cls: type, blk: s.Block, parser: Any) -> Any:
        """The dataclass ``cls`` read from ``blk``; ``None`` when the block has errors (already reported).

        ``parser`` supplies the ``parse_<name>`` methods named by field metadata (the checker).
        """
        fields = [f for f in dataclasses.fields(cls) if f.metadata.get("syntax")]
        hints = _hints(cls)
        by_key = {
            f.metadata.get("key") or f.name: f for f in fields if f.metadata["syntax"] == "attr"
        }
        by_tag = {
            f.metadata.get("tag") or f.name: f
            for f in fields
            if f.metadata["syntax"] in ("block", "blocks", "entries")
        }
        label_fields = [f for f in fields if f.metadata["syntax"] == "label"]
        errors_before = len(self.errors)
        values: dict[str, Any] = {}
        where: dict[str, s.Span] = {"": blk.span}

        if not blk.labels and label_fields and label_fields[0].metadata.get("optional"):
            label_fields = []
        if len(blk.labels) != len(label_fields):
            if label_fields:
                example = (
                    f"{blk.type} name {{ ... }}"
                    if label_fields[0].metadata["name"]
                    else f'{blk.type} "text" {{ ... }}'
                )
                self.error(blk.span, f"a {blk.type} block takes a name", f"write `{example}`")
            else:
                self.error(
                    blk.span, f"a {blk.type} block takes no name", f"write `{blk.type} {{ ... }}`"
                )
            return None
        for f, text, bare, span in zip(
            label_fields,
            blk.labels,
            blk.bare_labels or (True,) * len(blk.labels),
            blk.label_spans or (blk.span,) * len(blk.labels),
        ):
            if f.metadata["name"] and not bare:
                self.error(
                    span,
                    f"a {blk.type}'s name is written without quotes",
                    f"write `{blk.type} {text} {{ ... }}`"
                    if text.isidentifier()
                    else "names are letters, digits, _ and -",
                )
            elif not f.metadata["name"] and bare:
                self.error(
                    span,
                    f"a {blk.type} block is labelled with quoted text",
                    f'write `{blk.type} "{text}" {{ ... }}`',
                )
            values[f.name] = text
            where["<label>"] = span

        statements: dict[str, list[s.Attribute | s.Block]] = {}
        for stmt in blk.body:
            if isinstance(stmt, s.Attribute):
                declared = by_key.get(stmt.name)
                if declared is None:
                    self.unknown(
                        stmt.span,
                        "attribute",
                        stmt.name,
                        [*by_key, *by_tag],
                        where=f"a {blk.type} block",
                    )
                    self._strays.add(id(blk))
                    continue
                if stmt.type is not None:
                    self.error(
                        stmt.type.span,
                        f"{stmt.name!r} takes no type annotation",
                        "types are written on data fields: `answers: list(str) = gold.answers`",
                    )
                    continue
            else:
                declared = by_tag.get(stmt.type)
                if declared is None:
                    self.unknown(
                        stmt.span,
                        "block",
                        stmt.type,
                        [*by_tag, *by_key],
                        where=f"a {blk.type} block",
                    )
                    self._strays.add(id(blk))
                    continue
            earlier = statements.setdefault(declared.name, [])
            if earlier and (
                isinstance(stmt, s.Attribute) or declared.metadata["syntax"] in ("block", "entries")
            ):
                kind = "attribute" if isinstance(stmt, s.Attribute) else "block"
                self.error(
                    stmt.span,
                    f"{kind} {getattr(stmt, 'name', None) or stmt.type!r} is given twice in this {blk.type} block",
                    f"first on line {earlier[0].span.line}",
                )
                continue
            earlier.append(stmt)

        for f in fields:  # in the dataclass's order: declarations before what refers to them
            self._bind_field(f, statements.get(f.name, []), blk, hints, values, where, parser)
            hook = getattr(parser, f"after_{cls.__name__}_{f.name}", None)
            if hook is not None and f.name in values:
                values[f.name] = hook(values[f.name])
        if len(self.errors) > errors_before:
            return None
        if "at" in {f.name for f in dataclasses.fields(cls)}:
            values["at"] = where
        try:
            return cls(**values)
        except TypeError:  # a required part failed to read (already reported)
            return None

    def _bind_field(
        self,
        f: dataclasses.Field,
        found: list[s.Attribute | s.Block],
        blk: s.Block,
        hints: dict[str, Any],
        values: dict[str, Any],
        where: dict[str, s.Span],
        parser: Any,
    ) -> None:
        syntax = f.metadata["syntax"]
        if syntax == "attr":
            if not found:
                if f.default is dataclasses.MISSING and id(blk) not in self._strays:
                    key = f.metadata.get("key") or f.name
                    self.error(
                        blk.span,
                        f"the {blk.type} block needs `{key} = ...`",
                        f.metadata.get("doc") or "",
                    )
                return
            (stmt,) = found
            assert isinstance(stmt, s.Attribute)
            where[f.name] = stmt.value.span
            value = self.value(stmt.value, hints[f.name], f, parser, f"{blk.type}.{stmt.name}")
            if value is not _FAILED:
                values[f.name] = value
        elif syntax == "block":
            if not found:
                if f.metadata.get("required") and id(blk) not in self._strays:
                    self.error(
                        blk.span,
                        f"the {blk.type} block needs a {f.metadata['tag']} block",
                        f"add `{f.metadata['tag']} {{ ... }}`",
                    )
                return
            (stmt,) = found
            assert isinstance(stmt, s.Block)
            where[f.name] = stmt.span
            bound = self.bind(
                WRITTEN_AS.get(stmt.type) or _strip_optional(hints[f.name]), stmt, parser
            )
            if bound is not None:
                values[f.name] = bound
        elif syntax == "blocks":
            cls_inner = WRITTEN_AS.get(f.metadata["tag"]) or typing.get_args(hints[f.name])[0]
            bound_all = [
                self.bind(cls_inner, stmt, parser) for stmt in found if isinstance(stmt, s.Block)
            ]
            values[f.name] = tuple(b for b in bound_all if b is not None)
            if found:
                where[f.name] = found[0].span
        elif syntax == "entries":
            if not found:
                return
            (stmt,) = found
            assert isinstance(stmt, s.Block)
            where[f.name] = stmt.span
            if stmt.labels:
                self.error(
                    stmt.span,
                    f"a {stmt.type} block takes no name",
                    f"write `{stmt.type} {{ ... }}`",
                )
                return
            entries = []
            for entry in stmt.body:
                if isinstance(entry, s.Block):
                    self.error(
                        entry.span,
                        f"a {stmt.type} block holds `name = value` statements, not blocks",
                    )
                    continue
                parsed = getattr(parser, "parse_" + f.metadata["parse"])(entry)
                if parsed is not None:
                    entries.append(parsed)
            values[f.name] = tuple(entries)
            names = [e.name for e in stmt.body if isinstance(e, s.Attribute)]
            for i, entry in enumerate(stmt.body):
                if isinstance(entry, s.Attribute) and entry.name in names[:i]:
                    self.error(
                        entry.span, f"{entry.name!r} is given twice in this {stmt.type} block"
                    )

    # -- values ------------------------------------------------------------------------------
    def value(
        self, expr: s.Expr, annotation: Any, f: dataclasses.Field, parser: Any, where: str
    ) -> Any:
        meta = f.metadata
        if meta.get("parse"):
            result = getattr(parser, "parse_" + meta["parse"])(expr, where)
            return _FAILED if result is None else result
        annotation = _strip_optional(annotation)
        origin = typing.get_origin(annotation)
        if annotation is str:
            if not isinstance(expr, s.Str):
                hint = (
                    f'write it in double quotes: "{expr.dotted}"'
                    if isinstance(expr, s.Ref)
                    else 'e.g. "text"'
                )
                self.error(expr.span, f"{where} is text, got {describe(expr)}", hint)
                return _FAILED
            if meta.get("option") and expr.value not in meta["option"]:
                self.unknown(expr.span, f"value for {where}", expr.value, meta["option"])
                return _FAILED
            return expr.value
        if annotation is m.Name:
            return self.name(expr, where, meta.get("refers", ""))
        if annotation is m.DataPath:
            if not isinstance(expr, s.Ref):
                self.error(
                    expr.span,
                    f"{where} is a path into a data source, got {describe(expr)}",
                    "e.g. answer_meta.answers_metadata",
                )
                return _FAILED
            self.refer("source", expr.parts[0], expr.span, f"source in {where}")
            return expr.parts
        if annotation is bool:
            if not isinstance(expr, s.Bool):
                self.error(expr.span, f"{where} is true or false, got {describe(expr)}")
                return _FAILED
            return expr.value
        if annotation is int:
            if not isinstance(expr, s.Num) or not isinstance(expr.value, int) or expr.value < 0:
                self.error(
                    expr.span,
                    f"{where} is a whole number >= 0, got {describe(expr) if not isinstance(expr, s.Num) else expr.value!r}",
                )
                return _FAILED
            return expr.value
        if annotation is m.ComponentCall:
            if not isinstance(expr, s.Call):
                self.error(
                    expr.span,
                    f"{where} is a component call like name(...), got {describe(expr)}",
                    f"write {expr.dotted}()" if isinstance(expr, s.Ref) else "",
                )
                return _FAILED
            call = self.component(expr, meta["kind"])
            return _FAILED if call is None else call
        if origin is tuple:
            inner = typing.get_args(annotation)[0]
            if not isinstance(expr, s.ListExpr):
                self.error(
                    expr.span, f"{where} is a list, got {describe(expr)}", "write [a, b, ...]"
                )
                return _FAILED
            items = []
            failed = False
            for item in expr.items:
                got = self.value(item, inner, f, parser, f"each element of {where}")
                failed = failed or got is _FAILED
                items.append(got)
            return _FAILED if failed else tuple(items)
        raise TypeError(
            f"no reader for {annotation!r}"
        )  # pragma: no cover - a schema bug, caught by tests

    def name(self, expr: s.Expr, where: str, refers: str) -> Any:
        if isinstance(expr, s.Str) and expr.value.replace("-", "_").isidentifier():
            self.error(
                expr.span, f"{where} is a name, written without quotes", f"write {expr.value}"
            )
            return _FAILED
        if not isinstance(expr, s.Ref) or len(expr.parts) != 1:
            self.error(
                expr.span,
                f"{where} is a name, got {describe(expr) if not isinstance(expr, s.Ref) else 'a dotted path'}",
            )
            return _FAILED
        if refers:
            self.refer(refers, expr.parts[0], expr.span)
        return expr.parts[0]

    def field_type(self, expr: s.Expr) -> FieldType | None:
        if isinstance(expr, s.Ref) and len(expr.parts) == 1 and expr.parts[0] in SCALAR_KINDS:
            return FieldType(expr.parts[0])
        if (
            isinstance(expr, s.Call)
            and expr.callee.dotted in (*COLLECTION_KINDS, "optional")
            and len(expr.args) == 1
            and not expr.kwargs
        ):
            inner = self.field_type(expr.args[0])
            return FieldType(expr.callee.dotted, inner) if inner else None
        if (
            isinstance(expr, s.Call)
            and expr.callee.dotted == "enum"
            and expr.args
            and all(
                isinstance(a, (s.Str, s.Num, s.Bool))
                or (isinstance(a, s.Ref) and len(a.parts) == 1)
                for a in expr.args
            )
        ):
            return FieldType(
                "enum", values=tuple(literal(a) for a in expr.args)
            )  # enum(a, b) names its text values
        name = (
            expr.callee.dotted
            if isinstance(expr, s.Call)
            else expr.dotted
            if isinstance(expr, s.Ref)
            else describe(expr)
        )
        self.unknown(expr.span, "type", name, TYPE_SPELLINGS)
        return None

    # -- components --------------------------------------------------------------------------
    def normaliser_steps(self, expr: s.Expr, where: str) -> tuple[m.ComponentCall, ...] | None:
        """The steps of the normaliser block ``expr`` names (the checker knows the blocks; a bare binder does not)."""
        self.error(expr.span, f"{where} names a normaliser block, which only a task spec declares")
        return None

    def component(self, call: s.Call, kind: str) -> m.ComponentCall | None:
        name = call.callee.dotted
        try:
            comp = registry.get(kind, name)
        except registry.UnknownComponent as exc:
            if (
                exc.defined_in is not None
            ):  # in a components/ folder nobody allowed: say which file and how to allow it
                self.error(call.callee.span, str(exc), exc.hint)
            else:
                self.unknown(call.callee.span, kind, name, registry.names(kind))
            return None
        params = list(comp.params)
        bound: dict[str, tuple[s.Expr, Any]] = {}
        ok = True
        if len(call.args) > len(params):
            self.error(
                call.span,
                f"{name}() takes at most {len(params)} positional argument(s), got {len(call.args)}",
                signature(comp),
            )
            return None
        for param, arg in zip(params, call.args):
            bound[param.name] = (arg, None)
        strays = False  # an unknown parameter is most likely the missing one misspelt: not reported twice
        for kw in call.kwargs:
            if comp.param(kw.name) is None:
                self.unknown(kw.span, f"parameter of {name}()", kw.name, [p.name for p in params])
                ok, strays = False, True
            elif kw.name in bound:
                self.error(kw.span, f"parameter {kw.name!r} of {name}() is given twice")
                ok = False
            else:
                bound[kw.name] = (kw.value, None)
        values: dict[str, Any] = {}
        for param in params:
            if param.name not in bound:
                if param.required:
                    if not strays:
                        self.error(
                            call.span,
                            f"{name}() needs parameter {param.name!r} ({param.type_name()})",
                            signature(comp),
                        )
                    ok = False
                continue
            expr = bound[param.name][0]
            special = _strip_optional(param.type)
            if (
                special is registry.NormaliserName
            ):  # the block's steps are written in place of its name
                steps = self.normaliser_steps(expr, f"parameter {param.name!r} of {name}()")
                if steps is None:
                    ok = False
                else:
                    values[param.name] = steps
                continue
            if special is registry.SimilarityParts:
                self.error(
                    expr.span,
                    f"{name}() takes its {param.name!r} from a similarity block",
                    "write a similarity block (`use ... on ...`, `same/mean`, `cases/when/otherwise` or `all`) and use the block's name",
                )
                ok = False
                continue
            namespace = registry.NAME_PARAMS.get(param.type)
            if namespace is not None:
                if not isinstance(expr, s.Ref) or len(expr.parts) != 1:
                    self.error(
                        expr.span,
                        f"parameter {param.name!r} of {name}() is the name of a {namespace}, got {describe(expr)}",
                        f"write it without quotes, e.g. {param.default if isinstance(param.default, str) else 'label'}",
                    )
                    ok = False
                    continue
                self.refer(
                    namespace.replace(" ", "_").replace("-", "_"),
                    expr.parts[0],
                    expr.span,
                    f"{namespace} in {name}()",
                )
                values[param.name] = expr.parts[0]
                continue
            if isinstance(expr, (s.Ref, s.Call)):
                if not (
                    isinstance(expr, s.Ref)
                    and expr.parts[0] == "params"
                    and expr.parts[-1] in self.quiet_names
                ):  # a misspelt params block's
                    self.error(
                        expr.span,
                        f"parameter {param.name!r} of {name}() must be a literal {param.type_name()}, got {describe(expr)}",
                        "write a string, number, true/false, a list or an object",
                    )
                ok = False
                continue
            value = literal(expr)
            if not type_ok(value, param.type):
                self.error(
                    expr.span,
                    f"parameter {param.name!r} of {name}() must be {param.type_name()}, got {describe(expr)}"
                    + (f" {value!r}" if isinstance(value, (str, int, float)) else ""),
                    signature(comp),
                )
                ok = False
                continue
            values[param.name] = value
        if not ok:
            return None
        if (
            comp.preset_of is not None
        ):  # the spelled-out call it stands for: same runner, same fingerprint
            return m.ComponentCall(kind, comp.preset_of[0], comp.preset_of[1], {"": call.span})
        return m.ComponentCall(
            kind,
            name,
            tuple((p.name, values[p.name]) for p in params if p.name in values),
            {"": call.span},
        )


_FAILED = object()


def signature(comp: registry.Component) -> str:
    parts = [
        f"{p.name}: {p.type_name()}" + ("" if p.required else f" = {p.default!r}")
        for p in comp.params
    ]
    return f"signature: {comp.name}({', '.join(parts)})"


def type_ok(value: Any, annotation: Any) -> bool:
    if annotation is Any or annotation is inspect.Parameter.empty:
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return value in args
    if origin in (list, tuple):
        return (
            isinstance(value, tuple)
            and not (value and value[0] == "__object__")
            and (not args or all(type_ok(v, args[0]) for v in value))
        )
    if origin is typing.Union or (
        origin is not None and str(origin) == "<class 'types.UnionType'>"
    ):
        return any(type_ok(value, a) for a in args)
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
