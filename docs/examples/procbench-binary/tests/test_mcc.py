"""The plugin's own test: its numbers are scikit-learn's (run with the plugin installed)."""

import pytest
from sklearn.metrics import matthews_corrcoef

from procbench.ext import get


def test_mcc_is_scikit_learns() -> None:
    metric = get("metric", "mcc").build(positive="yes")
    normalise = get("normaliser", "yes_no").build()
    gold = ["yes", "no", "no", "yes", "yes", "no"]
    answers = ["Yes.", "y", "No", "true", "maybe", "n"]
    predicted = [normalise(a) for a in answers]
    assert predicted == ["yes", "yes", "no", "yes", "maybe", "no"]
    rows = [metric.item(g, p, "corpus") for g, p in zip(gold, predicted)]
    want = matthews_corrcoef([g == "yes" for g in gold], [p == "yes" for p in predicted])
    assert metric.reduce(rows, "corpus") == (pytest.approx(want, abs=1e-12),)
