"""Syntax tree → typed :class:`dsl.model.TaskSpec`, or every error found, each with a position.

The pipeline for one file: parse; merge the task it ``extends``; substitute ``params.x`` and
``{x}`` in strings; give every ``match`` block the score block's ``defaults``; bind the task block
against the model's dataclasses (:mod:`dsl.binding`, one pass that validates and constructs);
expand the written forms (metric families, reported tables, fetch origins + lock file, normaliser
reuse); then resolve every name the spec used against what it declares and what its components'
contracts promise, and check the types that flow between them.  One mistake gives one error.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from procbench.dsl import checker_conventions
from procbench.dsl import checker_data
from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import Binder, describe, literal
from procbench.dsl.errors import Diagnostic, SpecError
from procbench.dsl.names import check_generated_names
from procbench.dsl.parser import parse, parse_file
from procbench.runners import registry
from procbench.runners.metrics._derived import ARITY as FORMULA_ARITY
from procbench.runners.metrics._derived import formula_names
from procbench.runners.predictions import FieldType
from procbench.runners.tables import EXPLODE_INDEX, EXPLODE_JOIN, EXPLODE_KEY

LIST_OF_TEXT = FieldType("list", FieldType("str"))
TEXT = FieldType("str")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
RUNTIME_PLACEHOLDERS = ("split",)  # filled in when the task runs, not by params


@dataclass
class CheckResult:
    spec: m.TaskSpec
    warnings: list[Diagnostic]
    source: str


class _Checker(Binder):
    """A :class:`Binder` with the language's value shapes (``parse_*``) and expansions (``after_*``)."""

    def __init__(self, path: str, source: str, params: Mapping[str, Any]):
        super().__init__(path, source)
        self.params = dict(params)
        self.normalisers: dict[str, tuple[m.ComponentCall, ...]] = {}
        self.used_normalisers: set[str] = set()
        self.similarities: dict[
            str, m.ComponentCall
        ] = {}  # similarity block -> the call it stands for
        self.used_similarities: set[str] = set()
        self.similarity_blocks: set[str] = set()  # declared, resolved or not
        self.normaliser_blocks: set[str] = (
            set()
        )  # likewise: a use of one whose steps have an error stays silent (one mistake, one error)
        self.similarities_resolved = (
            False  # similarity blocks refer to each other by name until all are read
        )
        self.declared_outputs: list[tuple[str, s.Span]] = []
        self.splits: tuple[str, ...] = ()
        self.source_paths: tuple[
            str, ...
        ] = ()  # the data block's source paths, which a fetch block without files fetches
        self.row_spans: dict[tuple[str, str], s.Span] = {}
        self.note_spans: dict[str, s.Span] = {}
        self.flow_reported: set[tuple[str, str]] = set()
        self.source_names: tuple[
            str, ...
        ] = ()  # data: the sources declared (known before explode and fields)
        self.explode_name: str | None = (
            None  # data: the explode block's name, a path root like a source
        )
        self.value_label_spans: list[
            tuple[s.Span, str]
        ] = []  # slices: where each `values { v = "label" }` entry is written

    def params_literal(self) -> dict[str, Any]:
        return {k: literal(v) for k, v in self.params.items() if not isinstance(v, (s.Ref, s.Call))}

    # -- data --------------------------------------------------------------------------------
    def parse_id_path(self, expr: s.Expr, where: str) -> tuple[str, ...] | None:
        if isinstance(expr, s.Ref) and len(expr.parts) >= 2:
            self.refer("source", expr.parts[0], expr.span, "source in id")
            return expr.parts
        if (
            isinstance(expr, s.Call)
            and expr.callee.dotted == "row_index"
            and not expr.args
            and not expr.kwargs
        ):
            return ("#row",)  # runners.tables.ROW_INDEX
        if (
            isinstance(expr, s.Call)
            and expr.callee.dotted == "key"
            and len(expr.args) == 1
            and not expr.kwargs
            and isinstance(expr.args[0], s.Ref)
            and len(expr.args[0].parts) == 1
        ):
            self.refer("source", expr.args[0].parts[0], expr.args[0].span, "source in id")
            return (
                "#key",
                expr.args[0].parts[0],
            )  # runners.tables.KEY_ID: the keys of a JSON object {id: record}
        self.error(
            expr.span,
            "id is a path into the primary source (e.g. gold.id), key(<source>) or row_index()",
            "key(gold) takes the keys of a json source written as { id: record }; row_index() numbers the primary source's records from 0",
        )
        return None

    def parse_field_binding(self, stmt: s.Attribute) -> m.FieldBinding | None:
        if stmt.type is None:
            self.error(
                stmt.span,
                f"data field {stmt.name!r} needs a type",
                f"write `{stmt.name}: list(str) = ...` (types: str, int, float, bool, any, list(T), optional(T), enum(...))",
            )
            return None
        ftype = self.field_type(stmt.type)
        if isinstance(stmt.value, s.Call):  # lookup(...), any(...), ...: dsl/checker_data.py
            path = checker_data.computed(
                self, stmt.value, f"field {stmt.name!r}", element=self.explode_name is not None
            )
        else:
            path = self._data_path(stmt.value, f"field {stmt.name!r}")
        if ftype is None or path is None:
            return None
        binding = m.FieldBinding(
            stmt.name, path, ftype, {"": stmt.span, "type": stmt.type.span, "path": stmt.value.span}
        )
        checker_data.check_field_type(self, binding)
        return binding

    def _data_path(self, expr: s.Expr, what: str) -> tuple[str, ...] | None:
        explode = self.explode_name
        if isinstance(expr, s.Ref) and explode is not None and expr.parts[0] == explode:
            return (
                expr.parts
            )  # the exploded element: `step` itself (a scalar element) or a path into it
        if not isinstance(expr, s.Ref) or len(expr.parts) < 2:
            self.error(
                expr.span,
                f"{what} is a path <source>.<key>..., got {describe(expr) if not isinstance(expr, s.Ref) else 'a single name'}",
                "e.g. gold.answers",
            )
            return None
        if (
            explode is not None
        ):  # the explode name is a root too: a misspelling is one error, suggesting both kinds
            self.refer("path_root", expr.parts[0], expr.span, f"source or explode name in {what}")
        else:
            self.refer("source", expr.parts[0], expr.span, f"source in {what}")
        return expr.parts

    def parse_data_path(self, expr: s.Expr, where: str) -> tuple[str, ...] | None:
        return self._data_path(expr, where)

    def after_DataSpec_sources(self, sources: tuple[m.Source, ...]) -> tuple[m.Source, ...]:
        self.source_names = tuple(src.name for src in sources)
        return sources

    def parse_explode_items(self, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
        return checker_data.explode_items(self, expr, where)

    def parse_explode_conditions(self, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
        return checker_data.conditions(self, expr, where)

    def parse_explode_id(self, expr: s.Expr, where: str) -> tuple[str, ...] | None:
        if isinstance(expr, s.Ref) and expr.parts == ("index",):
            return EXPLODE_INDEX
        if isinstance(expr, s.Ref) and expr.parts == ("key",):
            return EXPLODE_KEY
        if isinstance(expr, s.Ref):
            return expr.parts  # a path into the element; its root is checked against the block's name once it is known
        if isinstance(expr, s.ListExpr):
            return checker_data.explode_id(self, expr, where)
        self.error(
            expr.span,
            f"{where} is index, key or a path into the element, got {describe(expr)}",
            "e.g. id = index (0-based position), id = key (mapping key) or id = step.qid",
        )
        return None

    def after_DataSpec_answer_labels(
        self, rules: tuple[m.AnswerLabelRule, ...]
    ) -> tuple[m.AnswerLabelRule, ...]:
        """``answer_label modality { ... }`` reads the key ``modality`` unless ``label`` names another."""
        return tuple(rule if rule.label else replace(rule, label=rule.name) for rule in rules)

    def after_DataSpec_explode(self, explode: m.ExplodeSpec) -> m.ExplodeSpec:
        if explode.name in self.source_names:
            self.error(
                m.span_of(explode, "<label>"),
                f"explode {explode.name!r} has the name of a source",
                "give the element its own name: fields tell the two apart by it",
            )
        elif explode.id not in (EXPLODE_INDEX, EXPLODE_KEY) and explode.id[0] not in (
            explode.name,
            EXPLODE_JOIN,
        ):
            self.error(
                m.span_of(explode, "id"),
                f"explode {explode.name!r}: id is index, key or a path into the element ({explode.name}.<key>), got {'.'.join(explode.id)}",
                f"e.g. id = {explode.name}.id; the parent's id comes first in the item id anyway",
            )
        else:
            checker_data.check_explode(self, explode)
        self.explode_name = explode.name
        return explode

    def parse_label_rule(self, stmt: s.Attribute) -> m.LabelRule | None:
        at = {"": stmt.span, "path": stmt.value.span}
        if stmt.type is not None:
            self.error(stmt.type.span, "labels take no type: they are text")
            return None
        if isinstance(stmt.value, s.Ref):
            path = self._data_path(stmt.value, f"label {stmt.name!r}")
            return None if path is None else m.LabelRule(stmt.name, path, at=at)
        if isinstance(stmt.value, s.Call) and stmt.value.callee.dotted == "map":
            return self._map_label(stmt.name, stmt.value, at)
        if isinstance(stmt.value, s.Call) and stmt.value.callee.dotted == "membership":
            return self._membership_label(stmt.name, stmt.value, at)
        if checker_data.is_computed_call(
            stmt.value
        ):  # lookup(...), any(...), ...: dsl/checker_data.py
            node = checker_data.computed(
                self, stmt.value, f"label {stmt.name!r}", element=self.explode_name is not None
            )
            return None if node is None else m.LabelRule(stmt.name, node, at=at)
        if isinstance(stmt.value, s.Call):
            self.unknown(
                stmt.value.callee.span,
                "label function",
                stmt.value.callee.dotted,
                ["map", "membership", *checker_data.FUNCTIONS],
            )
            return None
        self.error(
            stmt.value.span,
            f"label {stmt.name!r} is a path, map(...) or membership(...), got {describe(stmt.value)}",
        )
        return None

    def _map_label(self, name: str, call: s.Call, at: dict[str, s.Span]) -> m.LabelRule | None:
        usage = 'e.g. map(meta.topic, { Health = "unseen" }, default = "seen")'
        if len(call.args) != 2 or not isinstance(call.args[1], s.ObjectExpr):
            self.error(
                call.span, "map() takes a field path and an object of value = label pairs", usage
            )
            return None
        path = self._data_path(call.args[0], f"label {name!r}")
        mapping = []
        for pair in call.args[1].pairs:
            if not isinstance(pair.value, s.Str):
                self.error(pair.value.span, "map() labels are text (in double quotes)", usage)
                return None
            mapping.append((pair.key, pair.value.value))
        default = None
        for kw in call.kwargs:
            if kw.name != "default" or not isinstance(kw.value, s.Str):
                self.error(kw.span, 'map() takes only `default = "label"`', usage)
                return None
            default = kw.value.value
        if path is None:
            return None
        keys = {
            f"map_key:{pair.key}": pair.span for pair in call.args[1].pairs
        }  # check --data reports an unmatched key at the key
        return m.LabelRule(
            name,
            path,
            tuple(mapping),
            default,
            at={**at, "mapping": call.args[1].span, "keys": call.args[1].span, **keys},
        )

    def _membership_label(
        self, name: str, call: s.Call, at: dict[str, s.Span]
    ) -> m.LabelRule | None:
        usage = 'e.g. membership([{ path = "x/{split}_strong.csv", column = "id", label = "strong" }], default = "other", splits = [test])'
        if len(call.args) != 1 or not isinstance(call.args[0], s.ListExpr):
            self.error(
                call.span, "membership() takes one list of { path, column, label } objects", usage
            )
            return None
        members = []
        for entry in call.args[0].items:
            fields = (
                {p.key: p.value for p in entry.pairs} if isinstance(entry, s.ObjectExpr) else {}
            )
            if set(fields) != {"path", "column", "label"} or not all(
                isinstance(v, s.Str) for v in fields.values()
            ):
                self.error(
                    entry.span,
                    'each membership entry is { path = "...", column = "...", label = "..." } (text)',
                    usage,
                )
                return None
            members.append((fields["path"].value, fields["column"].value, fields["label"].value))
        default, splits = None, ()
        for kw in call.kwargs:
            if kw.name == "default" and isinstance(kw.value, s.Str):
                default = kw.value.value
            elif (
                kw.name == "splits"
                and isinstance(kw.value, s.ListExpr)
                and all(isinstance(i, s.Ref) and len(i.parts) == 1 for i in kw.value.items)
            ):
                splits = tuple(i.parts[0] for i in kw.value.items)
                for i in kw.value.items:
                    self.refer("split", i.parts[0], i.span)
            else:
                self.error(
                    kw.span,
                    'membership() takes `default = "label"` and `splits = [name, ...]`',
                    usage,
                )
                return None
        return m.LabelRule(name, (), (), default, tuple(members), splits, at=at)

    def parse_schema_field(self, stmt: s.Attribute) -> tuple[str, FieldType] | None:
        if stmt.type is not None:
            self.error(
                stmt.type.span,
                "in a schema block the type is the value",
                f"write `{stmt.name} = list(str)`",
            )
            return None
        ftype = self.field_type(stmt.value)
        return None if ftype is None else (stmt.name, ftype)

    def parse_param(self, stmt: s.Attribute) -> tuple[str, Any] | None:
        return stmt.name, literal(stmt.value) if not isinstance(
            stmt.value, (s.Ref, s.Call)
        ) else stmt.value

    # -- slices ------------------------------------------------------------------------------
    def parse_value_label(self, stmt: s.Attribute) -> tuple[str, str] | None:
        """``exclusive = "Exclusive (XOR)"`` in a slice's values block: a slice value and its human label."""
        usage = 'values { exclusive = "Exclusive (XOR)"  "sim > 0.5" = "Similar to a tutorial step" } (quote values that are not names)'
        if stmt.type is not None:
            self.error(stmt.type.span, "a slice value's label takes no type annotation", usage)
            return None
        if not isinstance(stmt.value, s.Str) or not stmt.value.value.strip():
            self.error(
                stmt.value.span,
                f"the label of slice value {stmt.name!r} is text in double quotes, got {describe(stmt.value)}",
                usage,
            )
            return None
        self.value_label_spans.append((stmt.span, stmt.name))
        return stmt.name, stmt.value.value

    # -- normalisers -------------------------------------------------------------------------
    def parse_steps(self, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
        if not isinstance(expr, s.ListExpr):
            self.error(
                expr.span,
                f"{where} is a list of normaliser calls or normaliser names, got {describe(expr)}",
            )
            return None
        steps: list[Any] = []
        ok = True
        for item in expr.items:
            if isinstance(item, s.Call):
                call = self.component(item, "normaliser")
                ok = ok and call is not None
                steps.append(call)
            elif isinstance(item, s.Ref) and len(item.parts) == 1:
                steps.append(item)  # another normaliser, inlined by after_TaskSpec_normalisers
            else:
                self.error(
                    item.span,
                    f"each step is a call like strip() or a normaliser's name, got {describe(item)}",
                )
                ok = False
        return tuple(steps) if ok else None

    # -- similarities ------------------------------------------------------------------------
    def parse_similarity(self, expr: s.Expr, where: str) -> m.ComponentCall | None:
        """A similarity call, or the name of a similarity block (written in its place: block names are not scored)."""
        if isinstance(expr, s.Call):
            return self.component(expr, "similarity")
        if isinstance(expr, s.Ref) and len(expr.parts) == 1:
            name = expr.parts[0]
            if name in self.similarities:
                self.used_similarities.add(name)
                return self.similarities[name]
            if name in self.similarity_blocks:  # declared, with an error already reported there
                return None
            self.unknown(
                expr.span,
                "similarity",
                name,
                [*self.similarities, *registry.names("similarity")],
                where="similarity blocks and components",
            )
            return None
        self.error(
            expr.span,
            f"{where} is a similarity call like exact() or a similarity block's name, got {describe(expr)}",
        )
        return None

    def parse_similarity_ref(self, expr: s.Expr, where: str) -> Any:
        """A similarity call or block name; inside similarity blocks a block name stays a reference until all are read."""
        if (
            isinstance(expr, s.Ref)
            and len(expr.parts) == 1
            and not self.similarities_resolved
            and expr.parts[0] in self.similarity_blocks
        ):
            return expr
        return self.parse_similarity(expr, where)

    def parse_similarity_refs(self, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
        if not isinstance(expr, s.ListExpr):
            self.error(
                expr.span,
                f"{where} is a list of similarities",
                "e.g. all = [head_strict, tail_strict]",
            )
            return None
        found = [self.parse_similarity_ref(item, f"each element of {where}") for item in expr.items]
        return None if any(f is None for f in found) else tuple(found)

    def parse_field_path(self, expr: s.Expr, where: str) -> str | None:
        """A record member: a name, or a dotted path into nested records (``head.kind``); checked against the records' type later."""
        if isinstance(expr, s.Ref):
            return ".".join(expr.parts)
        self.error(
            expr.span,
            f"{where} is a member's name or a dotted path like head.kind, got {describe(expr)}",
        )
        return None

    def parse_field_paths(self, expr: s.Expr, where: str) -> tuple[str, ...] | None:
        if not isinstance(expr, s.ListExpr):
            self.error(
                expr.span,
                f"{where} is a list of members, got {describe(expr)}",
                "e.g. same = [kind, actor]",
            )
            return None
        found = [self.parse_field_path(item, f"each element of {where}") for item in expr.items]
        return None if any(f is None for f in found) else tuple(f for f in found if f is not None)

    def parse_names(self, expr: s.Expr, where: str) -> tuple[str, ...] | None:
        if not isinstance(expr, s.ListExpr) or not all(
            isinstance(i, s.Ref) and len(i.parts) == 1 for i in expr.items
        ):
            self.error(
                expr.span, f"{where} is a list of bare names", "e.g. kinds = [Activity, StartNode]"
            )
            return None
        return tuple(i.parts[0] for i in expr.items if isinstance(i, s.Ref))

    def parse_count_stat(self, stmt: s.Attribute) -> tuple[str, Any] | None:
        """``stat = 1`` (once per line or entity), ``stat = X`` (X's score at each comparison) or ``stat = best(X)``."""
        usage = "write `total = 1`, `correct = node_strict` or `sum = best(node_bleu)`"
        value = stmt.value
        if isinstance(value, s.Num) and not isinstance(value.value, bool):
            if value.value != 1:
                self.error(
                    value.span, f"stat {stmt.name!r}: a number counts 1 per line or entity", usage
                )
                return None
            return stmt.name, ("once", None)
        if isinstance(value, s.Call) and value.callee.parts == ("best",):
            if len(value.args) != 1 or value.kwargs:
                self.error(value.span, f"stat {stmt.name!r}: best() takes one similarity", usage)
                return None
            sim = self.parse_similarity(value.args[0], f"stat {stmt.name!r}")
            return None if sim is None else (stmt.name, ("best", sim))
        sim = self.parse_similarity(value, f"stat {stmt.name!r}")
        return None if sim is None else (stmt.name, ("each", sim))

    def parse_similarity_part(self, stmt: s.Attribute) -> tuple[str, Any] | None:
        """``field = similarity`` in a similarity block's ``mean``: a call, or a block's name (resolved once all are known)."""
        if stmt.type is not None:
            self.error(
                stmt.type.span,
                "a record field's type comes from the data (the deriver's contract)",
                f"write `{stmt.name} = <similarity>`",
            )
            return None
        if isinstance(stmt.value, s.Call):
            call = self.component(stmt.value, "similarity")
            return None if call is None else (stmt.name, call)
        if isinstance(stmt.value, s.Ref) and len(stmt.value.parts) == 1:
            return stmt.name, stmt.value
        self.error(
            stmt.value.span,
            f"record field {stmt.name!r} takes a similarity call or a similarity block's name, got {describe(stmt.value)}",
        )
        return None

    def after_TaskSpec_similarities(
        self, blocks: tuple[m.SimilarityBlock, ...]
    ) -> tuple[m.SimilarityBlock, ...]:
        """Each block as the one component call it stands for (record blocks: ``record_mean`` with their parts inlined)."""
        by_name = {b.name: b for b in blocks}
        failed: set[str] = set()
        usage = (
            "write `use = phrase_overlap()`; for records `same = [step]  mean { field = similarity ... }`, "
            "`cases = kind  when { ... }  otherwise = X` or `all = [X, Y]`"
        )

        def resolve(name: str, chain: tuple[str, ...]) -> m.ComponentCall | None:
            if name in self.similarities:
                return self.similarities[name]
            if name in failed:
                return None
            call = build(by_name[name], chain)
            if call is None:
                failed.add(name)
            else:
                self.similarities[name] = call
            return call

        def deref(value: Any, chain: tuple[str, ...]) -> m.ComponentCall | None:
            """A call as written, or the call another block stands for (a cycle is an error)."""
            if isinstance(value, m.ComponentCall):
                return value
            ref = value.parts[0]
            if ref not in by_name:
                if ref not in self.similarity_blocks:  # else declared with an error, reported there
                    self.unknown(value.span, "similarity block", ref, list(by_name))
                return None
            if ref in chain:
                self.error(
                    value.span,
                    f"similarity cycle: {' -> '.join([*chain, ref])}",
                    "a similarity cannot include itself",
                )
                return None
            self.used_similarities.add(ref)
            return resolve(ref, (*chain, ref))

        def form(b: m.SimilarityBlock, chain: tuple[str, ...]) -> m.ComponentCall | None:
            """The block's own form, before `at_least` and `on` wrap it."""
            forms = (
                ("use", b.use is not None),
                ("mean", bool(b.mean)),
                ("cases", b.cases is not None),
                ("all", bool(b.all_of)),
            )
            written = [name for name, present in forms if present]
            if len(written) > 1:
                what = "a record form (same/mean)" if written[0] == "use" else f"`{written[1]}`"
                self.error(
                    m.span_of(b, written[1]),
                    f"similarity {b.name!r} has both `{written[0]}` and {what}",
                    usage,
                )
                return None
            if (b.when or b.otherwise is not None) and b.cases is None:
                self.error(
                    m.span_of(b, "when" if b.when else "otherwise"),
                    f"similarity {b.name!r}: `when` and `otherwise` go with `cases = <member>`",
                    usage,
                )
                return None
            where = {"": m.span_of(b)}
            if b.use is not None:
                if b.same:
                    self.error(
                        m.span_of(b, "use"),
                        f"similarity {b.name!r} has both `use` and a record form (same/mean)",
                        usage,
                    )
                    return None
                return deref(b.use, chain)
            if b.cases is not None:
                if b.otherwise is None:
                    self.error(
                        m.span_of(b),
                        f"similarity {b.name!r}: `cases` needs `otherwise = <similarity>` for the values `when` does not name",
                        usage,
                    )
                    return None
                parts = [(value, deref(part, chain)) for value, part in b.when]
                otherwise = deref(b.otherwise, chain)
                if otherwise is None or any(p is None for _, p in parts):
                    return None
                return m.ComponentCall(
                    "similarity",
                    "cases",
                    (
                        ("same", tuple(b.same)),
                        ("field", b.cases),
                        ("when", tuple(parts)),
                        ("otherwise", otherwise),
                    ),
                    {
                        **where,
                        "when": m.span_of(b, "when"),
                    },  # a `when` value the member cannot have is reported at `when`
                )
            if b.all_of or (b.same and not b.mean):
                found = [deref(part, chain) for part in b.all_of]
                if any(f is None for f in found):
                    return None
                return m.ComponentCall(
                    "similarity",
                    "all_of",
                    (("same", tuple(b.same)), ("parts", tuple(found))),
                    where,
                )
            if not b.mean:
                if "use" not in b.at:  # else `use` is written and its error is reported there
                    self.error(
                        m.span_of(b),
                        f"similarity {b.name!r} needs `use = <similarity>(...)` or `mean {{ ... }}`",
                        usage,
                    )
                return None
            if len({field for field, _ in b.mean}) != len(b.mean):
                return None  # a repeated field: reported where it is written
            mean_parts = [(field, deref(value, chain)) for field, value in b.mean]
            if any(p is None for _, p in mean_parts):
                return None
            return m.ComponentCall(
                "similarity",
                "record_mean",
                (("same", tuple(b.same)), ("parts", tuple(mean_parts))),
                where,
            )

        def build(b: m.SimilarityBlock, chain: tuple[str, ...]) -> m.ComponentCall | None:
            call = form(b, chain)
            if call is not None and b.at_least is not None:
                call = m.ComponentCall(
                    "similarity",
                    "at_least",
                    (("similarity", call), ("threshold", b.at_least)),
                    {"": m.span_of(b, "at_least")},
                )
            if call is not None and b.on is not None:
                call = m.ComponentCall(
                    "similarity",
                    "on_field",
                    (("field", b.on), ("similarity", call)),
                    {"": m.span_of(b, "on")},
                )
            return call

        for b in blocks:
            resolve(b.name, (b.name,))
        self.similarities_resolved = True
        return blocks

    def after_TaskSpec_normalisers(
        self, blocks: tuple[m.NormaliserBlock, ...]
    ) -> tuple[m.NormaliserBlock, ...]:
        by_name = {b.name: b for b in blocks}

        def resolve(name: str, chain: tuple[str, ...]) -> tuple[m.ComponentCall, ...] | None:
            if name in self.normalisers:
                return self.normalisers[name]
            out: list[m.ComponentCall] = []
            for step in by_name[name].steps:
                if isinstance(step, m.ComponentCall):
                    out.append(step)
                    continue
                ref = step.parts[0]
                if ref not in by_name:
                    if (
                        ref not in self.normaliser_blocks
                    ):  # else declared with an error, reported there
                        self.unknown(step.span, "normaliser", ref, list(by_name))
                    return None
                if ref in chain:
                    self.error(
                        step.span,
                        f"normaliser cycle: {' -> '.join([*chain, ref])}",
                        "a normaliser cannot include itself",
                    )
                    return None
                self.used_normalisers.add(ref)
                inner = resolve(ref, (*chain, ref))
                if inner is None:
                    return None
                out.extend(inner)
            self.normalisers[name] = tuple(out)
            return self.normalisers[name]

        for b in blocks:
            resolve(b.name, (b.name,))
        return blocks

    def normaliser_steps(self, expr: s.Expr, where: str) -> tuple[m.ComponentCall, ...] | None:
        return self.parse_normaliser_ref(expr, where)

    def parse_normaliser_ref(self, expr: s.Expr, where: str) -> tuple[m.ComponentCall, ...] | None:
        if not isinstance(expr, s.Ref) or len(expr.parts) != 1:
            self.error(
                expr.span, f"{where} is the name of a normaliser block, got {describe(expr)}"
            )
            return None
        name = expr.parts[0]
        if name not in self.normalisers:
            if name not in self.normaliser_blocks:  # else declared with an error, reported there
                self.unknown(expr.span, "normaliser", name, list(self.normalisers))
            return None
        self.used_normalisers.add(name)
        return self.normalisers[name]

    # -- scoring -----------------------------------------------------------------------------
    def parse_where(self, expr: s.Expr, where: str) -> tuple[tuple[str, str], ...] | None:
        usage = 'e.g. where = { modality = "text" }: item label = the value it must have'
        if not isinstance(expr, s.ObjectExpr) or not expr.pairs:
            self.error(expr.span, f"{where} is an object of label = value pairs", usage)
            return None
        out = []
        for pair in expr.pairs:
            if not isinstance(pair.value, s.Str):
                self.error(pair.value.span, "a label value is text (in double quotes)", usage)
                return None
            self.refer("label", pair.key, pair.span, "item label in where")
            out.append((pair.key, pair.value.value))
        return tuple(out)

    def parse_value_paths(self, expr: s.Expr, where: str) -> tuple[str, ...] | None:
        """``[node.XOR, bleu_node.Activity]``: names of per-item values, dotted as the scorer emits them."""
        if (
            not isinstance(expr, s.ListExpr)
            or not expr.items
            or not all(isinstance(i, s.Ref) for i in expr.items)
        ):
            self.error(
                expr.span,
                f"{where} is a list of per-item value prefixes",
                "e.g. counts = [node.XOR] or [bleu_node.Activity, bleu_node.StartNode]",
            )
            return None
        return tuple(i.dotted for i in expr.items if isinstance(i, s.Ref))

    def parse_count_names(self, expr: s.Expr, where: str) -> tuple[tuple[str, ...], ...] | None:
        """``[tp, [tp, fp]]``: per place, the per-item counts added together there."""
        usage = "e.g. stats = [p_correct, p_total, r_correct, r_total], or [[tp, tn], [tp, fp, tn, fn]] for an accuracy"
        places = expr.items if isinstance(expr, s.ListExpr) else []
        out = []
        for place in places:
            names = place.items if isinstance(place, s.ListExpr) else [place]
            if not names or not all(isinstance(n, s.Ref) for n in names):
                self.error(
                    place.span,
                    f"{where}: each place is a count's name or a list of names to add",
                    usage,
                )
                return None
            out.append(tuple(n.dotted for n in names if isinstance(n, s.Ref)))
        if not out:
            self.error(expr.span, f"{where} is a list of count names", usage)
            return None
        return tuple(out)

    def parse_convention(self, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
        return checker_conventions.parse(self, expr, where)

    def parse_number(self, expr: s.Expr, where: str) -> float | None:
        if not isinstance(expr, s.Num) or isinstance(expr.value, bool):
            self.error(expr.span, f"{where} is a number, got {describe(expr)}")
            return None
        return float(expr.value)

    def parse_outputs(self, expr: s.Expr, where: str) -> tuple[str, str, str] | None:
        if (
            not isinstance(expr, s.ListExpr)
            or len(expr.items) != 3
            or not all(isinstance(i, s.Ref) and len(i.parts) == 1 for i in expr.items)
        ):
            self.error(
                expr.span,
                "outputs names the three per-item values [precision, recall, f1]",
                "e.g. outputs = [exact_p, exact_r, exact_f1] (the default: <match>_p, <match>_r, <match>_f1)",
            )
            return None
        names = tuple(i.parts[0] for i in expr.items)
        return names

    def parse_metadata(self, expr: s.Expr, where: str) -> tuple[tuple[str, str], ...] | None:
        if not isinstance(expr, s.ObjectExpr) or not all(
            isinstance(p.value, s.Str) for p in expr.pairs
        ):
            self.error(
                expr.span,
                "metadata maps a scorer parameter to a submission metadata key (text)",
                'e.g. metadata = { cot_penalty = "cot" }',
            )
            return None
        return tuple((p.key, p.value.value) for p in expr.pairs)

    def parse_family(self, expr: s.Expr, where: str) -> str | None:
        if isinstance(expr, s.Ref) and expr.dotted == "prf":
            return "prf"
        name = expr.dotted if isinstance(expr, s.Ref) else describe(expr)
        self.unknown(expr.span, "metric family", name, ["prf"])
        return None

    def parse_formula(
        self, expr: s.Expr, where: str, *, per_item: bool = False
    ) -> tuple[Any, ...] | None:
        """A metric computed from others (or, ``per_item``, a value from an item's values): names, numbers, and the functions of runners.metrics._derived."""
        usage = (
            "e.g. from = mul(judged, add(min(7, grade), 1)), pick(cot, penalised, normalised)"
            if per_item
            else "e.g. from = f1(inputs_p, inputs_r), mean(a_p, b_p), round(mean(a_p, b_p), 3), weighted(a, 750, b, 601)"
        )
        if isinstance(expr, s.Ref) and len(expr.parts) == 1:
            if (
                not per_item
            ):  # per-item names are checked against the scorer's values once those are known
                self.refer("metric", expr.parts[0], expr.span, "metric in from")
            return ("metric", expr.parts[0])
        if isinstance(expr, s.Num) and not isinstance(expr.value, bool):
            return ("number", float(expr.value))
        if isinstance(expr, s.Call) and not expr.kwargs:
            name = expr.callee.dotted
            arity = FORMULA_ARITY.get(name)
            if arity is None:
                self.unknown(expr.callee.span, "function in from", name, list(FORMULA_ARITY))
                return None
            if (
                (arity > 0 and len(expr.args) != arity)
                or (arity < 0 and len(expr.args) % -arity)
                or not expr.args
            ):
                wanted = {0: "one or more", -2: "pairs of (value, weight)"}.get(arity, str(arity))
                self.error(
                    expr.span, f"{name}() takes {wanted} argument(s), got {len(expr.args)}", usage
                )
                return None
            if name == "round" and not (
                isinstance(expr.args[1], s.Num) and isinstance(expr.args[1].value, int)
            ):
                self.error(expr.args[1].span, "round(x, digits): digits is a whole number", usage)
                return None
            args = [self.parse_formula(a, where, per_item=per_item) for a in expr.args]
            return None if any(a is None for a in args) else ("call", name, tuple(args))
        self.error(
            expr.span,
            f"{where} is a formula over {'per-item values' if per_item else 'metrics'}, got {describe(expr)}",
            usage,
        )
        return None

    def parse_item_formula(self, expr: s.Expr, where: str) -> tuple[Any, ...] | None:
        return self.parse_formula(expr, where, per_item=True)

    def after_TaskSpec_metrics(self, blocks: tuple[m.MetricBlock, ...]) -> tuple[m.MetricSpec, ...]:
        out = []
        for b in blocks:
            display = b.display or b.name
            members = (
                [("_p", " P"), ("_r", " R"), ("_f1", " F1")] if b.family == "prf" else [("", "")]
            )
            for suffix, shown in members:
                out.append(
                    m.MetricSpec(
                        b.name + suffix,
                        display + shown,
                        b.group,
                        b.description,
                        b.higher_is_better,
                        b.percent,
                        b.at,
                    )
                )
        return tuple(out)

    # -- reported rows -----------------------------------------------------------------------
    def parse_rows(
        self, expr: s.Expr, where: str
    ) -> tuple[tuple[str, str, tuple[float | None, ...]], ...] | None:
        """(system, slice value or "", values) per row; a row on a slice is an object of value = [...]."""
        usage = 'rows = { "System" = [0.1, _, 0.3] } (one value or _ per column); on a slice { "System" = { value = [...] } }'
        if not isinstance(expr, s.ObjectExpr):
            self.error(expr.span, f"{where} is an object of rows", usage)
            return None
        rows = []
        for pair in expr.pairs:
            parts = (
                [(p.key, p.value) for p in pair.value.pairs]
                if isinstance(pair.value, s.ObjectExpr)
                else [("", pair.value)]
            )
            for value_name, listed in parts:
                if not isinstance(listed, s.ListExpr):
                    self.error(listed.span, f"row {pair.key!r} is a list of values", usage)
                    return None
                values: list[float | None] = []
                for v in listed.items:
                    if isinstance(v, s.Num):
                        values.append(float(v.value))
                    elif isinstance(v, s.Ref) and v.dotted == "_":
                        values.append(None)
                    else:
                        self.error(
                            v.span,
                            f"a reported value is a number (a fraction, like the metric) or _, got {describe(v)}",
                            usage,
                        )
                        return None
                rows.append((pair.key, value_name, tuple(values)))
                self.row_spans[(pair.key, value_name)] = listed.span
        return tuple(rows)

    def parse_notes(self, expr: s.Expr, where: str) -> tuple[tuple[str, str], ...] | None:
        if not isinstance(expr, s.ObjectExpr) or not all(
            isinstance(p.value, s.Str) for p in expr.pairs
        ):
            self.error(
                expr.span,
                f"{where} maps a row's system to its note (text)",
                'e.g. notes = { "BERT" = "±0.01 over seeds" }',
            )
            return None
        self.note_spans.update({p.key: p.span for p in expr.pairs})
        return tuple((p.key, p.value.value) for p in expr.pairs)

    def after_TaskSpec_reported(
        self, tables: tuple[m.ReportedTable, ...]
    ) -> tuple[m.ReportedRow, ...]:
        out = []
        for table in tables:
            systems = {system for system, _, _ in table.rows}
            for system, _ in table.notes:
                if system not in systems:
                    self.unknown(
                        self.note_spans.get(system, m.span_of(table, "notes")),
                        "row in notes",
                        system,
                        sorted(systems),
                    )
            notes = dict(table.notes)
            if table.url and (not _PAPER_URL.fullmatch(table.url)):
                self.error(
                    m.span_of(table, "url"),
                    f"url is the paper's https link on one line, got {table.url[:80]!r}",
                    'e.g. url = "https://arxiv.org/abs/2011.08092"',
                )
            if table.date and not _PAPER_DATE.fullmatch(table.date):
                self.error(
                    m.span_of(table, "date"),
                    f"date is YYYY-MM or YYYY-MM-DD, got {table.date[:40]!r}",
                    'e.g. date = "2020-11" (the paper\'s)',
                )
            for system, value_name, values in table.rows:
                span = self.row_spans.get((system, value_name), m.span_of(table, "rows"))
                if len(values) != len(table.columns):
                    self.error(
                        span,
                        f"row {system!r} has {len(values)} values for {len(table.columns)} columns",
                        "one value (or _) per column",
                    )
                    continue
                if bool(value_name) != bool(table.slice):
                    self.error(
                        span,
                        f"row {system!r}: "
                        + (
                            "rows on a slice give { value = [...] } per slice value"
                            if table.slice
                            else "a row with slice values needs `slice = <slice name>`"
                        ),
                    )
                    continue
                pairs = tuple((c, v) for c, v in zip(table.columns, values) if v is not None)
                slice_ref = (table.slice, value_name) if table.slice else None
                note = "; ".join(n for n in (table.note, notes.get(system, "")) if n)
                out.append(
                    m.ReportedRow(
                        system,
                        table.split,
                        table.source,
                        pairs,
                        slice_ref,
                        note,
                        {**table.at, "value": span},
                        path=self.path,
                        url=table.url,
                        date=table.date,
                    )
                )
        return tuple(out)

    # -- fetch -------------------------------------------------------------------------------
    def after_TaskSpec_data(self, data: m.DataSpec) -> m.DataSpec:
        self.splits = data.splits
        self.source_paths = tuple(s.path for s in data.sources)
        return data

    def _files_from_sources(self, b: m.FetchBlock) -> tuple[str, ...]:
        """A block without ``files`` fetches what the data block reads under its ``into``: paths are said once."""
        if b.files:
            return b.files
        into = b.into if not b.into or b.into.endswith("/") else b.into + "/"
        files = tuple(
            dict.fromkeys(path[len(into) :] for path in self.source_paths if path.startswith(into))
        )
        if (
            not files and not self.errors
        ):  # after an error in the data block its paths are unknown: no second error
            self.error(
                m.span_of(b),
                f"this fetch block lists no files and no data source reads a path under into = {b.into!r}",
                'list them: files = ["path/relative/to/the/origin"]',
            )
        return files

    def after_TaskSpec_fetch(self, blocks: tuple[m.FetchBlock, ...]) -> tuple[m.FetchSpec, ...]:
        if not blocks:
            return ()
        from procbench.dsl import lock

        origins = []
        for b in blocks:
            if bool(b.url) == bool(b.hub_repo):
                self.error(
                    m.span_of(b),
                    'a fetch block needs exactly one origin: `url = "..."` or `hub_repo = "..."`',
                )
                return ()
            files = self._files_from_sources(b)
            if not files:
                return ()
            origins.append(
                lock.FetchOrigin(
                    name=b.name,
                    url=b.url,
                    hub_repo=b.hub_repo,
                    revision=b.revision,
                    repo_type=b.repo_type,
                    into=b.into,
                    files=files,
                    splits=b.splits,
                )
            )
        for problem in lock.path_problems(origins):
            self.error(
                m.span_of(blocks[0], "files"),
                problem,
                "paths stay under the data root: no '..', no absolute paths",
            )
        if self.errors:
            return ()
        where = lock.lock_path(Path(self.path))
        if (
            not where.is_file() and not lock.collecting()
        ):  # only `data fetch` needs it; a spec copied to try something out still checks
            self.warn(
                m.span_of(blocks[0]),
                f"no lock file {where.name} beside the spec: `procbench data fetch` cannot verify the files",
                f"run `procbench data lock {Path(self.path).stem}` with the data in place",
            )
            return ()
        try:
            return lock.read_lock(where, tuple(origins), self.splits)
        except lock.LockError as exc:
            lines = str(exc).splitlines()
            detail = "; ".join(line.strip() for line in lines[1:4]) + (
                f"; ... ({len(lines) - 4} more)" if len(lines) > 4 else ""
            )
            self.error(
                m.span_of(blocks[0]),
                lines[0] + (f" ({detail})" if detail else ""),
                f"run `procbench data lock {Path(self.path).stem}` with the data in place",
            )
            return ()


# ---------------------------------------------------------------------------------------------
# extends, params, defaults: rewrites of the syntax tree before binding


def _merge(
    parent: tuple[s.Attribute | s.Block, ...], child: tuple[s.Attribute | s.Block, ...]
) -> tuple[s.Attribute | s.Block, ...]:
    """Child statements override the parent's: attributes by name, blocks by (type, labels), recursively."""
    out: list[s.Attribute | s.Block] = list(parent)

    def index_of(stmt: s.Attribute | s.Block) -> int | None:
        for i, existing in enumerate(out):
            if (
                isinstance(stmt, s.Attribute)
                and isinstance(existing, s.Attribute)
                and existing.name == stmt.name
            ):
                return i
            if (
                isinstance(stmt, s.Block)
                and isinstance(existing, s.Block)
                and (existing.type, existing.labels) == (stmt.type, stmt.labels)
            ):
                return i
        return None

    for stmt in child:
        i = index_of(stmt)
        if i is None:
            out.append(stmt)
        elif isinstance(stmt, s.Block) and isinstance(out[i], s.Block):
            out[i] = replace(stmt, body=_merge(out[i].body, stmt.body))
        else:
            out[i] = stmt
    return tuple(out)


class _Substitution:
    """``params.x`` → the parameter's value; ``{x}`` in a "string" → its text. Unknown names are errors."""

    def __init__(self, params: dict[str, s.Expr], checker: Binder):
        self.params = params
        self.checker = checker
        self.used: set[str] = set()

    def expr(self, e: s.Expr) -> s.Expr:
        if isinstance(e, s.Ref) and e.parts[0] == "params":
            if len(e.parts) == 2 and e.parts[1] in self.params:
                self.used.add(e.parts[1])
                return self.params[e.parts[1]]
            self.checker.unknown(e.span, "parameter", ".".join(e.parts[1:]), list(self.params))
            return e
        if isinstance(e, s.Str) and not e.long and "{" in e.value:
            return replace(e, value=_PLACEHOLDER.sub(lambda mt: self._placeholder(mt, e), e.value))
        if isinstance(e, s.Call):
            return replace(
                e,
                args=tuple(self.expr(a) for a in e.args),
                kwargs=tuple(replace(k, value=self.expr(k.value)) for k in e.kwargs),
            )
        if isinstance(e, s.ListExpr):
            return replace(e, items=tuple(self.expr(i) for i in e.items))
        if isinstance(e, s.ObjectExpr):
            return replace(e, pairs=tuple(replace(p, value=self.expr(p.value)) for p in e.pairs))
        return e

    def _placeholder(self, match: re.Match[str], e: s.Str) -> str:
        name = match.group(1)
        if name in RUNTIME_PLACEHOLDERS:
            return match.group(0)
        value = self.params.get(name)
        if isinstance(value, (s.Str, s.Num)):
            self.used.add(name)
            return str(value.value)
        column = e.span.column + 1 + match.start()  # the opening quote, then the text
        span = (
            s.Span(e.span.line, column, e.span.line, column + len(match.group(0)))
            if e.span.line == e.span.end_line
            else e.span
        )
        self.checker.unknown(
            span,
            "parameter in {...}",
            name,
            [k for k, v in self.params.items() if isinstance(v, (s.Str, s.Num))]
            + list(RUNTIME_PLACEHOLDERS),
        )
        return match.group(0)

    def body(self, body: tuple[s.Attribute | s.Block, ...]) -> tuple[s.Attribute | s.Block, ...]:
        out: list[s.Attribute | s.Block] = []
        for stmt in body:
            if isinstance(stmt, s.Attribute):
                out.append(replace(stmt, value=self.expr(stmt.value)))
            elif stmt.type in (
                "params",
                "template",
            ):  # templates are Jinja2: their braces are theirs
                out.append(stmt)
            else:
                out.append(replace(stmt, body=self.body(stmt.body)))
        return tuple(out)


def _apply_match_defaults(task: s.Block, checker: Binder) -> s.Block:
    """Every ``match`` block of ``score`` gets the attributes of ``score { defaults { ... } }`` it does not set."""
    body = []
    for stmt in task.body:
        if isinstance(stmt, s.Block) and stmt.type == "score":
            defaults = stmt.blocks("defaults")
            if len(defaults) > 1:
                checker.error(defaults[1].span, "a score block has one defaults block")
            if defaults:
                d = defaults[0]
                if d.labels:
                    checker.error(
                        d.span, "a defaults block takes no name", "write `defaults { ... }`"
                    )
                inner: list[s.Attribute | s.Block] = []
                for st in stmt.body:
                    if isinstance(st, s.Block) and st.type == "match":
                        own = {a.name for a in st.attributes()}
                        inherited = tuple(
                            a for a in d.body if isinstance(a, s.Attribute) and a.name not in own
                        )
                        inner.append(replace(st, body=inherited + st.body))
                    elif st is not d and not (isinstance(st, s.Block) and st.type == "defaults"):
                        inner.append(st)
                for st in d.body:
                    if isinstance(st, s.Block):
                        checker.error(
                            st.span, "defaults hold attributes of match blocks, not blocks"
                        )
                stmt = replace(stmt, body=tuple(inner))
        body.append(stmt)
    return replace(task, body=tuple(body))


# ---------------------------------------------------------------------------------------------
# entry points


def _find_parent(name: str, near: Path, search: list[Path]) -> Path | None:
    for folder in [near.parent, *search]:
        candidate = folder / f"{name}.spec"
        if candidate.is_file():
            return candidate
    return None


def _task_block(spec_file: s.SpecFile, checker: Binder) -> s.Block | None:
    tasks = [b for b in spec_file.body if isinstance(b, s.Block) and b.type == "task"]
    for stmt in spec_file.body:
        if not (isinstance(stmt, s.Block) and stmt.type == "task"):
            checker.error(
                stmt.span,
                "only a `task name { ... }` block may appear at the top level of a spec",
                "move this inside the task block",
            )
    if len(tasks) != 1:
        if not tasks and spec_file.body:
            return None  # a misspelt `task`: reported above, once
        span = tasks[1].span if len(tasks) > 1 else s.Span(1, 1, 1, 1)
        checker.error(
            span,
            "a spec file holds exactly one task block" if tasks else "the spec has no task block",
            "write `task name { ... }`",
        )
        return None
    return tasks[0]


# ---------------------------------------------------------------------------------------------
# files beside the spec: `citation = file("openpi.bib")`, `reported = file("openpi.reported")`

_PAPER_URL = re.compile(r"https://[^\s\"<>]{1,500}")  # a reported table's paper link
_PAPER_DATE = re.compile(
    r"(19|20)\d\d-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?"
)  # when its paper appeared
FILE_ATTRIBUTES = (
    "description",
    "citation",
    "reported",
)  # the task attributes a file beside the spec may hold
REPORTED_SUFFIX = ".reported"  # by convention; `procbench fmt` formats these beside the specs


def _beside_files(task: s.Block, spec_path: Path, search: list[Path], binder: Binder) -> s.Block:
    """The task's ``name = file("...")`` attributes, resolved in the folder of the file that wrote them.

    Done before ``extends`` merges a parent, so a parent's files are found beside the parent.
    ``description`` and ``citation`` take the file's text; ``reported`` keeps the call with the
    file's path, bound by :func:`_reported_beside` under that file's name.  A file that is not there
    is a warning, as a missing lock is: a spec copied elsewhere to try something out still checks.
    """
    body: list[s.Attribute | s.Block] = []
    for stmt in task.body:
        if (
            isinstance(stmt, s.Attribute)
            and isinstance(stmt.value, s.Call)
            and stmt.value.callee.dotted == "file"
        ):
            resolved = _file_value(stmt, stmt.value, spec_path, search, binder)
            if resolved is not None:
                body.append(resolved)
        else:
            body.append(stmt)
    return replace(task, body=tuple(body))


def _file_value(
    stmt: s.Attribute, call: s.Call, spec_path: Path, search: list[Path], binder: Binder
) -> s.Attribute | None:
    usage = (
        'e.g. citation = file("openpi.bib") or reported = file("openpi.reported"), beside the spec'
    )
    if stmt.name not in FILE_ATTRIBUTES:
        binder.error(
            call.span,
            f"{stmt.name} cannot be read from a file",
            f"file() gives the text of {' and '.join(FILE_ATTRIBUTES[:2])}, and the rows of reported",
        )
        return None
    if len(call.args) != 1 or call.kwargs or not isinstance(call.args[0], s.Str):
        binder.error(call.span, "file() takes one file name in double quotes", usage)
        return None
    arg = call.args[0]
    name = arg.value
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        binder.error(
            arg.span,
            f"file() names a file in the spec's folder, got {name!r}",
            "a plain file name: no folders, no '..'",
        )
        return None
    found = next(
        (folder / name for folder in [spec_path.parent, *search] if (folder / name).is_file()), None
    )
    if found is None:
        left_out = "its paper rows are" if stmt.name == "reported" else f"the {stmt.name} is"
        binder.warn(
            arg.span,
            f"no file {name!r} beside the spec: {left_out} left out",
            f"put {name} in the spec's folder",
        )
        return None
    if stmt.name == "reported":
        return replace(stmt, value=replace(call, args=(replace(arg, value=str(found)),)))
    try:
        text = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        binder.error(arg.span, f"cannot read {name!r}: {exc}", "save it as UTF-8 text")
        return None
    return replace(
        stmt, value=s.Str(text, call.span, long=True)
    )  # long: its braces are not {param}s


def _pop_reported_file(task: s.Block) -> tuple[s.Block, str | None]:
    """The task without its ``reported = file(...)`` attribute, and that file's path."""
    for stmt in task.body:
        if (
            isinstance(stmt, s.Attribute)
            and stmt.name == "reported"
            and isinstance(stmt.value, s.Call)
            and stmt.value.callee.dotted == "file"
        ):
            return replace(
                task, body=tuple(st for st in task.body if st is not stmt)
            ), stmt.value.args[0].value
    return task, None


def _reported_beside(path: str, checker: _Checker) -> tuple[_Checker, tuple[m.ReportedRow, ...]]:
    """The reported blocks of a file beside the spec, bound by a checker of their own (its errors name that file)."""
    side = _Checker(path, "", checker.params)
    try:
        side_file = parse_file(path)
    except SpecError as exc:
        side.errors.extend(replace(d, file_text=exc.source) for d in exc.diagnostics)
        return side, ()
    side.source = side_file.source
    tables = []
    for stmt in side_file.body:
        if isinstance(stmt, s.Block) and stmt.type == "reported":
            table = side.bind(m.ReportedTable, stmt, side)
            if table is not None:
                tables.append(table)
        else:
            side.error(
                stmt.span,
                'a reported file holds only `reported "source" { ... }` blocks',
                "the task's other statements belong in its spec",
            )
    return side, side.after_TaskSpec_reported(tuple(tables))


def _load_with_extends(
    spec_file: s.SpecFile,
    checker: Binder,
    search: list[Path],
    chain: tuple[str, ...] = (),
    introduced: dict[str, tuple[s.Span, str, list[str]]] | None = None,
) -> s.Block | None:
    """The task block with its parents merged in; ``introduced`` collects the params a variant adds to its parent's."""
    task = _task_block(spec_file, checker)
    if task is None:
        return None
    here = Path(spec_file.path)
    if here.suffix == ".spec" and here.is_file() and task.labels and task.labels[0] != here.stem:
        # `extends`, `procbench score NAME` and the board find a task by its file's name
        span = task.label_spans[0] if task.label_spans else task.span
        checker.error(
            span,
            f"task {task.labels[0]!r} is written in {here.name}: a task is named after its file",
            f"write `task {here.stem} {{ ... }}`, or rename the file to {task.labels[0]}.spec",
        )
    task = _beside_files(task, here, search, checker)
    extends = task.attribute("extends")
    if extends is None:
        return task
    if isinstance(extends.value, s.Str):
        checker.error(
            extends.value.span,
            "extends names a task: write it without quotes",
            f"extends = {extends.value.value}",
        )
        return None
    if not isinstance(extends.value, s.Ref) or len(extends.value.parts) != 1:
        checker.error(extends.value.span, "extends names another task", "e.g. extends = openpi")
        return None
    parent_name = extends.value.parts[0]
    own = task.labels[0] if task.labels else "?"
    if parent_name in chain or parent_name == own:
        checker.error(
            extends.value.span,
            f"extends cycle: {' -> '.join([*chain, own, parent_name])}",
            "a task cannot extend itself, directly or through others",
        )
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
    parent_checker = Binder(str(parent_path), parent_file.source)
    parent = _load_with_extends(parent_file, parent_checker, search, (*chain, own))
    checker.errors.extend(parent_checker.errors)
    checker.warnings.extend(parent_checker.warnings)
    if parent is None:
        return None
    if introduced is not None:
        declared = [a.name for b in parent.blocks("params") for a in b.attributes()]
        for a in (
            a for b in task.blocks("params") for a in b.attributes() if a.name not in declared
        ):
            introduced[a.name] = (a.span, parent_name, declared)
    body = _merge(
        tuple(
            st for st in parent.body if not (isinstance(st, s.Attribute) and st.name == "extends")
        ),
        task.body,
    )
    return replace(task, body=body)


def check_text(source: str, path: str = "<spec>", search: list[Path] | None = None) -> CheckResult:
    """Parse and check spec text; raises :class:`SpecError` listing every error."""
    return _check(parse(source, path), search or [])


def check_file(path: str | Path, search: list[Path] | None = None) -> CheckResult:
    return _check(parse_file(path), search or [])


def _fail(checker: Binder, spec_file: s.SpecFile) -> SpecError:
    # one error per place: a family's three names, or a call's two complaints about one argument, are one mistake there
    errors: list[Diagnostic] = []
    for e in checker.errors:
        if not any((e.path, e.span) == (kept.path, kept.span) for kept in errors):
            errors.append(e)
    return SpecError(
        errors or [Diagnostic(spec_file.path, s.Span(1, 1, 1, 1), "invalid spec")], spec_file.source
    )


def _check(spec_file: s.SpecFile, search: list[Path]) -> CheckResult:
    _load_components_beside(Path(spec_file.path))
    loader = Binder(spec_file.path, spec_file.source)
    introduced: dict[
        str, tuple[s.Span, str, list[str]]
    ] = {}  # params a variant adds to its parent's
    task = _load_with_extends(spec_file, loader, search, introduced=introduced)
    if task is None or loader.errors:
        raise _fail(loader, spec_file)
    task, reported_file = _pop_reported_file(task)
    params_blocks = task.blocks("params")
    params = {a.name: a.value for a in params_blocks[0].attributes()} if params_blocks else {}
    checker = _Checker(spec_file.path, spec_file.source, params)
    checker.quiet_names = Binder.stray_names(
        m.TaskSpec, task
    )  # `paams { dedup = ... }`: one error, at the block
    checker.warnings.extend(loader.warnings)
    for name, value in params.items():
        if isinstance(value, (s.Ref, s.Call)):
            checker.error(
                value.span,
                f"parameter {name!r} must be a literal value (text, number, true/false, list or object)",
            )
    substitution = _Substitution(params, checker)
    task = replace(task, body=substitution.body(task.body))
    task = _apply_match_defaults(task, checker)
    if checker.errors:
        raise _fail(checker, spec_file)
    # every similarity block declared, bound or not: a reference to one that has an error stays silent
    checker.similarity_blocks = {
        st.labels[0]
        for st in task.body
        if isinstance(st, s.Block) and st.type == "similarity" and st.labels
    }
    checker.normaliser_blocks = {
        st.labels[0]
        for st in task.body
        if isinstance(st, s.Block) and st.type == "normaliser" and st.labels
    }
    spec = checker.bind(m.TaskSpec, task, checker)
    side = _reported_beside(reported_file, checker) if reported_file else None
    if spec is not None and not checker.errors:
        spec = _resolve(replace(spec, path=spec_file.path), checker, side)
    if side is not None:
        checker.errors.extend(side[0].errors)
        checker.warnings.extend(side[0].warnings)
    for name, value in params.items():
        if (
            name not in substitution.used and name in introduced
        ):  # a variant setting a param its parent lacks: a typo, never a no-op
            span, parent, declared = introduced[name]
            close = difflib.get_close_matches(name, declared, n=1)
            checker.error(
                span,
                f"unknown param {name!r} ({parent} declares: {', '.join(declared) or 'none'})",
                (f"did you mean {close[0]!r}? " if close else "")
                + "a variant sets its parent's params; a param of its own must be used (params.x or {x})",
            )
        elif name not in substitution.used:
            checker.warn(
                value.span,
                f"parameter {name!r} is never used",
                "remove it or refer to it as params." + name,
            )
    if checker.errors or spec is None:
        raise _fail(checker, spec_file)
    return CheckResult(spec, checker.warnings, spec_file.source)


def _load_components_beside(spec_path: Path) -> None:
    """The component folders the operator allowed (``--components``, PROCBENCH_COMPONENTS); never the spec's own.

    A ``components/`` folder beside the spec is only noted: a name the spec uses that a file there defines
    is then reported with that file and the flag that allows it (docs/submissions.md, threat model).
    """
    if spec_path.is_file():  # text checked in memory has no folder of its own
        registry.note_folder_beside_spec(spec_path.parent)
    try:
        registry.load_operator_components()
    except (
        registry.ComponentLoadError
    ) as exc:  # the line is in the .py file, not the spec: no source to show
        raise SpecError(
            [
                Diagnostic(
                    p.path or p.origin,
                    s.Span(p.line or 1, p.column or 1, p.line or 1, p.column or 1),
                    p.message,
                    p.hint,
                )
                for p in exc.problems
            ]
        ) from None


# ---------------------------------------------------------------------------------------------
# resolution: every name against what the spec declares and its components promise


def _defaults(call: m.ComponentCall) -> dict[str, Any]:
    comp = registry.get(call.kind, call.name)
    return {**{p.name: p.default for p in comp.params if not p.required}, **call.kwargs_dict()}


def _resolve(
    spec: m.TaskSpec, ck: _Checker, side: tuple[_Checker, tuple[m.ReportedRow, ...]] | None = None
) -> m.TaskSpec | None:
    """The bound spec checked as a whole; ``side``: the checker and rows of its reported file."""
    data, pred, score = spec.data, spec.predictions, spec.score

    # data ------------------------------------------------------------------------------------
    if data.reader is None and not data.sources:
        ck.error(
            m.span_of(data),
            "the data block needs either `reader = component(...)` or at least one source block",
            'e.g. source gold { format = "jsonl"  path = "bench/{split}.jsonl" }',
        )
    if data.reader is not None and (
        data.sources or data.fields or data.labels or data.id_path or data.explode
    ):
        ck.error(
            m.span_of(data, "reader"),
            "a data block with a reader component declares no sources, id, fields or labels",
            "the reader's contract says what it provides (procbench components)",
        )
    from procbench.dsl.lock import data_path_problems

    for src in data.sources:  # a spec is untrusted input: what it reads stays under the data root
        for problem in data_path_problems(f"source {src.name!r}: path", src.path):
            ck.error(
                m.span_of(src, "path"),
                problem,
                "data paths are relative to the data root, with '/' and no '..'",
            )
    for rule in data.labels:
        for path, _, _ in rule.members:
            for problem in data_path_problems(f"label {rule.name!r}: membership path", path):
                ck.error(
                    m.span_of(rule),
                    problem,
                    "data paths are relative to the data root, with '/' and no '..'",
                )
    if data.sources and data.sources[0].key is not None:
        ck.error(
            m.span_of(data.sources[0], "key"),
            "the first source is the primary one and takes no `key`",
            "list the source that defines the items first",
        )
    if data.reader is None and data.sources and not data.id_path:
        ck.error(
            m.span_of(data),
            "the data block needs `id = <source>.<field>` to identify items",
            "e.g. id = gold.id",
        )
    if (
        data.id_path[:1] == ("#key",) and data.sources
    ):  # key(<source>): the keys of the primary JSON object
        primary = data.sources[0]
        if data.id_path[1] != primary.name and data.id_path[1] in {
            src.name for src in data.sources
        }:
            ck.error(
                m.span_of(data, "id_path"),
                f"key({data.id_path[1]}) names a joined source; the id comes from the primary one",
                f"key({primary.name})",
            )
        elif data.id_path[1] == primary.name and primary.format != "json":
            ck.error(
                m.span_of(data, "id_path"),
                f"key({primary.name}) needs a json source whose top level is an object {{id: record}}; {primary.name!r} is {primary.format}",
                "use a path into the record (e.g. gold.id) or row_index()",
            )
    if pred.reader is None:
        if pred.format == "custom":
            ck.error(m.span_of(pred, "format"), 'format = "custom" needs `reader = component(...)`')
        if not pred.fields:
            ck.error(
                m.span_of(pred),
                "the predictions block needs a schema block (or a reader component)",
                "e.g. schema { id = str  answers = list(str) }",
            )
    elif pred.fields:
        ck.error(
            m.span_of(pred, "fields"),
            "a predictions block with a reader component has no schema",
            "the component's contract is its schema (procbench components)",
        )
    if score.scorer is None and not score.matches and not score.measures:
        ck.error(
            m.span_of(score),
            "the score block needs `scorer = component(...)`, match blocks or measure blocks",
        )
    if (
        score.aggregate is None
        and (score.scorer is not None or score.matches)
        and not score.measures
    ):
        ck.error(
            m.span_of(score),
            "the score block needs `aggregate = component(...)` for its "
            + ("scorer's" if score.scorer else "match blocks'")
            + " per-item values",
            'e.g. aggregate = mean(), or measure blocks over its values: measure total { value = score  aggregate = "sum" }',
        )
    if score.scorer is not None and score.matches:
        ck.error(
            m.span_of(score, "scorer"),
            "a score block uses either a scorer component or match blocks, not both",
        )
    if score.aligns and (score.scorer is not None or score.matches):
        ck.error(
            m.span_of(score, "aligns"),
            "a score block with align blocks has no scorer component or match blocks",
            "count with align blocks, report with measures",
        )
    if score.aligns and not score.measures:
        ck.error(
            m.span_of(score, "aligns"),
            "an align block's counts are reported by measure blocks",
            "e.g. measure exclusive { counts = [node.XOR]  stats = [p_correct, p_total, r_correct, r_total] }",
        )
    if score.derive is not None and score.scorer is not None:
        ck.error(
            m.span_of(score, "derive"),
            "derive gives the fields of match and measure blocks; a scorer component reads the records itself",
            "remove `derive`, or compare its fields with match blocks",
        )
    if score.scorer is not None:  # metadata keys are scorer parameters, filled from the submission
        params = [p.name for p in registry.get("scorer", score.scorer.name).params]
        for param, _ in score.metadata_params:
            if param not in params:
                ck.unknown(
                    m.span_of(score, "metadata_params"),
                    f"parameter of {score.scorer.name}() in metadata",
                    param,
                    params,
                )
    elif score.metadata_params:
        ck.error(
            m.span_of(score, "metadata_params"),
            "metadata fills scorer parameters: it needs `scorer = component(...)`",
        )
    if ck.errors:
        return None

    reader = registry.get("reader", data.reader.name).contract if data.reader else None
    gold_fields = dict(reader.fields) if reader else data.field_types()
    label_values: dict[str, tuple[str, ...] | None] = (
        {k: (v or None) for k, v in reader.labels.items()}
        if reader
        else {r.name: r.values() for r in data.labels}
    )
    pred_fields = (
        dict(registry.get("predictions", pred.reader.name).contract.fields)
        if pred.reader
        else dict(pred.fields)
    )
    # what the match and measure blocks compare: the records' fields, or those the deriver gives
    score_gold, score_pred = gold_fields, pred_fields
    if score.derive is not None:
        score_gold = score_pred = _check_derive(
            ck, score.derive, m.span_of(score, "derive"), gold_fields, pred_fields
        )

    # matches: default outputs, types along the pipeline ---------------------------------------
    matches = []
    for match in score.matches:
        outputs = match.outputs or (f"{match.name}_p", f"{match.name}_r", f"{match.name}_f1")
        matches.append(replace(match, outputs=outputs))
        _check_flow(ck, match, score_gold, score_pred)
    scorer_emits: tuple[str, ...] = tuple(o for mt in matches for o in mt.outputs)
    aligns, walked, unsettled = _check_aligns(ck, score.aligns, score_gold, score_pred)
    scorer_emits += walked
    if score.scorer is not None:
        scorer_emits = registry.get("scorer", score.scorer.name).contract.emitted(
            _defaults(score.scorer)
        )
    scorer_emits += _check_item_values(ck, score, scorer_emits)
    aggregate = (
        registry.get("aggregator", score.aggregate.name).contract if score.aggregate else None
    )
    produced = (
        aggregate.emitted(_defaults(score.aggregate), scorer_emits)
        if aggregate and score.aggregate
        else ()
    )
    measures, measured = _check_measures(
        ck, score.measures, score_gold, score_pred, label_values, scorer_emits, unsettled
    )
    checker_conventions.check(ck, score, measures, measured, score_pred)
    check_generated_names(
        ck, measured
    )  # two outputs under one name (docs/language.md, "Generated names")
    score = replace(score, matches=tuple(matches), measures=measures, aligns=aligns)
    produced = (*produced, *(name for ms, _ in measured for name in ms.outputs))

    # slices ----------------------------------------------------------------------------------
    slices = []
    for sl in spec.slices:
        if (sl.label is None) == (sl.answer_label is None):
            ck.error(
                m.span_of(sl),
                f"slice {sl.name!r} needs exactly one of `label = <item label>` or `answer_label = <answer label>`",
            )
            continue
        slices.append(
            replace(
                sl,
                kind="label" if sl.label else "answer_label",
                key=sl.label or sl.answer_label or "",
            )
        )
        _check_value_labels(ck, sl, label_values.get(sl.label) if sl.label else None)

    # names -----------------------------------------------------------------------------------
    declared = {
        mt.name for mt in spec.metrics
    }  # a measure's outputs need no metric block of their own
    implied = [
        m.MetricSpec(
            name, name, ms.name, "", metric.higher_is_better, metric.percent, {"": m.span_of(ms)}
        )
        for ms, metric in measured
        for name in ms.outputs
        if name not in declared
    ]
    metrics = (*spec.metrics, *implied)
    metric_names = [mt.name for mt in metrics]
    tables: dict[str, list[str] | None] = {
        "split": list(data.splits),
        "source": [src.name for src in data.sources],
        "path_root": [src.name for src in data.sources]
        + ([data.explode.name] if data.explode else []),
        "field": list(gold_fields),
        "score_field": list(score_gold),
        "gold_field": list(gold_fields),
        "prediction_field": list(score_pred),
        "schema_field": list(
            pred_fields
        ),  # the file's own fields (the id), before a deriver turns records into score fields
        "label": list(label_values),
        "answer_label": [r.name for r in data.answer_labels],
        # a metric block naming nothing produced is the one error of a misspelt declaration: what it meant to declare stays known
        "metric": metric_names
        + (
            [n for n in produced if n not in metric_names]
            if any(mt.name not in produced for mt in spec.metrics)
            else []
        ),
        "slice": [sl.name for sl in spec.slices],
        "per_item_value": list(scorer_emits),
    }
    files = [(ck, spec.reported)] + (
        [side] if side is not None else []
    )  # the spec, and its reported file
    for checker, _ in files:
        reported_names: set[tuple[str, str]] = set()
        for ref in checker.references:
            known = tables.get(ref.namespace)
            # the outputs of one match block (inputs_p, inputs_r) unknown together are one misspelt block name
            stem = (
                ("per_item_stem", ref.name.rpartition("_")[0])
                if ref.namespace == "per_item_value" and "_" in ref.name
                else None
            )
            if (
                known is not None
                and ref.name not in known
                and (ref.namespace, ref.name) not in reported_names
                and stem not in reported_names
            ):
                reported_names.add(
                    (ref.namespace, ref.name)
                )  # one misspelt name used in several places: one error
                if stem is not None:
                    reported_names.add(stem)
                checker.unknown(ref.span, ref.what, ref.name, known)
    if score.scorer is not None and score.scorer.name == "field_match":
        _check_field_match(ck, score.scorer, gold_fields, pred_fields)
    used_sources = {ref.name for ref in ck.references if ref.namespace in ("source", "path_root")}
    for src in data.sources:
        if src.name not in used_sources:
            ck.warn(
                m.span_of(src),
                f"source {src.name!r} is never used",
                "bind one of its fields in fields/labels or remove it",
            )
    for nb in spec.normalisers:
        if nb.name not in ck.used_normalisers:
            ck.warn(
                m.span_of(nb),
                f"normaliser {nb.name!r} is never used",
                "refer to it from a match block or remove it",
            )
    for sb in spec.similarities:
        if sb.name not in ck.used_similarities:
            ck.warn(
                m.span_of(sb),
                f"similarity {sb.name!r} is never used",
                "refer to it from a match block (similarity = name) or remove it",
            )
    # metrics ---------------------------------------------------------------------------------
    if not metrics:
        ck.error(
            m.span_of(spec),
            "the task declares no metric",
            'add `metric name { display = "..." }` for each number the aggregator returns',
        )
    _check_formula_cycles(ck, measures)
    seen: dict[str, m.MetricSpec] = {}
    unproduced_stems: set[str] = set()
    for mt in spec.metrics:
        if mt.name in seen:
            ck.error(
                m.span_of(mt, "<label>"),
                f"metric {mt.name!r} is declared twice",
                f"first on line {m.span_of(seen[mt.name], '<label>').line}",
            )
        seen[mt.name] = mt
        if mt.name not in produced:
            producers = []
            if score.aggregate is not None and aggregate is not None:
                producers.append(
                    f"{score.aggregate.name}()"
                    + (
                        f" over the scorer's values ({', '.join(scorer_emits)})"
                        if aggregate.emits == registry.SAME_AS_SCORER
                        else ""
                    )
                )
            if measures:
                producers.append("a measure")
            who = " or ".join(producers)
            stem = re.sub(
                r"_(p|r|f1)$", "", mt.name
            )  # a measure's _p/_r/_f1 blocks name one misspelt measure: one error
            if stem not in unproduced_stems:
                unproduced_stems.add(stem)
                ck.unknown(
                    m.span_of(mt, "<label>"),
                    f"metric (not produced by {who or 'anything'})",
                    mt.name,
                    list(produced),
                )
    undeclared = [name for name in produced if name not in seen]
    if (
        undeclared
        and spec.metrics
        and aggregate is not None
        and aggregate.emits == registry.SAME_AS_SCORER
        and score.aggregate is not None
    ):  # a component's extras are its own design
        ck.warn(
            m.span_of(spec.metrics[0], "<label>"),
            f"{score.aggregate.name}() also produces {', '.join(undeclared)}, which no metric block declares",
            "they are computed but not shown or stored",
        )

    # reported rows on slices: the value must be one the slice can have --------------------------
    for checker, rows in files:
        for row in rows:
            if row.slice is None:
                continue
            sl = next((x for x in slices if x.name == row.slice[0]), None)
            # a value the slice's value labels already name wrongly (a map label misspelt): reported there, once
            mislabelled = {
                (x.name, v)
                for x in slices
                if x.kind == "label"
                for v, _ in x.values
                if v not in (label_values.get(x.key) or (v,))
            }
            values = label_values.get(sl.key) if sl is not None and sl.kind == "label" else None
            if (
                values is not None
                and row.slice[1] not in values
                and (sl.name, row.slice[1]) not in mislabelled
            ):
                checker.unknown(
                    m.span_of(row, "value"),
                    f"value of slice {sl.name!r}",
                    row.slice[1],
                    list(values),
                )

    # templates (syntax only: rendering happens in a sandbox) ----------------------------------
    _check_templates(spec, ck)

    # imports ---------------------------------------------------------------------------------
    for imp in spec.imports:
        if imp.kind == "choice" and imp.choices < 2:
            ck.error(
                m.span_of(imp), f'import {imp.name!r}: kind = "choice" needs `choices = N` (N >= 2)'
            )
        if imp.kind == "text_list" and not imp.separator:
            ck.error(
                m.span_of(imp), f'import {imp.name!r}: kind = "text_list" needs `separator = "..."`'
            )
    if ck.errors:
        return None
    if side is not None and side[0].errors:
        return None
    params = tuple(sorted((k, v) for k, v in ck.params_literal().items()))
    reported = spec.reported + (
        side[1] if side is not None else ()
    )  # the spec's rows, then its reported file's
    return replace(
        spec, score=score, slices=tuple(slices), params=params, metrics=metrics, reported=reported
    )


def _check_value_labels(ck: _Checker, sl: m.SliceSpec, values: tuple[str, ...] | None) -> None:
    """A slice's value labels name values the slice can have, when the spec or the reader fixes them (a map with a default,
    membership(), a reader's declared labels); a label read from a path or an answer label is checked by `check --data`."""
    if not sl.values or values is None:
        return
    block = m.span_of(sl, "values")
    inside = [(span, value) for span, value in ck.value_label_spans if _within(span, block)]
    for value, _ in sl.values:
        if value in values:
            continue
        span = next((sp for sp, v in inside if v == value), block)
        close = difflib.get_close_matches(value, list(values), n=1, cutoff=0.6)
        hint = (
            (f"did you mean {close[0]!r}? " if close else "")
            + f"label {sl.label!r} has the values "
            + ", ".join(repr(v) for v in values)
        )
        ck.error(
            span,
            f"slice {sl.name!r} labels the value {value!r}, which its label {sl.label!r} never has",
            hint,
        )


def _within(inner: s.Span, outer: s.Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _check_formula_cycles(ck: _Checker, measures: tuple[m.MeasureSpec, ...]) -> None:
    """A metric computed from itself, directly or through others, is one error at the first measure of the cycle."""
    formulas = {ms.name: ms.formula for ms in measures if ms.formula is not None}
    state: dict[str, int] = {}  # 1 = on the path, 2 = done

    def visit(name: str, path: tuple[str, ...]) -> bool:
        if state.get(name) == 2 or name not in formulas:
            return False
        if state.get(name) == 1:
            cycle = path[path.index(name) :] + (name,)
            where = next(ms for ms in measures if ms.name == cycle[0])
            ck.error(
                m.span_of(where, "formula"),
                f"metrics computed from each other: {' -> '.join(cycle)}",
                "a measure's from may use only metrics computed without it",
            )
            return True
        state[name] = 1
        found = any(visit(dep, (*path, name)) for dep in formula_names(formulas[name]))
        state[name] = 2
        return found

    for name in formulas:
        if visit(name, ()):
            return


def _check_measures(
    ck: _Checker,
    measures: tuple[m.MeasureSpec, ...],
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
    label_values: Mapping[str, tuple[str, ...] | None],
    scorer_emits: Sequence[str] = (),
    unsettled: Collection[str] = (),
) -> tuple[tuple[m.MeasureSpec, ...], list[tuple[m.MeasureSpec, Any]]]:
    """Each measure's metric built and checked: aggregation, field types, class set; its outputs filled in.

    ``unsettled`` names count blocks with an error already reported: values under them are not reported again.
    """
    from procbench.runners.metrics import AGGREGATION_DOCS, CLASS_AGGREGATIONS
    from procbench.runners.metrics._base import Value
    from procbench.runners.metrics._counts import MicroCounts

    out: list[m.MeasureSpec] = []
    built: list[tuple[m.MeasureSpec, Any]] = []
    names: dict[str, m.MeasureSpec] = {}
    quiet = set(
        unsettled
    )  # count prefixes already reported (or settled upstream): one misspelt block, one error
    for ms in measures:
        if ms.name in names:
            ck.error(
                m.span_of(ms, "<label>"),
                f"measure {ms.name!r} is declared twice",
                f"first on line {m.span_of(names[ms.name], '<label>').line}",
            )
            continue
        names[ms.name] = ms
        if ms.divide_by == 0:
            ck.error(m.span_of(ms, "divide_by"), f"measure {ms.name!r}: divide_by cannot be 0")
        built.append(
            (replace(ms, outputs=(ms.name,)), Value())
        )  # its name is known even if a check below fails: no second error
        for (
            label,
            value,
        ) in ms.where:  # label names are resolved with the other references; values here
            values = label_values.get(label)
            if values is not None and value not in values:
                ck.unknown(
                    m.span_of(ms, "where"),
                    f"value of label {label!r} in where",
                    value,
                    list(values),
                )
        if ms.formula is not None:
            if (
                ms.metric is not None
                or ms.gold is not None
                or ms.prediction is not None
                or ms.value is not None
                or ms.normaliser
                or ms.where
                or ms.aggregate
                or ms.counts
                or ms.stats
            ):
                ck.error(
                    m.span_of(ms, "formula"),
                    f"measure {ms.name!r}: `from = ...` computes it from other metrics: "
                    "no metric, value, gold, prediction, counts, stats, normaliser, where or aggregate",
                )
                continue
            checked = replace(ms, outputs=(ms.name,))
            out.append(checked)
            built[-1] = (checked, Value())
            continue
        if ms.counts or ms.stats:
            if (
                ms.metric is not None
                or ms.gold is not None
                or ms.prediction is not None
                or ms.value is not None
                or ms.normaliser
                or ms.where
            ):
                ck.error(
                    m.span_of(ms, "counts"),
                    f"measure {ms.name!r}: `counts = [...]` pools the scorer's count values: no metric, value, gold, prediction, normaliser or where",
                )
                continue
            if len(ms.stats) not in (2, 4):
                ck.error(
                    m.span_of(ms, "stats" if ms.stats else "<label>"),
                    f"measure {ms.name!r} needs stats = [numerator, denominator] or [p_num, p_den, r_num, r_den] (under counts = [<prefix>, ...] if given)",
                    "e.g. measure exclusive { counts = [node.XOR]  stats = [p_correct, p_total, r_correct, r_total] }",
                )
                continue
            if ms.aggregate not in ("", "micro"):
                ck.error(
                    m.span_of(ms, "aggregate"),
                    f'measure {ms.name!r}: counts are pooled over the items ("micro"), not {ms.aggregate!r}',
                )
                continue
            counted = MicroCounts(ms.counts, ms.stats)
            unknown = [name for name in counted.reads if name not in scorer_emits]
            if unknown:
                built[-1] = (
                    replace(ms, outputs=counted.outputs(ms.name, "micro")),
                    Value(),
                )  # its outputs are known: no error for each
                reported = [name for name in unknown if name.split(".", 1)[0] not in quiet]
                if reported:
                    ck.unknown(
                        m.span_of(ms, "counts"),
                        f"per-item value of measure {ms.name!r}",
                        reported[0],
                        list(scorer_emits),
                    )
                quiet.update(name.split(".", 1)[0] for name in unknown)
                continue
            checked = replace(ms, aggregate="micro", outputs=counted.outputs(ms.name, "micro"))
            out.append(checked)
            built[-1] = (checked, counted)
            continue
        if ms.value is not None:
            if (
                ms.metric is not None
                or ms.gold is not None
                or ms.prediction is not None
                or ms.normaliser
            ):
                ck.error(
                    m.span_of(ms, "value"),
                    f"measure {ms.name!r}: `value = ...` takes the scorer's per-item value as it is: no metric, gold, prediction or normaliser",
                )
                continue
            value_metric = Value()
            aggregate = ms.aggregate or value_metric.aggregations[0]
            if aggregate not in value_metric.aggregations:
                ck.error(
                    m.span_of(ms, "aggregate"),
                    f'measure {ms.name!r}: a per-item value aggregates as "mean" or "sum", not {aggregate!r}',
                )
                continue
            checked = replace(ms, aggregate=aggregate, outputs=(ms.name,))
            out.append(checked)
            built[-1] = (checked, value_metric)
            continue
        missing = [part for part in ("metric", "gold", "prediction") if getattr(ms, part) is None]
        if missing:
            ck.error(
                m.span_of(ms),
                f"measure {ms.name!r} needs {', '.join(missing)}",
                "e.g. measure accuracy { metric = accuracy()  gold = label  prediction = label }, or value = <per-item value> for a scorer's values",
            )
            continue
        call = ms.metric
        registered = registry.get("metric", call.name)
        metric = registered.build(**call.kwargs_dict())
        aggregate = ms.aggregate or metric.aggregations[0]
        built[-1] = (
            replace(
                ms,
                outputs=metric.outputs(
                    ms.name,
                    aggregate if aggregate in metric.aggregations else metric.aggregations[0],
                ),
            ),
            metric,
        )
        if aggregate not in metric.aggregations:
            allowed = ", ".join(f'"{a}" ({AGGREGATION_DOCS[a]})' for a in metric.aggregations)
            ck.error(
                m.span_of(ms, "aggregate"),
                f"measure {ms.name!r}: {call.name}() cannot aggregate as {aggregate!r}; it aggregates as {allowed}",
                registered.contract.aggregation_hint,
            )
            continue
        gtype, ptype = gold.get(ms.gold), pred.get(ms.prediction)
        refusal = metric.refuses(
            gtype, ptype, aggregate
        )  # a combination whose meaning would be ambiguous: the hint names the right form
        if refusal is not None:
            ck.error(m.span_of(ms, refusal[0]), f"measure {ms.name!r}: {refusal[1]}", refusal[2])
            continue
        metric = metric.declared(gtype, ptype, aggregate)
        gold_types, pred_types = metric.accepts(aggregate)
        ok = True
        for side, name, ftype, wanted, part in (
            ("gold", ms.gold, gtype, gold_types, "gold"),
            ("prediction", ms.prediction, ptype, pred_types, "prediction"),
        ):
            if ftype is not None and not any(ftype.fits(w) for w in wanted):
                spelled = " or ".join(w.spelling() for w in wanted)
                ck.error(
                    m.span_of(ms, part),
                    f"measure {ms.name!r}: {side} field {name!r} is {ftype.spelling()}, but {call.name}() with aggregate = {aggregate!r} compares {spelled}",
                    f"{call.name}(): {metric.library}"
                    if metric.library
                    else f"declare the {side} field {spelled}",
                )
                ok = False
        if (
            ok
            and metric.same_type
            and gtype is not None
            and ptype is not None
            and not (gtype.fits(ptype) or ptype.fits(gtype))
            and "any" not in (gtype.kind, ptype.kind)
        ):
            ck.error(
                m.span_of(ms, "prediction"),
                f"measure {ms.name!r}: gold field {ms.gold!r} is {gtype.spelling()} but prediction field {ms.prediction!r} is {ptype.spelling()}; "
                f"{call.name}() compares values of one type",
                "declare both fields with the same type (e.g. both enum(...) or both int)",
            )
            ok = False
        if ms.normaliser and not metric.text:
            ck.error(
                m.span_of(ms, "normaliser"),
                f"measure {ms.name!r}: {call.name}() does not compare text; a normaliser does not apply",
                "normalisers belong to text metrics (exact_match, bleu, chrf, ter, rouge)",
            )
            ok = False
        if "class_set" in registered.contract.requires or aggregate in CLASS_AGGREGATIONS:
            classes = _classes(ck, ms, metric, gtype, label_values)
            if classes is None:
                continue
            call = replace(
                call,
                kwargs=tuple(kv for kv in call.kwargs if kv[0] != "labels")
                + (("labels", tuple(classes)),),
            )
            metric = registered.build(**call.kwargs_dict())
        if not ok:
            continue
        checked = replace(
            ms, metric=call, aggregate=aggregate, outputs=metric.outputs(ms.name, aggregate)
        )
        out.append(checked)
        built[-1] = (checked, metric)
    return tuple(out), built


def _classes(
    ck: _Checker,
    ms: m.MeasureSpec,
    metric: Any,
    gtype: FieldType | None,
    label_values: Mapping[str, tuple[str, ...] | None],
) -> list[str] | None:
    """The class set of a class aggregation: the metric's ``labels``, else the gold field's enum values."""
    enum = [str(v) for v in gtype.values] if gtype is not None and gtype.kind == "enum" else None
    declared = list(metric.labels)
    if not declared and enum is None:
        ck.error(
            m.span_of(ms, "metric"),
            f"measure {ms.name!r}: {ms.metric.name}() needs the class set",
            f'give labels = ["a", "b", ...] to {ms.metric.name}(), or type the gold field {ms.gold!r} as enum(a, b, ...)',
        )
        return None
    if declared and enum is not None:
        stray = [c for c in declared if c not in enum]
        if stray:
            ck.error(
                m.span_of(ms, "metric"),
                f"measure {ms.name!r}: class {stray[0]!r} is not a value of gold field {ms.gold!r} ({gtype.spelling()})",
                "the class set must be values the data can have",
            )
            return None
    if len(set(declared or enum or [])) != len(declared or enum or []):
        ck.error(m.span_of(ms, "metric"), f"measure {ms.name!r}: a class is listed twice")
        return None
    return declared or enum


def _check_flow(
    ck: _Checker, match: m.MatchSpec, gold: Mapping[str, FieldType], pred: Mapping[str, FieldType]
) -> None:
    """The types along a match block: list fields → filters → normalisers → similarity → matcher."""
    matcher = registry.get("matcher", match.matcher.name).contract
    wanted = matcher.takes or LIST_OF_TEXT
    for side, name, fields, part in (
        ("gold", match.gold, gold, "gold"),
        ("prediction", match.prediction, pred, "prediction"),
    ):
        ftype = fields.get(name)
        if (
            side,
            name,
        ) in ck.flow_reported:  # several match blocks share the field (defaults): one error
            continue
        if ftype is not None and not ftype.fits(wanted):
            ck.flow_reported.add((side, name))
            ck.error(
                m.span_of(match, part),
                f"match {match.name!r}: {side} field {name!r} is {ftype.spelling()}, but {match.matcher.name}() matches {wanted.spelling()}",
                "match blocks compare lists of answers; for a single value use a scorer such as field_match()",
            )
    for f in match.filters:
        takes = registry.get("filter", f.name).contract.takes
        if takes is not None and not LIST_OF_TEXT.fits(takes):
            ck.error(
                m.span_of(f),
                f"filter {f.name}() takes {takes.spelling()}, not the answer list (list(str))",
            )
    for steps, part in (
        (match.normaliser, "normaliser"),
        (match.similarity_normaliser, "similarity_normaliser"),
    ):
        for step in steps:
            contract = registry.get("normaliser", step.name).contract
            if contract.gives is not None and not contract.gives.fits(TEXT):
                ck.error(
                    m.span_of(match, part),
                    f"normaliser step {step.name}() gives {contract.gives.spelling()}, but an answer must stay text",
                    "split_on() belongs in prediction parsing, not in a match normaliser",
                )
    # an unknown gold field is reported where it is named; the answers' type then comes from the other side, or is not
    # guessed at all (one mistake, one error: a guessed str would also fail a record similarity)
    ftype = gold.get(match.gold) or pred.get(match.prediction)
    if ftype is None:
        return
    answer = ftype.item if ftype.kind == "list" and ftype.item is not None else TEXT
    _check_similarity(
        ck, match.similarity, answer, m.span_of(match, "similarity"), f"match {match.name!r}"
    )


def _member_type(record: FieldType, path: str) -> FieldType | None:
    """The type of a dotted member path of a record type (through optional records); None where a step is missing."""
    current: FieldType | None = record
    for name in path.split("."):
        while current is not None and current.kind == "optional" and current.item is not None:
            current = current.item
        if current is None or current.kind != "record":
            return None
        current = current.members().get(name)
    return current


def _unwrapped(ftype: FieldType) -> FieldType:
    while ftype.kind == "optional" and ftype.item is not None:
        ftype = ftype.item
    return ftype


def _check_members(
    ck: _Checker, record: FieldType, paths: Sequence[str], span: s.Span, where: str
) -> bool:
    ok = True
    for path in paths:
        if _member_type(record, path) is None:
            members = (
                list(_unwrapped(record).members()) if _unwrapped(record).kind == "record" else []
            )
            ck.unknown(span, f"member of the records {where} compares", path, members)
            ok = False
    return ok


def _check_composed(
    ck: _Checker, call: m.ComponentCall, answer: FieldType, span: s.Span, where: str
) -> bool:
    """Types along a composed similarity (on_field, cases, all_of, at_least, one); False when ``call`` is not one."""
    args = dict(call.kwargs)
    if call.name == "one":
        return True
    own = call.at.get("") if call.at else None
    if (
        own is not None and own != s.NOWHERE
    ):  # written in a similarity block: report there, once, whichever use reached it
        span, where = own, "the similarity written here"
    if call.name == "at_least":
        _check_similarity(ck, args["similarity"], answer, span, where)
        return True
    if call.name not in ("on_field", "cases", "all_of"):
        return False
    if _unwrapped(answer).kind != "record":
        ck.error(
            span,
            f"{where}: a record similarity ({call.name.replace('_', ' ')}) compares records, but the answers are {answer.spelling()}",
            "use a text similarity",
        )
        return True
    if call.name == "on_field":
        member = _member_type(answer, args["field"])
        if member is None:
            _check_members(ck, answer, [args["field"]], span, where)
        else:
            _check_similarity(
                ck,
                args["similarity"],
                _unwrapped(member),
                span,
                f"{where}, member {args['field']!r}",
            )
        return True
    if not _check_members(
        ck, answer, [*args["same"], *([args["field"]] if call.name == "cases" else [])], span, where
    ):
        return True
    if call.name == "cases":
        chooser = _unwrapped(_member_type(answer, args["field"]) or FieldType("any"))
        when_span = call.at.get("when", span) if own is not None and own != s.NOWHERE else span
        for value, part in args["when"]:
            if chooser.kind == "enum" and value not in chooser.values:
                ck.unknown(
                    when_span,
                    f"value of {args['field']!r} in when",
                    value,
                    [str(v) for v in chooser.values],
                )
            _check_similarity(ck, part, answer, span, f"{where}, when {value}")
        _check_similarity(ck, args["otherwise"], answer, span, f"{where}, otherwise")
    else:
        for part in args["parts"]:
            _check_similarity(ck, part, answer, span, where)
    return True


def _check_item_values(ck: _Checker, score: m.ScoreSpec, emitted: Sequence[str]) -> tuple[str, ...]:
    """Per-item formulas read the scorer's values, the flags and values computed before them; they add their names."""
    known = [*emitted]
    flags = [name for name, _ in score.flags]
    if score.values and score.scorer is None and not score.aligns and not score.matches:
        ck.error(
            m.span_of(score, "values"),
            "a value block computes from the per-item values of a scorer, match or align blocks",
        )
    for name in flags:
        if name in emitted:
            ck.error(
                m.span_of(score, "flags"),
                f"flag {name!r} has the name of a per-item value",
                "give the flag another name",
            )
    for value in score.values:
        if (
            value.name in known or value.name in flags
        ):  # a value named like a flag would hide it from later formulas
            ck.error(
                m.span_of(value),
                f"value {value.name!r} is already a per-item value or flag",
                "give it another name",
            )
            continue
        for name in formula_names(value.formula):
            if name not in known and name not in flags:
                ck.unknown(
                    m.span_of(value, "formula"),
                    f"per-item value or flag in value {value.name!r}",
                    name,
                    [*known, *flags],
                )
        known.append(value.name)
    return tuple(v.name for v in score.values)


def _check_aligns(
    ck: _Checker,
    aligns: Sequence[m.AlignSpec],
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> tuple[tuple[m.AlignSpec, ...], tuple[str, ...], frozenset[str]]:
    """Types along each align block, its counts' kinds filled in from the enums, and the per-item values it writes.

    Also the names of the count blocks of an align block with an error: what measures read from them is not
    reported again (one mistake, one error).
    """
    checked: list[m.AlignSpec] = []
    keys: list[str] = []
    unsettled: set[str] = set()
    for align in aligns:
        errors_before, checked_before = len(ck.errors), len(checked)
        _check_align(ck, align, gold, pred, keys, checked)
        if (
            len(ck.errors) > errors_before or len(checked) == checked_before
        ):  # not checked: an unknown field, reported later
            unsettled.update(count.name for count in align.counts)
    return tuple(checked), tuple(keys), frozenset(unsettled)


def _check_align(
    ck: _Checker,
    align: m.AlignSpec,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
    keys: list[str],
    checked: list[m.AlignSpec],
) -> None:
    """One align block: its checked form appended to ``checked``, the values it writes to ``keys``."""
    where = f"align {align.name!r}"
    gold_type, pred_type = gold.get(align.gold), pred.get(align.prediction)
    lines = []
    for side, name, ftype in (
        ("gold", align.gold, gold_type),
        ("prediction", align.prediction, pred_type),
    ):
        if ftype is None:
            continue  # an unknown field is reported where it is written
        if ftype.kind != "list" or ftype.item is None or _unwrapped(ftype.item).kind != "record":
            ck.error(
                m.span_of(align, side),
                f"{where}: {side} field {name!r} is {ftype.spelling()}; an align block walks lists of records",
                "a deriver gives lines as list(record(...))",
            )
            continue
        lines.append(ftype.item)
    if len(lines) != 2:
        return
    line = lines[0]
    if lines[0] != lines[1]:
        ck.error(
            m.span_of(align),
            f"{where}: the gold lines are {lines[0].spelling()} but the predicted ones {lines[1].spelling()}",
        )
        return
    _check_members(ck, line, [align.on], m.span_of(align, "on"), where)
    if align.where:
        _check_members(ck, line, [align.where], m.span_of(align, "where"), where)
    on_type = _member_type(line, align.on)
    if on_type is not None:
        _check_similarity(
            ck,
            align.similarity,
            _unwrapped(on_type),
            m.span_of(align, "similarity"),
            f"{where}, aligned on {align.on!r}",
        )
    entity_types: dict[str, FieldType] = {}
    for entities in align.entities:
        ewhere = f"{where}, entities {entities.name!r}"
        if not _check_members(ck, line, entities.places, m.span_of(entities, "places"), ewhere):
            continue
        places = {
            _unwrapped(member)
            for member in (_member_type(line, p) for p in entities.places)
            if member is not None
        }
        if len(places) != 1 or next(iter(places)).kind != "record":
            ck.error(
                m.span_of(entities, "places"),
                f"{ewhere}: the places must hold records of one type, got {', '.join(sorted(t.spelling() for t in places))}",
            )
            continue
        entity = next(iter(places))
        entity_types[entities.name] = entity
        _check_members(ck, entity, entities.same, m.span_of(entities, "same"), ewhere)
        _check_similarity(
            ck, entities.identity, entity, m.span_of(entities, "identity"), f"{ewhere}, identity"
        )
        _check_similarity(
            ck, entities.until, entity, m.span_of(entities, "until"), f"{ewhere}, until"
        )
    counts = []
    for count in align.counts:
        cwhere = f"{where}, count {count.name!r}"
        if count.of is not None and count.of not in entity_types:
            if not any(
                e.name == count.of for e in align.entities
            ):  # else declared, with its error reported there
                ck.unknown(m.span_of(count, "of"), "entities block", count.of, list(entity_types))
            continue
        record = entity_types[count.of] if count.of is not None else line
        by_known = _check_members(ck, record, [count.by], m.span_of(count, "by"), cwhere)
        if not (
            by_known
            and (
                not count.where
                or _check_members(ck, record, [count.where], m.span_of(count, "where"), cwhere)
            )
        ):
            continue
        by_type = _unwrapped(_member_type(record, count.by) or FieldType("any"))
        enum_values = tuple(str(v) for v in by_type.values) if by_type.kind == "enum" else ()
        kinds = count.kinds or enum_values
        if not kinds:
            ck.error(
                m.span_of(count, "by"),
                f"{cwhere}: {count.by!r} is {by_type.spelling()}; name the kinds counted",
                "kinds = [a, b], or give the member an enum type",
            )
            continue
        for kind in kinds:
            if enum_values and kind not in enum_values:
                ck.unknown(
                    m.span_of(count, "kinds"), f"value of {count.by!r}", kind, list(enum_values)
                )
        if not count.stats:
            ck.error(
                m.span_of(count),
                f"{cwhere} counts nothing",
                "stats { total = 1  correct = node_strict }",
            )
        for stat, (source, sim) in count.stats:
            if source == "best" and count.of is None:
                ck.error(
                    m.span_of(count, "stats"),
                    f"{cwhere}, stat {stat!r}: best() keeps an entity's best score; lines are compared once",
                    f"write `{stat} = <similarity>`",
                )
            if sim is not None:
                _check_similarity(
                    ck, sim, record, m.span_of(count, "stats"), f"{cwhere}, stat {stat!r}"
                )
        written = [
            f"{count.name}.{kind}.{side}_{stat}"
            for side in ("p", "r")
            for kind in kinds
            for stat, _ in count.stats
        ]
        repeated = sorted(set(written) & set(keys))
        if repeated:
            ck.error(
                m.span_of(count),
                f"{cwhere} writes {repeated[0]!r}, which another count block writes too",
                "give it other kinds or stats, or another name",
            )
        keys += written
        counts.append(replace(count, kinds=tuple(kinds)))
    keys += [f"{align.name}.{side}_aligned" for side in ("p", "r")]
    checked.append(replace(align, counts=tuple(counts)))


def _check_similarity(
    ck: _Checker, call: m.ComponentCall, answer: FieldType, span: s.Span, where: str
) -> None:
    """The similarity compares what the answers are: text, or records whose fields its parts name."""
    if _check_composed(ck, call, answer, span, where):
        return
    if call.name == "record_mean":
        args = dict(call.kwargs)
        members = answer.members()
        if answer.kind != "record":
            ck.error(
                span,
                f"{where}: a record similarity (same/mean) compares records, but the answers are {answer.spelling()}",
                "use a text similarity",
            )
            return
        for name in (*args.get("same", ()), *(field for field, _ in args.get("parts", ()))):
            if name not in members:
                ck.unknown(span, f"field of the records {where} compares", name, list(members))
        for field, part in args.get("parts", ()):
            if field in members:
                _check_similarity(ck, part, members[field], span, f"{where}, field {field!r}")
        return
    takes = registry.get("similarity", call.name).contract.takes
    if takes is not None and not answer.fits(takes):
        message = f"{where}: similarity {call.name}() compares {takes.spelling()}, but the answers are {answer.spelling()}"
        if (
            "similarity type",
            span,
            message,
        ) not in ck._reported:  # one mistake, one error: a block is reached from many uses
            ck._reported.add(("similarity type", span, message))
            ck.error(span, message)


def _check_derive(
    ck: _Checker,
    call: m.ComponentCall,
    span: s.Span,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> dict[str, FieldType]:
    """The deriver reads fields of the records (``needs``: both; ``gold_needs`` / ``prediction_needs``: one); it gives what the score block compares."""
    contract = registry.get("deriver", call.name).contract
    for side, fields, own in (
        ("gold", gold, contract.gold_needs),
        ("prediction", pred, contract.prediction_needs),
    ):
        for name, wanted in {**contract.needs, **own}.items():
            have = fields.get(name)
            if have is None:
                ck.error(
                    span,
                    f"{call.name}() reads field {name!r}, which the {side} records do not have",
                    f"the {side} fields: {', '.join(fields) or 'none'}",
                )
            elif not have.fits(wanted):
                ck.error(
                    span,
                    f"{call.name}() reads field {name!r} as {wanted.spelling()}, but the {side} records give {have.spelling()}",
                )
    return dict(contract.fields)


def _comparable(ftype: FieldType) -> FieldType:
    """The type a value is compared as: optional(T) as T, an enum of text as str."""
    if ftype.kind == "optional" and ftype.item is not None:
        return _comparable(ftype.item)
    if ftype.kind == "enum" and all(isinstance(v, str) for v in ftype.values):
        return TEXT
    return ftype


def _check_field_match(
    ck: _Checker,
    call: m.ComponentCall,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> None:
    """field_match() compares the two fields' values as text: fields of different types would never (or wrongly) match."""
    args = _defaults(call)
    gold_type, pred_type = gold.get(args["gold_field"]), pred.get(args["prediction_field"])
    if gold_type is None or pred_type is None or "any" in (gold_type.kind, pred_type.kind):
        return  # an unknown name is reported where it is written
    g, p = (
        ft.item if ft.kind == "optional" and ft.item is not None else ft
        for ft in (gold_type, pred_type)
    )
    if g.kind == p.kind == "enum" and {str(v) for v in g.values} == {str(v) for v in p.values}:
        return  # two enums whose values read the same as text: enum("0", "1") and enum(0, 1)
    if _comparable(g) == _comparable(p):
        return
    ck.error(
        m.span_of(call),
        f"field_match(): gold field {args['gold_field']!r} is {gold.get(args['gold_field']).spelling()}, "
        f"prediction field {args['prediction_field']!r} is {pred.get(args['prediction_field']).spelling()}",
        'they are compared as text (1 and "1.0" differ, "03" and 3 too): declare both with one type, or both as enums of the same values',
    )


def _check_templates(spec: m.TaskSpec, ck: _Checker) -> None:
    """Templates are looked up by name at run time (runners.templates): the name must be one that is, its variables ones it gets.

    A spec is untrusted: a template is parsed by the sandbox that renders it, and may access attributes or items
    of the variables it is given only (no ``cycler.__init__.__globals__``, no ``_`` names, no include/import).
    """
    import jinja2
    from jinja2 import meta

    from procbench.runners.template_limits import filter_problems
    from procbench.runners.templates import KNOWN, access_problems, environment

    env = environment()
    for t in spec.templates:
        use = KNOWN.get(t.name)
        if use is None:
            known = ", ".join(f"{k} ({u.purpose})" for k, u in sorted(KNOWN.items()))
            close = difflib.get_close_matches(t.name, list(KNOWN), n=1)
            ck.error(
                m.span_of(t, "<label>"),
                f"unknown template {t.name!r}: nothing looks up a template of that name",
                (f"did you mean {close[0]!r}? " if close else "") + f"known templates: {known}",
            )
            continue
        try:
            parsed = env.parse(t.text)
        except jinja2.TemplateSyntaxError as exc:
            span = m.span_of(t, "text")
            line = span.line + (exc.lineno or 1) - 1
            ck.error(
                s.Span(line, 1 if line != span.line else span.column, line, 2),
                f"template {t.name!r}: {exc.message}",
                "Jinja2 syntax: {{ variable }}, {% if ... %}...{% endif %}",
            )
            continue
        try:
            undeclared = meta.find_undeclared_variables(parsed)
        except (
            jinja2.TemplateAssertionError
        ):  # an unknown filter or test: filter_problems reports it at its place
            undeclared = set()
        for name in sorted(undeclared - set(use.variables)):
            close = difflib.get_close_matches(name, use.variables, n=1)
            ck.error(
                m.span_of(t, "text"),
                f"template {t.name!r} uses the variable {name!r}, which it is not given",
                (f"did you mean {close[0]!r}? " if close else "")
                + f"{t.name} gets: {', '.join(use.variables)}",
            )
        span = m.span_of(t, "text")
        source_lines = ck.source.splitlines()
        access_hint = "use {{ variable }}, filters and {% if %}/{% for %} over the variables; nothing else is reachable"
        limits_hint = "the sandbox refuses this at render: name attributes, filters and tests as text, within the limits of docs/submissions.md"
        found_problems = [
            (*problem, access_hint) for problem in access_problems(parsed, use.variables)
        ]
        found_problems += [(*problem, limits_hint) for problem in filter_problems(parsed)]
        for lineno, what, message, hint in sorted(found_problems, key=lambda problem: problem[0]):
            line = (
                span.line + lineno - 1
            )  # exact for a """long string""", whose lines are the spec's
            start = span.column - 1 if line == span.line else 0
            found = (
                source_lines[line - 1].find(what, start) if 0 < line <= len(source_lines) else -1
            )
            column = found + 1 if found >= 0 else start + 1
            ck.error(
                s.Span(line, column, line, column + max(len(what), 1)),
                f"template {t.name!r}: {message}",
                hint,
            )


__all__ = ["CheckResult", "check_file", "check_text", "literal"]
