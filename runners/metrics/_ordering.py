"""Ordering and grading metrics: Kendall's tau (b, c), Spearman, Pearson (scipy), exact order, precedence.

What a correlation computes is fixed by the declared types of its fields, never by the values
(docs/language.md, types; docs/metrics.md, "Orderings"):

- per item (``aggregate = mean``) over ``ordering(T)`` fields: each list ranks distinct items, the
  prediction a permutation of the gold's; the correlation is scipy's over the two rank vectors (the
  gold position and the predicted position of each item);
- per item over ``list(float)`` fields: the numbers, paired position by position (equal lengths);
- across items (``aggregate = corpus``) over numbers: the (gold, prediction) pairs of all items,
  items without a prediction left out.

Any other combination (``list(int)``, ``list(str)``, an ordering beside a list) is refused by the
checker with the right form in its hint (:meth:`Metric.refuses`).  A prediction that is not a
permutation of the gold's items is *invalid* (:meth:`Metric.invalid` says why); the measure's
``invalid`` convention decides what it counts as.  An unanswered item (None, "scored as empty")
gives 0.0: scipy's NaN of a constant ranking, by the rule of :func:`finite`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from procbench.runners.metrics._base import NUMBER, NUMBERS, Metric, Stats, finite, library_metric
from procbench.runners.runtime.predictions import COLLECTION_KINDS, FieldType

ORDERING = FieldType("ordering")
SHOWN = 3  # items named in an invalid prediction's reason


def bare(ftype: FieldType | None) -> FieldType | None:
    """A declared type without its ``optional(...)`` wrappers (None stays None)."""
    while ftype is not None and ftype.kind == "optional" and ftype.item is not None:
        ftype = ftype.item
    return ftype


def element(ftype: FieldType) -> str:
    """The element type a hint names: ``int`` for ``list(int)``, ``T`` where unknown."""
    return (
        ftype.item.spelling() if ftype.item is not None and ftype.kind in COLLECTION_KINDS else "T"
    )


def _named(values: Sequence[Any]) -> str:
    shown = ", ".join(repr(v) for v in values[:SHOWN])
    return shown + (f" and {len(values) - SHOWN} more" if len(values) > SHOWN else "")


def permutation_problem(gold: Sequence[Any], prediction: Sequence[Any]) -> str | None:
    """Why ``prediction`` is not a permutation of the gold's items (missing, extra, repeated ones, first few named), or None."""
    counts = Counter(prediction)
    wanted = set(gold)
    repeated = [v for v, n in counts.items() if n > 1]
    missing = [v for v in gold if v not in counts]
    extra = [v for v in counts if v not in wanted]
    parts = [
        f"{label} {_named(values)}"
        for label, values in (("missing", missing), ("extra", extra), ("repeated", repeated))
        if values
    ]
    return "not a permutation of the gold's items: " + "; ".join(parts) if parts else None


def gold_repeats(gold: Sequence[Any]) -> str | None:
    """Why a gold ordering is not one (an item listed twice), or None."""
    repeated = [v for v, n in Counter(gold).items() if n > 1]
    return f"the gold ordering repeats {_named(repeated)}" if repeated else None


def ordering_refusal(
    name: str, gold: FieldType | None, prediction: FieldType | None
) -> tuple[str, str, str] | None:
    """The checker's refusal of fields that are not both ``ordering(T)`` (for metrics that compare orderings only)."""
    for side, ftype in (("gold", gold), ("prediction", prediction)):
        if ftype is None or ftype.kind != "ordering":
            spelled = "undeclared" if ftype is None else ftype.spelling()
            form = f"ordering({element(ftype)})" if ftype is not None else "ordering(T)"
            return (
                side,
                f"{name}() compares two orderings (ordering(T): ranked distinct items), but the {side} field is {spelled}",
                f"declare both fields {form} when each list ranks the items (the prediction a permutation of the gold's)",
            )
    return None


class OrderingMetric(Metric):
    """A per-item metric over ``ordering(T)`` fields: what an invalid prediction is, and the gold's own check."""

    gold: ClassVar[tuple[FieldType, ...]] = (ORDERING,)
    prediction: ClassVar[tuple[FieldType, ...]] = (ORDERING,)
    same_type = True

    def invalid(self, gold: Any, prediction: Any) -> str | None:
        return permutation_problem(list(gold), list(prediction))

    def positions(
        self, gold: Sequence[Any], prediction: Sequence[Any]
    ) -> tuple[list[float], list[float]]:
        """The two rank vectors: each gold item's gold position and its predicted position."""
        if (why := gold_repeats(gold)) is not None:
            raise ValueError(why)
        if (
            why := permutation_problem(gold, prediction)
        ) is not None:  # only a declared `invalid = predict(...)` value gets here
            raise ValueError(f"the prediction is {why}")
        where = {value: position for position, value in enumerate(prediction)}
        return [float(i) for i in range(len(gold))], [float(where[value]) for value in gold]


class Correlation(OrderingMetric):
    gold = (ORDERING, NUMBERS, NUMBER)
    prediction = (ORDERING, NUMBERS, NUMBER)
    aggregations = ("mean", "corpus")
    value_range = (-1.0, 1.0)

    def __init__(self, kind: str, variant: str = "b", over: str = ""):
        self.kind, self.variant = kind, variant
        self.over = over  # "ordering" | "numbers": fixed by the declared types (declared()); "" before they are known
        self.library = {
            "kendall": f"scipy.stats.kendalltau (variant {variant})",
            "spearman": "scipy.stats.spearmanr",
            "pearson": "scipy.stats.pearsonr",
        }[kind]

    @property
    def per_item(self) -> tuple[FieldType, ...]:
        return (NUMBERS,) if self.kind == "pearson" else (ORDERING, NUMBERS)

    def accepts(self, aggregate: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return ((NUMBER,), (NUMBER,)) if aggregate == "corpus" else (self.per_item, self.per_item)

    def refuses(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> tuple[str, str, str] | None:
        if aggregate == "corpus":
            return None
        name = {"kendall": "kendall_tau", "spearman": "spearman", "pearson": "pearson"}[self.kind]
        g, p = bare(gold), bare(prediction)
        if (
            self.kind != "pearson"
            and g is not None
            and p is not None
            and g.kind == p.kind == "ordering"
        ):
            return None
        if (
            g is not None
            and p is not None
            and g.kind == p.kind == "list"
            and all(t.item is not None and t.item.kind == "float" for t in (g, p))
        ):
            return None
        side, ftype = next(
            ((s, t) for s, t in (("gold", g), ("prediction", p)) if t is None or not _numbers(t)),
            ("gold", g),
        )
        if self.kind == "pearson":
            return (
                side,
                f"pearson() per item correlates two lists of numbers position by position (list(float)), "
                f"but the {side} field is {ftype.spelling() if ftype else 'undeclared'}",
                "declare both fields list(float); to correlate two orderings use spearman() over ordering(T) fields",
            )
        if (
            ftype is not None
            and ftype.kind == "list"
            and ftype.item is not None
            and ftype.item.kind == "int"
        ):
            message = (
                f"{name}() per item is ambiguous over list(int): the lists could be orderings of items"
                " (ranked ids) or numbers to pair position by position"
            )
        else:
            spelled = ftype.spelling() if ftype is not None else "undeclared"
            message = f"{name}() per item compares two orderings (ordering(T)) or two lists of numbers (list(float)), but the {side} field is {spelled}"
        form = element(ftype) if ftype is not None and ftype.kind in COLLECTION_KINDS else "T"
        hint = (
            f"declare both fields ordering({form}) when each list ranks the items (a permutation of the gold's), "
            'or list(float) to pair numbers position by position; across items, aggregate = "corpus" correlates numbers'
        )
        return side, message, hint

    def declared(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> Metric:
        g = bare(gold)
        over = (
            "ordering"
            if g is not None and g.kind == "ordering"
            else "numbers"
            if g is not None and g.kind == "list"
            else ""
        )
        return Correlation(self.kind, self.variant, over)

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (":gold", ":prediction") if aggregate == "corpus" else ("",)

    def invalid(self, gold: Any, prediction: Any) -> str | None:
        if self.over == "ordering":
            return super().invalid(gold, prediction)
        if self.over == "numbers" and isinstance(gold, list) and len(prediction) != len(gold):
            return f"the prediction has {len(prediction)} values for {len(gold)} gold values"
        return None

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        if aggregate == "corpus":
            return (float(gold), math.nan if prediction is None else float(prediction))
        if self.over == "ordering":
            if prediction is None:
                if (
                    why := gold_repeats(gold)
                ) is not None:  # a bad gold is reported even where nothing was predicted
                    raise ValueError(why)
                return (0.0,)
            return (self.correlate(*self.positions(list(gold), list(prediction))),)
        if self.over == "numbers":
            if prediction is None:
                return (0.0,)
            if len(prediction) != len(gold):
                raise ValueError(
                    f"the prediction has {len(prediction)} values for {len(gold)} gold values"
                )
            return (self.correlate([float(v) for v in gold], [float(v) for v in prediction]),)
        raise ValueError(
            f"{self.library}: the fields' declared types are unknown (declare ordering(T) or list(float))"
        )

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        if aggregate != "corpus":
            return super().reduce(rows, "mean")
        pairs = [r for r in rows if not math.isnan(r[1])]
        return (self.correlate([p[0] for p in pairs], [p[1] for p in pairs]),)

    def correlate(self, x: Sequence[float], y: Sequence[float]) -> float:
        if len(x) < 2:
            return 0.0
        import warnings

        from scipy import stats

        with (
            warnings.catch_warnings()
        ):  # constant input: scipy warns and returns NaN, which becomes 0.0
            warnings.simplefilter("ignore")
            if self.kind == "kendall":
                return finite(stats.kendalltau(x, y, variant=self.variant).statistic)
            if self.kind == "spearman":
                return finite(stats.spearmanr(x, y).statistic)
            return finite(stats.pearsonr(x, y).statistic)


def _numbers(ftype: FieldType) -> bool:
    return ftype.kind == "list" and ftype.item is not None and ftype.item.kind == "float"


class ExactOrder(OrderingMetric):
    aggregations = ("mean", "sum")
    library = "list equality of the two orderings"

    def refuses(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> tuple[str, str, str] | None:
        return ordering_refusal("exact_order", bare(gold), bare(prediction))

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        if (why := gold_repeats(gold)) is not None:
            raise ValueError(why)
        return (1.0 if prediction is not None and list(prediction) == list(gold) else 0.0,)


class Precedence(Metric):
    """How far a predicted ordering keeps the gold's precedence constraints ([before, after] pairs)."""

    gold = (FieldType("list", FieldType("list")),)
    prediction = (ORDERING,)
    aggregations = ("mean",)
    library = "the precedence pairs checked directly (docs/metrics.md, precedence)"

    def refuses(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> tuple[str, str, str] | None:
        g, p = bare(gold), bare(prediction)
        if g is None or g.kind != "list" or g.item is None or g.item.kind != "list":
            return (
                "gold",
                f"precedence() reads the gold as [before, after] pairs (list(list(T))), but the gold field is {g.spelling() if g else 'undeclared'}",
                'declare the gold field list(list(str)) holding pairs like ["preheat oven", "bake"]',
            )
        if p is None or p.kind != "ordering":
            return (
                "prediction",
                f"precedence() compares a predicted ordering (ordering(T)), but the prediction field is {p.spelling() if p else 'undeclared'}",
                f"declare the prediction field ordering({element(p) if p is not None and p.kind in COLLECTION_KINDS else 'T'})",
            )
        inner, items = g.item.item, p.item
        if inner is not None and items is not None and not (inner.fits(items) or items.fits(inner)):
            message = f"precedence(): the gold pairs name {inner.spelling()} items but the predicted ordering holds {items.spelling()}"
            return "prediction", message, "declare both with one item type"
        return None

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return ("", ":consistent")

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        return (name, f"{name}_consistent")

    def invalid(self, gold: Any, prediction: Any) -> str | None:
        """Every item a constraint names listed once; items no constraint names may be listed too (they are free)."""
        counts = Counter(prediction)
        named = list(dict.fromkeys(v for pair in gold if isinstance(pair, list) for v in pair))
        missing = [v for v in named if v not in counts]
        repeated = [v for v, n in counts.items() if n > 1]
        parts = [
            f"{label} {_named(values)}"
            for label, values in (("missing", missing), ("repeated", repeated))
            if values
        ]
        return "not an ordering of the constrained items: " + "; ".join(parts) if parts else None

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        pairs = constraints(gold)
        if prediction is None:
            return (0.0, 0.0)
        if (
            why := self.invalid(gold, prediction)
        ) is not None:  # only a declared `invalid = predict(...)` value gets here
            raise ValueError(f"the prediction is {why}")
        where = {value: position for position, value in enumerate(prediction)}
        kept = sum(1 for before, after in pairs if where[before] < where[after])
        return (kept / len(pairs) if pairs else 1.0, 1.0 if kept == len(pairs) else 0.0)

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        n = len(rows)
        return (
            sum(r[0] for r in rows) / n if n else 0.0,
            sum(r[1] for r in rows) / n if n else 0.0,
        )


def constraints(gold: Sequence[Any]) -> list[tuple[Any, Any]]:
    """The gold's [before, after] pairs (repeats counted once); a malformed pair or a cycle is an error in the gold."""
    pairs: list[tuple[Any, Any]] = []
    for pair in gold:
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
            raise ValueError(
                f"a precedence constraint is a pair [before, after] of two items, got {pair!r}"
            )
        if (pair[0], pair[1]) not in pairs:
            pairs.append((pair[0], pair[1]))
    after: dict[Any, set[Any]] = {}
    for before, later in pairs:
        after.setdefault(before, set()).add(later)
    # Kahn's algorithm: what is never freed lies on a cycle, and no order can keep every constraint
    waiting = Counter(later for _, later in pairs)
    free = [v for v in after if waiting[v] == 0]
    seen = 0
    while free:
        node = free.pop()
        seen += 1
        for later in after.get(node, ()):
            waiting[later] -= 1
            if waiting[later] == 0:
                free.append(later)
    nodes = {v for pair in pairs for v in pair}
    if seen != len(nodes):
        raise ValueError("the gold precedence constraints form a cycle: no order keeps them all")
    return pairs


# -- components ---------------------------------------------------------------------------------------


@library_metric("kendall_tau")
def kendall_tau(*, variant: Literal["b", "c"] = "b") -> Metric:
    """scipy's Kendall tau (variant b or c): per item over ordering(T) or list(float) fields (aggregate = mean), or across items over numbers (corpus)."""
    return Correlation("kendall", variant)


@library_metric("spearman")
def spearman() -> Metric:
    """scipy's Spearman rho: per item over ordering(T) or list(float) fields (aggregate = mean), or across items over numbers (corpus)."""
    return Correlation("spearman")


@library_metric("pearson")
def pearson() -> Metric:
    """scipy's Pearson r: per item over list(float) fields paired by position (aggregate = mean), or across items over numbers (corpus)."""
    return Correlation("pearson")


@library_metric("exact_order")
def exact_order() -> Metric:
    """1 where the predicted ordering lists the gold's items in the gold's order, else 0 (ordering(T) fields); aggregate = mean."""
    return ExactOrder()


@library_metric("precedence")
def precedence() -> Metric:
    """Gold [before, after] pairs (list(list(T))) against a predicted ordering(T): the fraction kept, and <measure>_consistent (all kept)."""
    return Precedence()
