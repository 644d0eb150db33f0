"""What a library metric is: the values it compares, how it may aggregate, its per-item statistics.

A ``measure`` block of a spec names a metric component (``metric = f1(labels = [a, b])``), the gold
and prediction fields it compares and how it aggregates (``aggregate = macro``).  Every metric
works in two steps so that the store keeps enough to recompute any aggregate, a slice's or a
bootstrap resample's, from per-item rows alone:

1. ``item(gold, prediction)`` turns one item into a tuple of floats, its *sufficient statistics*
   (a 0/1 hit; sacrebleu's n-gram counts; the indices of the gold and predicted class; an (x, y)
   pair for a correlation);
2. ``reduce(rows, aggregate)`` turns the rows of any set of items into the metric's outputs, by the
   same formula the library uses on the whole set (sacrebleu sums the counts before computing BLEU;
   scikit-learn counts the classes before averaging F1).

Heavy libraries (sacrebleu, rouge-score, scikit-learn, scipy) are imported inside the methods, so a
task that does not use them never loads them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.registry import component, known_requirements

# How a metric's per-item statistics become one number (or a family of numbers).
AGGREGATIONS = ("mean", "sum", "micro", "macro", "weighted", "per_class", "corpus", "pooled")
AGGREGATION_DOCS = {
    "mean": "the mean of the per-item values",
    "sum": "the sum of the per-item values",
    "micro": "classes pooled: counts summed over classes before P/R/F1",
    "macro": "the unweighted mean over the declared classes",
    "weighted": "the mean over classes weighted by their gold support",
    "per_class": "one output per declared class, named <measure>_<class>",
    "corpus": "statistics pooled over all items first, as the library's corpus-level score",
    "pooled": "per-item counts summed over the items before the ratio",
}
CLASS_AGGREGATIONS = ("micro", "macro", "weighted", "per_class")

TEXT = FieldType("str")
TEXTS = FieldType("list", TEXT)
NUMBER = FieldType("float")
NUMBERS = FieldType("list", NUMBER)
ANY = FieldType("any")
Stats = tuple[float, ...]


class Metric:
    """Base of every library metric (subclasses set the class attributes and the two methods).

    ``gold`` / ``prediction``: the field types accepted on each side (any of them).  ``aggregations``:
    the allowed ways to aggregate, the first being the default.  ``text``: whether a normaliser may
    be applied to the values first.  ``same_type``: gold and prediction must have the same type
    (labels compared for equality).  ``one_value``: one scalar per item (a class), never a collection.  What the spec
    must supply (the class set) is declared where the metric is registered: ``library_metric(..., requires=...)``.
    """

    gold: ClassVar[tuple[FieldType, ...]] = (ANY,)
    prediction: ClassVar[tuple[FieldType, ...]] = (ANY,)
    aggregations: ClassVar[tuple[str, ...]] = ("mean", "sum")
    text: ClassVar[bool] = False
    same_type: ClassVar[bool] = False
    one_value: ClassVar[bool] = (
        False  # compares one scalar value per item (a class): any list, ordering, set or record is refused
    )
    higher_is_better: bool = True  # a class default; a metric object may set its own (TER)
    percent: bool = True  # a class default; a metric object may set its own
    # The least and greatest value of an output (None: unbounded), as the site's display rules read it (issue #30,
    # docs/site.md): a fraction by default; a metric object may state its own (TER, correlations, counts).
    value_range: tuple[float | None, float | None] = (0.0, 1.0)
    library: str = ""  # the library whose numbers it reproduces (its oracle in the tests); may be set per object

    labels: tuple[
        str, ...
    ] = ()  # the class set, for class aggregations (filled in by the compiler)

    # -- what the checker asks --------------------------------------------------------------------
    def accepts(self, aggregate: str) -> tuple[tuple[FieldType, ...], tuple[FieldType, ...]]:
        """The gold and prediction field types this metric compares under ``aggregate``."""
        return self.gold, self.prediction

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        """Suffixes of the per-item statistics stored for an item ("" = the measure's own name)."""
        return ("",)

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        """The metric names this measure produces."""
        return (name,)

    def signature(self) -> str:
        """Library settings and version that can change a number (part of the task's fingerprint)."""
        return ""

    # -- what the runner asks ---------------------------------------------------------------------
    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        """One item's statistics; ``prediction`` is None when the item has no prediction record."""
        raise NotImplementedError

    def invalid(self, gold: Any, prediction: Any) -> str | None:
        """Why an answered item's prediction cannot be measured against its gold (None: it can).

        The runtime asks before :meth:`item` and applies the measure's declared ``invalid`` convention
        (docs/language.md, measure blocks); a metric whose every well-typed prediction is measurable keeps this default.
        """
        return None

    def refuses(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> tuple[str, str, str] | None:
        """Why fields declared with these types cannot be measured unambiguously: (``"gold"`` or ``"prediction"``, message, hint).

        The checker asks before its generic type check (so the hint can name the right form, e.g. ``ordering(int)``);
        a type is None where nothing declares it.  Default: an ordering or a set only where the metric names that kind
        among its accepted types (``any`` would compare them as plain lists, silently ignoring what they declare);
        everything else as the generic check of :meth:`accepts` decides.
        """
        wanted = self.accepts(aggregate)
        for side, declared, accepted in (
            ("gold", gold, wanted[0]),
            ("prediction", prediction, wanted[1]),
        ):
            kind = _collection_kind(declared)
            if self.one_value and kind in ("list", "ordering", "set", "record"):
                return (
                    side,
                    f"this metric compares one value per item (a class, a label), but the {side} field is {declared.spelling() if declared else kind}",
                    "exact_order() compares orderings, set_prf() sets, answer_outcomes() aligned lists of answers",
                )
            # only where ``any`` would let it through: an outright mismatch is the generic check's to report
            fits_loosely = declared is not None and any(declared.fits(t) for t in accepted)
            if (
                kind in ("ordering", "set")
                and fits_loosely
                and not any(_collection_kind(t) == kind for t in accepted)
            ):
                element = (
                    declared.item.spelling()
                    if declared is not None and declared.item is not None
                    else "T"
                )
                return (
                    side,
                    f"the {side} field is {kind}({element}), and this metric does not compare {'orderings' if kind == 'ordering' else 'sets'}",
                    f"declare list({element}) to compare the lists as they are"
                    + (
                        "; kendall_tau(), spearman(), exact_order() compare orderings"
                        if kind == "ordering"
                        else "; set_prf() compares sets"
                    ),
                )
        return None

    def declared(
        self, gold: FieldType | None, prediction: FieldType | None, aggregate: str
    ) -> Metric:
        """This metric as it computes over fields of these declared types (the checker and the plan ask; default: itself).

        A metric whose computation differs by declared kind (an ordering, a list of numbers) returns a copy fixed to
        that kind here, so that its ``item`` never chooses from the values it is given.
        """
        return self

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        """The outputs (in the order of :meth:`outputs`) from the statistics of a set of items."""
        # added left to right, as official scripts do (``sum(scores) / len(scores)``), not math.fsum
        total = sum(row[0] for row in rows)
        if aggregate == "sum":
            return (float(total),)
        return (total / len(rows) if rows else 0.0,)


def _collection_kind(ftype: FieldType | None) -> str:
    """``ordering`` for ``ordering(T)`` or ``optional(ordering(T))``, and so on; "" for anything else."""
    while ftype is not None and ftype.kind == "optional" and ftype.item is not None:
        ftype = ftype.item
    return ftype.kind if ftype is not None else ""


def finite(value: float) -> float:
    """A library's NaN (a correlation of constant values, an empty input) as 0.0: stored aggregates stay numbers.

    Documented in docs/language.md (metric library): the tests apply the same rule to the oracle.
    """
    return 0.0 if value is None or math.isnan(value) else float(value)


def as_references(value: Any) -> list[str]:
    """A gold text or list of texts as the list of references the generation libraries take."""
    return [value] if isinstance(value, str) else list(value)


def library_metric(
    name: str,
    *,
    version: str = "1",
    requires: Sequence[str] = (),
    aggregation_hint: str = "",
) -> Callable[[Callable[..., Metric]], Callable[..., Metric]]:
    """Register a metric factory; its contract (aggregations, compared types) is read from the metric it builds by default.

    ``requires``: what the spec must supply before the metric can be built (``"class_set"``: the classes, as its
    ``labels`` argument; see ``procbench.runners.runtime.registry.METRIC_REQUIREMENTS``): the checker reads it here, whatever the
    metric's name.  ``aggregation_hint``: the hint of the checker's refusal of an aggregation it does not support.
    """
    known_requirements(
        requires
    )  # a misspelt requirement fails where it is declared, not at first use

    def register(factory: Callable[..., Metric]) -> Callable[..., Metric]:
        metric = factory()
        by_types: dict[str, list[str]] = {}
        for aggregate in metric.aggregations:
            gold, prediction = metric.accepts(aggregate)
            spelled = f"compares: gold {' | '.join(t.spelling() for t in gold)}; prediction {' | '.join(t.spelling() for t in prediction)}"
            by_types.setdefault(spelled, []).append(aggregate)
        compares = tuple(
            spelled if len(by_types) == 1 else f"{spelled} (aggregate {', '.join(aggs)})"
            for spelled, aggs in by_types.items()
        )
        compares += (f"numbers: those of {metric.library}",) if metric.library else ()
        return component(
            "metric",
            name,
            version=version,
            compares=compares,
            aggregations=metric.aggregations,
            requires=requires,
            aggregation_hint=aggregation_hint,
        )(factory)

    return register


class Value(Metric):
    """A per-item value a scorer component emits (a judge's normalised grade), aggregated as declared."""

    aggregations = ("mean", "sum")
    library = ""
    value_range = (None, None)  # whatever the scorer emits

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        return (float(prediction),)

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (
            ":value",
        )  # never the measure's own name: the scorer's value may be called the same
