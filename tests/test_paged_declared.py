"""PAGED's reported numbers declared in the spec (``measure x { counts = [...]  stats = [...] }``).

The spec pools the counts ``paged.lexical()`` emits; these tests hold the declaration to the Python
aggregator the parity tests check against the official scorer (``lexical_aggregator``): equal to the
last bit on every parity case, on random subsets (what a slice or a bootstrap resample aggregates)
and on the bundled samples. Then the checker's refusals of a counts measure.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl import SpecError, check_file
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.runners.runtime._types import ItemScore
from procbench.runners.metrics._counts import MicroCounts
from procbench.runners.paged.metrics import HEADLINE
from procbench.runners.paged.scoring import lexical_aggregator

HEADLINE_OUTPUTS = [f"{m.name}{suffix}" for m in HEADLINE for suffix in ("", "_p", "_r")]
CASES = ["gold_as_prediction", "perturbed", "sequential_baseline", "quirks"]


def _declared(items: list[ItemScore]) -> dict[str, float]:
    _, runner = load_task("paged")
    return runner.aggregate(items)


@pytest.mark.parametrize("case", CASES)
def test_the_declared_aggregation_equals_the_python_aggregator_on_every_parity_case(
    case: str, data_root: Path, parity_dir: Path
) -> None:
    _, runner = load_task("paged")
    evaluation = runner.evaluate(
        data_root, "dev", parity_dir / "paged" / case / "predictions.jsonl"
    )
    official = lexical_aggregator(evaluation.items)
    assert {k: evaluation.metrics[k] for k in HEADLINE_OUTPUTS} == {
        k: official[k] for k in HEADLINE_OUTPUTS
    }
    rng = random.Random(case)
    for size in (1, 7, 60, len(evaluation.items) // 2):
        subset = rng.sample(evaluation.items, size)
        declared, expected = _declared(subset), lexical_aggregator(subset)
        assert {k: declared[k] for k in HEADLINE_OUTPUTS} == {
            k: expected[k] for k in HEADLINE_OUTPUTS
        }, size


def test_the_declared_aggregation_equals_the_python_aggregator_on_the_samples() -> None:
    _, runner = load_task("paged")
    for predictions in sorted((SAMPLE_SUBMISSIONS_DIR / "paged").glob("*.jsonl")):
        evaluation = runner.evaluate(SAMPLE_DATA_ROOT, "dev", predictions)
        official = lexical_aggregator(evaluation.items)
        assert {k: evaluation.metrics[k] for k in HEADLINE_OUTPUTS} == {
            k: official[k] for k in HEADLINE_OUTPUTS
        }, predictions.name
        for (
            label,
            by_value,
        ) in evaluation.slices.items():  # each slice value aggregates its own items the same way
            for value, result in by_value.items():
                chosen = [
                    i for i in evaluation.items if evaluation.item_labels[i.item_id][label] == value
                ]
                expected = lexical_aggregator(chosen)
                assert result.n_items == len(chosen) > 0
                assert {k: result.metrics[k] for k in HEADLINE_OUTPUTS} == {
                    k: expected[k] for k in HEADLINE_OUTPUTS
                }, (label, value)


counts = st.lists(st.tuples(*(st.integers(0, 20) for _ in range(8))), max_size=30)


@settings(max_examples=60, deadline=None)
@given(counts)
def test_micro_counts_pool_items_then_prefixes(rows: list[tuple[int, ...]]) -> None:
    """Against a hand count: Σ over items and both prefixes, zero denominators give 0, F1 from P and R."""
    metric = MicroCounts(["a", "b"], [("pn",), ("pd",), ("rn",), ("rd",)])
    f1, p, r = metric.reduce(rows, "micro")
    totals = [sum(row[j] + row[4 + j] for row in rows) for j in range(4)]
    assert p == (totals[0] / totals[1] if totals[1] else 0.0)
    assert r == (totals[2] / totals[3] if totals[3] else 0.0)
    assert f1 == pytest.approx(2 * p * r / (p + r) if p + r else 0.0, abs=1e-12)
    assert min(f1, p, r) >= 0 and min(p, r) <= f1 <= max(p, r) or f1 == 0.0


def _refused(tmp_path: Path, old: str, new: str) -> str:
    folder = tmp_path / f"specs{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for path in SPECS_DIR.iterdir():
        if path.is_file() and path.stem == "paged":
            shutil.copyfile(path, folder / path.name)
    spec = folder / "paged.spec"
    text = spec.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    spec.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(SpecError) as refused:
        check_file(spec)
    return str(refused.value)


def test_a_count_the_scorer_does_not_emit_is_refused_with_the_close_names(tmp_path: Path) -> None:
    message = _refused(tmp_path, "counts = [node.XOR]", "counts = [node.XRO]")
    assert "per-item value of measure 'exclusive'" in message and "'node.XRO.p_correct'" in message
    assert "did you mean 'node.XOR.p_correct'" in message


def test_counts_need_two_or_four_stats_and_no_metric(tmp_path: Path) -> None:
    strict = "counts = [node.XOR]\n      stats  = [p_correct, p_total, r_correct, r_total]"
    message = _refused(tmp_path, strict, strict.replace(", r_total]", "]"))
    assert (
        "needs stats = [numerator, denominator] or [p_num, p_den, r_num, r_den] (under counts = [<prefix>, ...] if given)"
        in message
    )
    message = _refused(
        tmp_path, "counts = [node.OR]", 'counts = [node.OR]\n      where  = { gateways = "none" }'
    )
    assert "`counts = [...]` pools the scorer's count values" in message


def test_the_paged_spec_declares_its_scoring_without_a_python_scorer_or_aggregator() -> None:
    spec = check_file(SPECS_DIR / "paged.spec").spec
    assert spec.score.aggregate is None and spec.score.scorer is None
    assert (
        spec.score.derive is not None and spec.score.derive.name == "paged.graph_lines"
    )  # parsing only
    assert [a.name for a in spec.score.aligns] == ["lines"] and [
        e.name for e in spec.score.aligns[0].entities
    ] == ["node"]
    names = [ms.name for ms in spec.score.measures]
    assert names[: len(HEADLINE)] == [
        m.name for m in HEADLINE
    ]  # the official ten, then the bounded variants (issue #16; tests/test_paged_bounded.py)
    assert names[len(HEADLINE) :] == [
        "actor_bounded",
        "action_bounded",
        "data_constraint_bounded",
        "action_constraint_bounded",
    ]
