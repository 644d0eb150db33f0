"""PARADISE's weighted P/R/F1 kernel against scikit-learn (the library upstream's numbers come from)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.paradise.metrics import weighted_prf

sklearn_metrics = pytest.importorskip("sklearn.metrics")

pairs = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=60)


@given(pairs)
def test_weighted_prf_equals_scikit_learn(rows: list[tuple[int, int]]) -> None:
    gold, predicted = [g for g, _ in rows], [p for _, p in rows]
    ours = weighted_prf(gold, predicted)
    p, r, f, _ = sklearn_metrics.precision_recall_fscore_support(
        gold, predicted, average="weighted", zero_division=0
    )
    assert (ours.precision, ours.recall, ours.f1) == pytest.approx((p, r, f), abs=1e-12)


@given(pairs)
def test_weighted_recall_is_accuracy(rows: list[tuple[int, int]]) -> None:
    gold, predicted = [g for g, _ in rows], [p for _, p in rows]
    accuracy = sum(g == p for g, p in rows) / len(rows)
    assert weighted_prf(gold, predicted).recall == pytest.approx(accuracy)
