"""How the data block's values are read while binding: id paths, field bindings, sources, explode, labels, schema fields, params; and slices' value labels."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from procbench.dsl import checker_data
from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import describe, literal
from procbench.dsl.checker_state import CheckerState, bare_names, texts
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.id_paths import EXPLODE_INDEX, EXPLODE_JOIN, EXPLODE_KEY


class DataReads(CheckerState):
    """Readers of the data block and of slices' value labels."""

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
            return ("#row",)  # procbench.runners.runtime.id_paths.ROW_INDEX
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
            )  # procbench.runners.runtime.id_paths.KEY_ID: the keys of a JSON object {id: record}
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
            fields = texts(entry.pairs) if isinstance(entry, s.ObjectExpr) else None
            if fields is None or set(fields) != {"path", "column", "label"}:
                self.error(
                    entry.span,
                    'each membership entry is { path = "...", column = "...", label = "..." } (text)',
                    usage,
                )
                return None
            members.append((fields["path"], fields["column"], fields["label"]))
        default: str | None = None
        splits: tuple[str, ...] = ()
        for kw in call.kwargs:
            if kw.name == "default" and isinstance(kw.value, s.Str):
                default = kw.value.value
            elif (
                kw.name == "splits"
                and isinstance(kw.value, s.ListExpr)
                and (named := bare_names(kw.value.items)) is not None
            ):
                splits = named
                for name_, item in zip(named, kw.value.items):
                    self.refer("split", name_, item.span)
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
