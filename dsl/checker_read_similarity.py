"""How normaliser and similarity blocks are read while binding: steps, calls, references between blocks, in place of their names."""

from __future__ import annotations

from typing import Any

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import describe
from procbench.dsl.checker_state import CheckerState
from procbench.runners.runtime import registry


class SimilarityReads(CheckerState):
    """Readers of normaliser and similarity blocks and of the names that refer to them."""

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
        resolver = _SimilarityBlocks(self, blocks)
        for b in blocks:
            resolver.resolve(b.name, (b.name,))
        self.similarities_resolved = True
        return blocks

    def after_TaskSpec_normalisers(
        self, blocks: tuple[m.NormaliserBlock, ...]
    ) -> tuple[m.NormaliserBlock, ...]:
        by_name: dict[str, m.NormaliserBlock] = {b.name: b for b in blocks}

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


_USAGE = (
    "write `use = phrase_overlap()`; for records `same = [step]  mean { field = similarity ... }`, "
    "`cases = kind  when { ... }  otherwise = X` or `all = [X, Y]`"
)


class _SimilarityBlocks:
    """Similarity blocks resolved into the calls they stand for, each once, following their references to each other."""

    def __init__(self, ck: CheckerState, blocks: tuple[m.SimilarityBlock, ...]):
        self.ck = ck
        self.by_name: dict[str, m.SimilarityBlock] = {b.name: b for b in blocks}
        self.failed: set[str] = set()

    def resolve(self, name: str, chain: tuple[str, ...]) -> m.ComponentCall | None:
        if name in self.ck.similarities:
            return self.ck.similarities[name]
        if name in self.failed:
            return None
        call = self.build(self.by_name[name], chain)
        if call is None:
            self.failed.add(name)
        else:
            self.ck.similarities[name] = call
        return call

    def deref(self, value: Any, chain: tuple[str, ...]) -> m.ComponentCall | None:
        """A call as written, or the call another block stands for (a cycle is an error)."""
        if isinstance(value, m.ComponentCall):
            return value
        ref = value.parts[0]
        if ref not in self.by_name:
            if ref not in self.ck.similarity_blocks:  # else declared with an error, reported there
                self.ck.unknown(value.span, "similarity block", ref, list(self.by_name))
            return None
        if ref in chain:
            self.ck.error(
                value.span,
                f"similarity cycle: {' -> '.join([*chain, ref])}",
                "a similarity cannot include itself",
            )
            return None
        self.ck.used_similarities.add(ref)
        return self.resolve(ref, (*chain, ref))

    def build(self, b: m.SimilarityBlock, chain: tuple[str, ...]) -> m.ComponentCall | None:
        call = self.form(b, chain)
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

    def form(self, b: m.SimilarityBlock, chain: tuple[str, ...]) -> m.ComponentCall | None:
        """The block's own form, before `at_least` and `on` wrap it."""
        if not self._one_form(b):
            return None
        if b.use is not None:
            if b.same:
                self.ck.error(
                    m.span_of(b, "use"),
                    f"similarity {b.name!r} has both `use` and a record form (same/mean)",
                    _USAGE,
                )
                return None
            return self.deref(b.use, chain)
        if b.cases is not None:
            return self._cases(b, b.cases, chain)
        if b.all_of or (b.same and not b.mean):
            found = [self.deref(part, chain) for part in b.all_of]
            if any(f is None for f in found):
                return None
            return m.ComponentCall(
                "similarity",
                "all_of",
                (("same", tuple(b.same)), ("parts", tuple(found))),
                {"": m.span_of(b)},
            )
        return self._mean(b, chain)

    def _one_form(self, b: m.SimilarityBlock) -> bool:
        """One of use, mean, cases or all; `when` and `otherwise` only with cases."""
        forms = (
            ("use", b.use is not None),
            ("mean", bool(b.mean)),
            ("cases", b.cases is not None),
            ("all", bool(b.all_of)),
        )
        written = [name for name, present in forms if present]
        if len(written) > 1:
            what = "a record form (same/mean)" if written[0] == "use" else f"`{written[1]}`"
            self.ck.error(
                m.span_of(b, written[1]),
                f"similarity {b.name!r} has both `{written[0]}` and {what}",
                _USAGE,
            )
            return False
        if (b.when or b.otherwise is not None) and b.cases is None:
            self.ck.error(
                m.span_of(b, "when" if b.when else "otherwise"),
                f"similarity {b.name!r}: `when` and `otherwise` go with `cases = <member>`",
                _USAGE,
            )
            return False
        return True

    def _cases(
        self, b: m.SimilarityBlock, cases: str, chain: tuple[str, ...]
    ) -> m.ComponentCall | None:
        """``cases = member  when { value = X }  otherwise = Y``."""
        if b.otherwise is None:
            self.ck.error(
                m.span_of(b),
                f"similarity {b.name!r}: `cases` needs `otherwise = <similarity>` for the values `when` does not name",
                _USAGE,
            )
            return None
        parts = [(value, self.deref(part, chain)) for value, part in b.when]
        otherwise = self.deref(b.otherwise, chain)
        if otherwise is None or any(p is None for _, p in parts):
            return None
        return m.ComponentCall(
            "similarity",
            "cases",
            (
                ("same", tuple(b.same)),
                ("field", cases),
                ("when", tuple(parts)),
                ("otherwise", otherwise),
            ),
            {
                "": m.span_of(b),
                "when": m.span_of(b, "when"),
            },  # a `when` value the member cannot have is reported at `when`
        )

    def _mean(self, b: m.SimilarityBlock, chain: tuple[str, ...]) -> m.ComponentCall | None:
        """``same = [...]  mean { field = similarity ... }``: a record similarity, the mean over its fields."""
        if not b.mean:
            if "use" not in b.at:  # else `use` is written and its error is reported there
                self.ck.error(
                    m.span_of(b),
                    f"similarity {b.name!r} needs `use = <similarity>(...)` or `mean {{ ... }}`",
                    _USAGE,
                )
            return None
        if len({field for field, _ in b.mean}) != len(b.mean):
            return None  # a repeated field: reported where it is written
        mean_parts = [(field, self.deref(value, chain)) for field, value in b.mean]
        if any(p is None for _, p in mean_parts):
            return None
        return m.ComponentCall(
            "similarity",
            "record_mean",
            (("same", tuple(b.same)), ("parts", tuple(mean_parts))),
            {"": m.span_of(b)},
        )
