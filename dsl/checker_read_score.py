"""How the score block's values are read while binding: where, value paths, counts, conventions, outputs, formulas, metric families."""

from __future__ import annotations

from typing import Any

from procbench.dsl import checker_conventions
from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import describe
from procbench.dsl.checker_state import CheckerState, bare_names, texts
from procbench.runners.metrics._derived import ARITY as FORMULA_ARITY


class ScoreReads(CheckerState):
    """Readers of the score block's measures and of metric blocks."""

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
        names = bare_names(expr.items) if isinstance(expr, s.ListExpr) else None
        if names is None or len(names) != 3:
            self.error(
                expr.span,
                "outputs names the three per-item values [precision, recall, f1]",
                "e.g. outputs = [exact_p, exact_r, exact_f1] (the default: <match>_p, <match>_r, <match>_f1)",
            )
            return None
        return names[0], names[1], names[2]

    def parse_metadata(self, expr: s.Expr, where: str) -> tuple[tuple[str, str], ...] | None:
        found = texts(expr.pairs) if isinstance(expr, s.ObjectExpr) else None
        if found is None:
            self.error(
                expr.span,
                "metadata maps a scorer parameter to a submission metadata key (text)",
                'e.g. metadata = { cot_penalty = "cot" }',
            )
            return None
        return tuple(found.items())

    def parse_family(self, expr: s.Expr, where: str) -> str | None:
        if isinstance(expr, s.Ref) and expr.dotted == "prf":
            return "prf"
        name = expr.dotted if isinstance(expr, s.Ref) else describe(expr)
        self.unknown(expr.span, "metric family", name, ["prf"])
        return None

    def parse_formula(
        self, expr: s.Expr, where: str, *, per_item: bool = False
    ) -> tuple[Any, ...] | None:
        """A metric computed from others (or, ``per_item``, a value from an item's values): names, numbers,
        and the functions of procbench.runners.metrics._derived."""
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
