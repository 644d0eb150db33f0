"""Set matching: a predicted collection against the gold one, precision / recall / F1 of the two sets.

Per item the statistics are the counts of the two sets (true positives |P ∩ G|, false positives
|P - G|, false negatives |G - P|; duplicates count once).  ``aggregate = "mean"`` averages the
per-item ratios, as scikit-learn's ``precision_recall_fscore_support(average="samples")`` does over
the binarised label sets; ``"pooled"`` sums the counts over the items first (``average="micro"``).  A ratio whose
denominator is 0 is ``zero_division`` (scikit-learn's parameter: 0 by default; 1 scores an item
whose gold and prediction are both empty as perfect), and F1 = 2TP / (2TP + FP + FN), which is
scikit-learn's form: 0 when nothing is shared, ``zero_division`` only when both sets are empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from procbench.runners.metrics._base import Metric, Stats, library_metric
from procbench.runners.runtime.predictions import FieldType

COLLECTION = FieldType.parse("list(any)")
SET = FieldType.parse(
    "set(any)"
)  # the declared set type: what this metric makes of any list anyway


class SetMatch(Metric):
    gold = (SET, COLLECTION)
    prediction = (SET, COLLECTION)
    aggregations = ("mean", "pooled")
    text = True  # the measure's normaliser applies to each text element before the sets are built
    library = "scikit-learn precision_recall_fscore_support over MultiLabelBinarizer sets (average samples | micro)"

    def __init__(self, zero_division: float = 0.0):
        self.zero_division = float(zero_division)

    def signature(self) -> str:
        return f"zero_division={self.zero_division:g}"

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (":tp", ":fp", ":fn")

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        return (f"{name}_p", f"{name}_r", f"{name}_f1")

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        wanted, given = set(gold), set(prediction or ())
        shared = len(wanted & given)
        return (float(shared), float(len(given) - shared), float(len(wanted) - shared))

    def ratios(self, tp: float, fp: float, fn: float) -> tuple[float, float, float]:
        def divide(numerator: float, denominator: float) -> float:
            return numerator / denominator if denominator else self.zero_division

        return divide(tp, tp + fp), divide(tp, tp + fn), divide(2 * tp, 2 * tp + fp + fn)

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        if aggregate == "pooled":
            return self.ratios(*(sum(row[i] for row in rows) for i in range(3)))
        if not rows:
            return (0.0, 0.0, 0.0)
        per_item = [self.ratios(*row) for row in rows]
        return tuple(sum(values[i] for values in per_item) / len(per_item) for i in range(3))


@library_metric("set_prf")
def set_prf(*, zero_division: Literal[0, 1] = 0) -> Metric:
    """Precision, recall and F1 of the predicted set against the gold set: <measure>_p, _r, _f1; mean per item, or pooled (counts summed first)."""
    return SetMatch(zero_division)
