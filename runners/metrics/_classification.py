"""Classification metrics: accuracy, precision / recall / F1 (micro, macro, weighted, per class), confusion counts.

The numbers are scikit-learn's (``accuracy_score``, ``precision_recall_fscore_support`` with
``zero_division=0``, ``confusion_matrix``), computed from per-item class indices so that any subset
of items (a slice, a bootstrap resample) is scored as scikit-learn would score that subset.  The
counting is our own few lines (scikit-learn, the tests' oracle, costs milliseconds a call and the
board's bootstrap makes thousands); the formulas are scikit-learn's.  A
prediction outside the declared classes counts as wrong for its item's gold class and as no
class's false positive, exactly as scikit-learn treats labels outside its ``labels=`` list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from procbench.runners.metrics._base import ANY, CLASS_AGGREGATIONS, Metric, Stats, library_metric
from procbench.runners.runtime.names import name_part

OUTSIDE = -1.0  # the index of a prediction that is none of the declared classes (or missing)


def label_text(value: Any) -> str:
    """A class value as the text a spec declares it with (``labels = [0, 1]`` and ``enum(a, b)`` alike)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Accuracy(Metric):
    gold = (ANY,)
    prediction = (ANY,)
    same_type = True
    one_value = True  # a list compared as its text would make [0.0] and [-0.0] differ: lists have their own metrics
    library = "scikit-learn accuracy_score"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        return (
            1.0 if prediction is not None and label_text(prediction) == label_text(gold) else 0.0,
        )


class _OverClasses(Metric):
    """A metric over a declared class set: an item's statistics are its gold and predicted class indices."""

    gold = (ANY,)
    prediction = (ANY,)
    one_value = True
    same_type = True

    def __init__(self, labels: Sequence[Any] = ()):
        self.labels = tuple(label_text(v) for v in labels)
        self._index = {
            label: i for i, label in enumerate(self.labels)
        }  # built once, looked up per item

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return (":gold", ":prediction")

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        """(gold class index, predicted class index or -1); a gold value outside the classes is an error."""
        gold_index = self._index.get(label_text(gold))
        if gold_index is None:
            raise ValueError(
                f"gold value {gold!r} is not one of the declared classes ({', '.join(self.labels)})"
            )
        return (
            float(gold_index),
            OUTSIDE
            if prediction is None
            else float(self._index.get(label_text(prediction), OUTSIDE)),
        )


class ClassMetric(_OverClasses):
    """Precision, recall or F1 over a declared class set; ``score = "prf"`` gives all three."""

    aggregations = CLASS_AGGREGATIONS
    library = "scikit-learn precision_recall_fscore_support"
    suffixes: ClassVar[dict[str, tuple[str, ...]]] = {
        "precision": ("",),
        "recall": ("",),
        "f1": ("",),
        "prf": ("_p", "_r", "_f1"),
    }

    def __init__(self, score: str, labels: Sequence[Any] = ()):
        super().__init__(labels)
        self.score = score

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        stems = (
            [f"{name}_{name_part(label)}" for label in self.labels]
            if aggregate == "per_class"
            else [name]
        )  # docs/language.md, "Generated names"
        return tuple(stem + suffix for stem in stems for suffix in self.suffixes[self.score])

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        tp, pred_sum, true_sum = class_counts(len(self.labels), rows)
        if aggregate == "micro":
            tp, pred_sum, true_sum = [sum(tp)], [sum(pred_sum)], [sum(true_sum)]
        precision = [_divide(t, p) for t, p in zip(tp, pred_sum)]
        recall = [_divide(t, g) for t, g in zip(tp, true_sum)]
        f1 = [
            _divide(2 * t, g + p) for t, g, p in zip(tp, true_sum, pred_sum)
        ]  # scikit-learn's form: 2tp / (true + predicted)
        picked = {
            "precision": (precision,),
            "recall": (recall,),
            "f1": (f1,),
            "prf": (precision, recall, f1),
        }[self.score]
        if aggregate == "per_class":
            return tuple(series[i] for i in range(len(self.labels)) for series in picked)
        if aggregate == "weighted":
            total = sum(true_sum)
            return tuple(
                sum(v * w for v, w in zip(series, true_sum)) / total if total else 0.0
                for series in picked
            )
        return tuple(sum(series) / len(series) if series else 0.0 for series in picked)


def _divide(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0  # scikit-learn's zero_division=0


def class_counts(n: int, rows: Sequence[Stats]) -> tuple[list[int], list[int], list[int]]:
    """Per class: true positives, predictions of the class, gold items of the class.

    Counted here rather than with scikit-learn (which the tests use as the oracle): the board's
    bootstrap reduces thousands of resamples, and a scikit-learn call costs milliseconds.
    """
    tp, pred_sum, true_sum = [0] * n, [0] * n, [0] * n
    for row in rows:
        g, p = int(row[0]), int(row[1])
        true_sum[g] += 1
        if p >= 0:
            pred_sum[p] += 1
            if p == g:
                tp[g] += 1
    return tp, pred_sum, true_sum


class Confusion(_OverClasses):
    """Counts of (gold class, predicted class) pairs: outputs <measure>_<gold>_<predicted>."""

    aggregations = ("sum",)
    percent = False
    value_range = (0.0, None)  # counts of items
    library = "scikit-learn confusion_matrix"

    def outputs(self, name: str, aggregate: str) -> tuple[str, ...]:
        return tuple(
            f"{name}_{name_part(g)}_{name_part(p)}" for g in self.labels for p in self.labels
        )

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        n = len(self.labels)
        matrix = [[0.0] * n for _ in range(n)]
        for row in rows:
            if (
                row[1] >= 0
            ):  # a prediction outside the classes is in no column, as in scikit-learn's confusion_matrix(labels=...)
                matrix[int(row[0])][int(row[1])] += 1
        return tuple(matrix[g][p] for g in range(n) for p in range(n))


# -- components ---------------------------------------------------------------------------------------


@library_metric("accuracy")
def accuracy() -> Metric:
    """1 where the prediction equals the gold value, else 0 (no prediction: 0); aggregate = mean is accuracy_score."""
    return Accuracy()


@library_metric("precision", requires=("class_set",))
def precision(*, labels: list[str | int] = []) -> Metric:  # noqa: B006 - a spec parameter's default, never mutated
    """Precision over the classes (``labels``, else the gold field's enum values); aggregate micro | macro | weighted | per_class."""
    return ClassMetric("precision", labels)


@library_metric("recall", requires=("class_set",))
def recall(*, labels: list[str | int] = []) -> Metric:  # noqa: B006
    """Recall over the classes (``labels``, else the gold field's enum values); aggregate micro | macro | weighted | per_class."""
    return ClassMetric("recall", labels)


@library_metric("f1", requires=("class_set",))
def f1(*, labels: list[str | int] = []) -> Metric:  # noqa: B006
    """F1 over the classes (``labels``, else the gold field's enum values); aggregate micro | macro | weighted | per_class."""
    return ClassMetric("f1", labels)


@library_metric("prf", requires=("class_set",))
def prf(*, labels: list[str | int] = []) -> Metric:  # noqa: B006
    """Precision, recall and F1 at once: outputs <measure>_p, <measure>_r, <measure>_f1 (per class: <measure>_<class>_p ...)."""
    return ClassMetric("prf", labels)


@library_metric("confusion", requires=("class_set",))
def confusion(*, labels: list[str | int] = []) -> Metric:  # noqa: B006
    """Confusion counts <measure>_<gold>_<predicted> for every pair of classes; aggregate = sum."""
    return Confusion(labels)
