"""ProPara NAACL'18 declared in the spec: question counting and aggregation (docs/metrics.md §2B.4–2B.5).

The spec extracts each paragraph's question instances and the grid's answers (the deriver
``propara.naacl18_questions``), counts their outcomes with library metrics (binary_outcomes,
answer_outcomes, set_outcomes), pools them (100 x accuracy, Q8's F1), and averages categories with
upstream's weighted micro average.  Held to the independent Python transcription it replaced
(tests/naacl18_reference.py), count for count, on the real ProGlobal run, perturbed runs and generated
grids, and to the Python aggregator the parity tests check against the official evaluator
(``aggregate_naacl18``) on the real run, random subsets (slices, bootstrap resamples) and the samples.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from procbench.dsl import SpecError, check_text
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.runners import ItemScore
from procbench.runners.metrics._derived import FUNCTIONS
from procbench.runners.propara.naacl18 import aggregate_naacl18, naacl18_metrics

REPORTED = tuple(naacl18_metrics({}))
# percentages computed as ratio x 100 rather than 100 x count / count: equal to ~1e-13, far inside
# the official printout's two decimals
TOLERANCE = 1e-9


def _close(declared: dict[str, float], official: dict[str, float]) -> None:
    assert set(REPORTED) <= set(declared)
    for name in REPORTED:
        assert declared[name] == pytest.approx(official[name], abs=TOLERANCE), name


def _python_names(items: list[ItemScore]) -> list[ItemScore]:
    """The spec stores a measure's counts as q1:tp ...; the Python aggregator reads q1_tp ..."""
    return [
        ItemScore(i.item_id, {k.replace(":", "_"): v for k, v in i.values.items()}) for i in items
    ]


def test_the_declared_aggregation_equals_the_python_aggregator_on_the_proglobal_run(
    data_root: Path, parity_dir: Path
) -> None:
    _, runner = load_task("propara-naacl18")
    evaluation = runner.evaluate(
        data_root, "test", parity_dir / "propara" / "naacl18" / "proglobal.untuned.test.output.tsv"
    )
    _close(evaluation.metrics, aggregate_naacl18(_python_names(evaluation.items)))
    rng = random.Random(18)
    for size in (1, 3, 10, len(evaluation.items) // 2):
        subset = rng.sample(evaluation.items, size)
        _close(runner.aggregate(subset), aggregate_naacl18(_python_names(subset)))


def test_the_declared_aggregation_equals_the_python_aggregator_on_the_samples() -> None:
    _, runner = load_task("propara-naacl18")
    for predictions in sorted((SAMPLE_SUBMISSIONS_DIR / "propara-naacl18").glob("*.tsv")):
        evaluation = runner.evaluate(SAMPLE_DATA_ROOT, "test", predictions)
        _close(evaluation.metrics, aggregate_naacl18(_python_names(evaluation.items)))
        for by_value in evaluation.slices.values():
            for value, result in by_value.items():
                chosen = [
                    i
                    for i in evaluation.items
                    if evaluation.item_labels[i.item_id]["prompt"] == value
                ]
                _close(result.metrics, aggregate_naacl18(_python_names(chosen)))


def test_weighted_adds_products_left_to_right_over_the_weights() -> None:
    weighted = FUNCTIONS["weighted"]
    assert (
        weighted(50.0, 750, 40.0, 601, 30.0, 823) == (750 * 50.0 + 601 * 40.0 + 823 * 30.0) / 2174
    )
    assert weighted(1.0, 0, 2.0, 0) == 0.0


def test_weighted_needs_value_weight_pairs() -> None:
    text = (
        (SPECS_DIR / "propara-naacl18.spec")
        .read_text(encoding="utf-8")
        .replace("weighted(cat1, 750, cat2, 601, cat3, 823)", "weighted(cat1, 750, cat2)")
    )
    with pytest.raises(SpecError) as refused:
        check_text(text, "propara-naacl18.spec", search=[SPECS_DIR])
    assert "weighted() takes pairs of (value, weight) argument(s), got 3" in str(refused.value)


def test_a_formula_measure_with_counts_is_refused() -> None:
    text = (
        (SPECS_DIR / "propara-naacl18.spec")
        .read_text(encoding="utf-8")
        .replace(
            "measure cat1 { from = mean(q1, q4, q7) }",
            "measure cat1 { from = mean(q1, q4, q7)  stats = [q1_tp, q1_fp] }",
        )
    )
    with pytest.raises(SpecError) as refused:
        check_text(text, "propara-naacl18.spec", search=[SPECS_DIR])
    assert (
        "measure 'cat1': `from = ...` computes it from other metrics: no metric, value, gold, prediction, counts, stats"
        in str(refused.value)
    )
