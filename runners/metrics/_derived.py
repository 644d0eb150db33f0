"""Metrics computed from other metrics (``metric f1 { from = f1(precision, recall) }``).

Official scorers often report numbers derived from other reported numbers: ProPara's per-question
F1 from the rounded precision and recall, its overall precision as the mean of four rounded
question precisions.  A formula sees the other metrics as they are reported (a measure's rounding
included) and is evaluated after the aggregation, on every set of items the aggregator sees (the
whole split, each slice, each bootstrap resample).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from procbench.runners.runtime._types import ItemScore
from procbench.runners.runtime.records import Record

Formula = tuple[Any, ...]


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 0.0 if total == 0 else 2 * precision * recall / total


def _mean(*values: float) -> float:
    total = 0.0
    for value in values:  # left to right, as the official scripts add them
        total += value
    return total / len(values)


def _weighted(*pairs: float) -> float:
    """``weighted(x1, w1, x2, w2, ...)`` = Σ wᵢ·xᵢ / Σ wᵢ, added left to right as upstream's weighted averages."""
    values, weights = pairs[0::2], pairs[1::2]
    total = 0.0
    for value, weight in zip(values, weights):
        total += weight * value
    return total / sum(weights) if sum(weights) else 0.0


def _pick(condition: float, then: float, otherwise: float) -> float:
    """``pick(c, a, b)``: ``a`` where ``c`` is not 0, else ``b`` (a submission's flag choosing a rule)."""
    return then if condition else otherwise


# Each function is Python's own operation on floats, so a formula written in the order an official script
# computes gives its numbers to the last bit (min/max return their first argument among equals, as Python's).
FUNCTIONS: dict[str, Callable[..., float]] = {
    "mean": _mean,
    "f1": _f1,
    "round": lambda x, digits: round(x, int(digits)),
    "weighted": _weighted,
    "min": lambda a, b: min(a, b),
    "max": lambda a, b: max(a, b),
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "pick": _pick,
}
# arguments each function takes (0: one or more; -2: pairs); the checker holds specs to it
ARITY = {
    "mean": 0,
    "f1": 2,
    "round": 2,
    "weighted": -2,
    "min": 2,
    "max": 2,
    "add": 2,
    "sub": 2,
    "mul": 2,
    "pick": 3,
}


def formula_names(formula: Formula) -> list[str]:
    """The metrics a formula reads."""
    if formula[0] == "metric":
        return [formula[1]]
    return [n for arg in formula[2] for n in formula_names(arg)] if formula[0] == "call" else []


def evaluate(formula: Formula, values: Mapping[str, float]) -> float:
    kind = formula[0]
    if kind == "metric":
        return float(values[formula[1]])
    if kind == "number":
        return float(formula[1])
    return float(FUNCTIONS[formula[1]](*(evaluate(arg, values) for arg in formula[2])))


def order(formulas: Mapping[str, Formula]) -> list[str]:
    """The derived metrics so that each comes after the derived metrics it uses (the checker refused cycles)."""
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        for dep in formula_names(formulas[name]):
            if dep in formulas:
                visit(dep)
        done.append(name)

    for name in formulas:
        visit(name)
    return done


def with_derived(
    aggregate: Callable[[Sequence[ItemScore]], dict[str, float]], formulas: Mapping[str, Formula]
) -> Callable[[Sequence[ItemScore]], dict[str, float]]:
    """The aggregator followed by the derived metrics, in dependency order."""
    ordered = [(name, formulas[name]) for name in order(formulas)]

    def aggregate_and_derive(items: Sequence[ItemScore]) -> dict[str, float]:
        values = aggregate(items)
        for name, formula in ordered:
            values[name] = evaluate(formula, values)
        return values

    return aggregate_and_derive


class ItemFormulas(Record):
    """A scorer followed by per-item values computed from its values (``value name { from = ... }`` in a score block).

    Each formula sees the item's values, the values computed before it (in the order written) and the
    submission's ``flags`` (1.0 or 0.0, from its metadata); what it computes is stored with the item.
    """

    __slots__ = ("scorer", "formulas", "flags")
    scorer: Callable[..., list[ItemScore]]
    formulas: tuple[tuple[str, Formula], ...]
    flags: Mapping[str, float]

    def __init__(
        self,
        scorer: Callable[..., list[ItemScore]],
        formulas: tuple[tuple[str, Formula], ...],
        flags: Mapping[str, float],
    ) -> None:
        object.__setattr__(self, "scorer", scorer)
        object.__setattr__(self, "formulas", formulas)
        object.__setattr__(self, "flags", flags)

    def __call__(self, gold: Any, predictions: Mapping[str, Any]) -> list[ItemScore]:
        out = []
        for item in self.scorer(gold, predictions):
            values = dict(item.values)
            seen = ChainMap(values, self.flags)  # type: ignore[arg-type]  # read only: the flags are not copied per item
            for name, formula in self.formulas:
                values[name] = evaluate(formula, seen)
            out.append(ItemScore(item.item_id, values))
        return out


def flag_values(flags: Sequence[tuple[str, str]], metadata: Mapping[str, Any]) -> dict[str, float]:
    """``flags = { cot = "cot" }``: 1.0 where the submission's metadata key is true (true, "true", 1), else 0.0."""
    return {
        name: 1.0 if metadata.get(key) in (True, "true", "True", 1) else 0.0 for name, key in flags
    }
