"""Properties of the PAGED scorer and aggregator (generated graphs and the real dev split)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from procbench.runners.runtime._types import GoldSet, ItemScore
from procbench.runners.paged.gold import GoldDocument, document_from_record
from tests.paged_reference import score_document
from procbench.runners.paged.metrics import HEADLINE, METRICS, counts_of
from procbench.runners.paged.parse import parse_text
from procbench.runners.paged.reader import read_graphs
from procbench.runners.paged.scoring import (
    gold_spans,
    lexical_aggregator,
    lexical_scorer,
    score_output,
)
from procbench.runners.paged.tokens import lexical_f1
from tests.test_paged_strategies import WORDS, text_format_is_lossless, gold_records

COUNT_METRICS = [m for m in METRICS.values() if not m.is_bleu]


def _statistics(values: dict[str, float]) -> dict[str, float]:
    return {key: value for key, value in values.items() if "." in key}


def _lines_align_to_themselves(document: GoldDocument) -> bool:
    """No two different gold lines (text or actor) have the same token set, so alignment has no ties."""
    spans = gold_spans(document.lines)
    return all(
        (a.line, a.agent) == (b.line, b.agent) or lexical_f1(a.line, b.line) < 1.0
        for i, a in enumerate(spans)
        for b in spans[i + 1 :]
    )


@given(gold_records())
def test_gold_as_prediction_scores_one_wherever_gold_has_elements(record: dict[str, Any]) -> None:
    """Exactly 1 for P, R and F1 of every metric with a non-empty denominator, once alignment has no ties.

    Real documents break the premise (lines with equal token sets, one line under two actors), which is why
    the official gold-as-prediction fixture is not all ones and its soft action score exceeds 1.
    """
    assume(text_format_is_lossless(record))
    document = document_from_record(record)
    assume(_lines_align_to_themselves(document))
    stats = score_output(document, document.text)
    for metric in METRICS.values():
        counts = counts_of(metric, stats)
        assert counts.p_den == counts.r_den, metric.name
        if counts.p_den:
            assert (counts.precision, counts.recall, counts.f1) == (1.0, 1.0, 1.0), metric.name


@given(gold_records(), st.text(max_size=80))
def test_scoring_never_raises_and_strict_values_are_ratios(
    record: dict[str, Any], output: str
) -> None:
    values = lexical_aggregator(
        [ItemScore("x", score_output(document_from_record(record), output))], round_digits=None
    )
    for metric in COUNT_METRICS:
        assert (
            0.0 <= values[metric.name] <= 1.0
            and 0.0 <= values[f"{metric.name}_p"] <= 1.0
            and 0.0 <= values[f"{metric.name}_r"] <= 1.0
        )
    assert all(value >= 0.0 for value in values.values())


@given(gold_records(), st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_an_unrelated_line_changes_nothing(record: dict[str, Any], words: list[str]) -> None:
    """A predicted line whose best lexical F1 with every gold line is below 0.5 is skipped: recall (and precision) stay put."""
    document = document_from_record(record)
    line = f"{' '.join(words)} -> {' '.join(reversed(words))}"
    assume(all(lexical_f1(line, gold.text) < 0.5 for gold in document.lines))
    base = score_output(document, document.text)
    extended = score_output(document, document.text + "\n" + line)
    assert _statistics(extended) == _statistics(base)


@given(gold_records(), gold_records())
def test_swapping_gold_and_prediction_swaps_precision_and_recall(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    """The two passes are mirror images (each pass's own text is the BLEU hypothesis)."""
    a = parse_text(document_from_record(first).text).spans
    b = parse_text(document_from_record(second).text).spans
    forward, backward = score_document(a, b).stats, score_document(b, a).stats
    for key, value in forward.items():
        mirrored = key.replace(".p_", ".x_").replace(".r_", ".p_").replace(".x_", ".r_")
        assert backward[mirrored] == pytest.approx(value, abs=1e-9), key


@given(gold_records())
def test_prompt_spellings_variant_reads_constraints(record: dict[str, Any]) -> None:
    document = document_from_record(record)
    respelled = document.text.replace("DataObject(", "DataConstraint(").replace(
        "TextAnnotation(", "ActionConstraint("
    )
    assert score_output(document, respelled, prompt_spellings=True) == score_output(
        document, document.text, prompt_spellings=True
    )
    if respelled != document.text:
        official = score_output(document, respelled)
        assert official["node.DataObject.p_total"] == official["node.TextAnnotation.p_total"] == 0


def test_aggregator_on_no_items_gives_zeros() -> None:
    values = lexical_aggregator([])
    assert values and all(value == 0 for value in values.values())
    for metric in HEADLINE:
        assert {metric.name, f"{metric.name}_p", f"{metric.name}_r"} <= values.keys()


def test_missing_prediction_counts_nowhere_and_is_flagged(data_root: Path) -> None:
    gold = read_graphs(data_root, "dev")
    first, second = list(gold.items)[:2]
    subset = GoldSet({first: gold.items[first], second: gold.items[second]}, {})
    items = lexical_scorer(subset, {first: gold.items[first].text})
    assert [item.item_id for item in items] == [first, second]
    assert items[1].values["missing_prediction"] == 1 and items[0].values["missing_prediction"] == 0
    assert all(value == 0 for value in _statistics(dict(items[1].values)).values())
    assert items[1].values["gold_lines"] == len(gold.items[second].lines)
    assert (
        lexical_aggregator(items)["gold_line_coverage"]
        < 1.0
        == lexical_aggregator(items[:1])["gold_line_coverage"]
    )


def test_slices_aggregate_any_subset(data_root: Path) -> None:
    gold = read_graphs(data_root, "dev")
    chosen = [
        item_id for item_id, labels in gold.labels.items() if labels["gateways"] == "parallel"
    ][:5]
    subset = GoldSet({i: gold.items[i] for i in chosen}, {i: gold.labels[i] for i in chosen})
    items = lexical_scorer(subset, {i: gold.items[i].text for i in chosen})
    whole = lexical_aggregator(items)
    assert whole["parallel"] > 0 and whole["exclusive_p"] == 0
    for item in items:
        assert set(lexical_aggregator([item])) == set(whole)
