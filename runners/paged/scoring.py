"""The scorer and aggregator ``paged.lexical``: upstream ``lexical_based`` as registered components."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from procbench.runners.runtime._types import GoldSet, ItemScore
from procbench.runners.paged.gold import GoldDocument, lines_of
from procbench.runners.paged.lines import gold_spans, line_records, texts_of
from procbench.runners.paged.metrics import EXTRA, HEADLINE, metric_values, sum_statistics
from procbench.runners.paged.parse import ParsedOutput, Span, parse_text
from procbench.runners.paged.tokens import prepare
from procbench.runners.paged.walk import lexical_walk
from procbench.runners.runtime.registry import component

DIAGNOSTICS = (
    "gold_lines",
    "predicted_lines",
    "aligned_gold_lines",
    "aligned_predicted_lines",
    "unparsed_lines",
    "missing_node_lines",
    "ignored_lines",
    "prompt_spelling_lines",
    "missing_prediction",
)
_ALIGNED = {
    "lines.p_aligned": "aligned_predicted_lines",
    "lines.r_aligned": "aligned_gold_lines",
}  # the walk's names -> the API's
COUNTS = tuple(
    key for key in lexical_walk().keys() if key not in _ALIGNED
)  # the official accumulators (runners/paged/walk.py)
STATISTICS = (*COUNTS, *DIAGNOSTICS)  # the per-document values, in the scorer's order
BATCH_DOCUMENTS = 256  # documents parsed and tokenised together (their texts in a few spaCy calls)


def lexical_metrics(params: Mapping[str, Any]) -> tuple[str, ...]:
    """<name>, <name>_p, <name>_r for the ten headline metrics; with strict_extras (default) also for the strict ones, and gold_line_coverage."""
    chosen = HEADLINE + (EXTRA if params.get("strict_extras", True) else ())
    names = tuple(f"{m.name}{suffix}" for m in chosen for suffix in ("", "_p", "_r"))
    return names + (("gold_line_coverage",) if params.get("strict_extras", True) else ())


def _statistics(gold: Sequence[Span], parsed: ParsedOutput, output: str | None) -> dict[str, float]:
    counted = lexical_walk()(line_records(gold), line_records(parsed.spans))
    values = {key: counted[key] for key in COUNTS}  # a fresh dict per document
    values.update(
        gold_lines=len(gold),
        predicted_lines=len(parsed.spans),
        aligned_gold_lines=counted["lines.r_aligned"],
        aligned_predicted_lines=counted["lines.p_aligned"],
        unparsed_lines=parsed.unparsed_spans,
        missing_node_lines=parsed.count("missing_node"),
        ignored_lines=parsed.count("ignored"),
        prompt_spelling_lines=parsed.count("prompt_spelling"),
        missing_prediction=1 if output is None else 0,
    )
    return values


def score_output(
    document: GoldDocument, output: str | None, *, prompt_spellings: bool = False
) -> dict[str, float]:
    """Raw statistics plus diagnostics of one document (``output`` None: no prediction, scored as empty)."""
    return _statistics(
        gold_spans(lines_of(document)),
        parse_text(output or "", prompt_spellings=prompt_spellings),
        output,
    )


@component("scorer", "paged.lexical", needs={"record": "str"}, emits=STATISTICS)
def lexical_scorer(
    gold: GoldSet, predictions: Mapping[str, Any], *, prompt_spellings: bool = False
) -> list[ItemScore]:
    """Per document, the official PAGED statistics: strict node/edge/actor counts, BLEU sums and item
    counts per element type for both passes (keys documented in :mod:`procbench.runners.paged.walk`), plus
    line diagnostics (``gold_lines``, ``aligned_gold_lines``, ``unparsed_lines`` ...). A document
    without a prediction is scored as empty output.

    ``prompt_spellings`` (not official; default off): read the few-shot prompt's
    ``DataConstraint(x)`` / ``ActionConstraint(x)`` as ``DataObject(x)`` / ``TextAnnotation(x)``.
    Officially they are Activity nodes on sequence flows and the constraint is lost.
    """
    scores: list[ItemScore] = []
    documents = list(gold.items.items())
    for start in range(
        0, len(documents), BATCH_DOCUMENTS
    ):  # bounded memory: a batch's lines at a time
        batch = []
        for item_id, document in documents[start : start + BATCH_DOCUMENTS]:
            output = predictions.get(item_id)
            if output is not None and not isinstance(output, str):
                raise TypeError(
                    f"prediction for {item_id} must be the model output text, got {type(output).__name__}"
                )
            batch.append(
                (
                    item_id,
                    gold_spans(lines_of(document)),
                    parse_text(output or "", prompt_spellings=prompt_spellings),
                    output,
                )
            )
        # every text the batch will tokenise, in a few spaCy calls rather than one per text
        prepare(
            text
            for _, gold_side, parsed, _ in batch
            for spans in (gold_side, parsed.spans)
            for text in texts_of(spans)
        )
        scores += (
            ItemScore(item_id, _statistics(gold_side, parsed, output))
            for item_id, gold_side, parsed, output in batch
        )
    return scores


@component("aggregator", "paged.lexical", emits=lexical_metrics)
def lexical_aggregator(
    items: Sequence[ItemScore], *, round_digits: int | None = 4, strict_extras: bool = True
) -> dict[str, float]:
    """Corpus micro P/R/F1 of the official PAGED metrics from per-document statistics.

    Headline (the paper's Table 2 columns), each as ``<name>`` (F1), ``<name>_p``, ``<name>_r``, with
    their official fields: actor = other_results.bleu_agent.Actor, action =
    other_results.bleu_node.Action, data_constraint = other_results.bleu_node.DataObject,
    action_constraint = other_results.bleu_node.TextAnnotation, exclusive = node_eva_results.XOR,
    inclusive = node_eva_results.OR, parallel = node_eva_results.AND, sequence_flow =
    other_results.bleu_edge.SequenceFlow, condition_flow = other_results.bleu_edge.ConditionFlow,
    constraint_flow = other_results.bleu_edge.Association.

    ``strict_extras`` adds the strict ("hard") fields upstream also computes: action_strict
    (node_eva_results.Activity), activity_strict / start_strict / end_strict
    (node_detailed_results.*), data_constraint_strict, action_constraint_strict, gateway_strict
    (group.Gateway), constraint_strict (group.Constraint), actor_strict (agent.total),
    sequence_flow_strict / constraint_flow_strict (edge_detailed_results.*), node_total_strict,
    edge_total_strict and constraint_bleu (bleu_node.Constraint); and ``gold_line_coverage``, the
    share of gold lines that found a partner (lexical F1 >= 0.5): not official, it shows how much
    of the gold the official recall actually looked at.

    Soft (BLEU) values can exceed 1, as upstream's do. Official outputs are rounded to 4 decimals
    (``round_digits``; None keeps full precision). An empty selection gives zeros.
    """
    stats = sum_statistics(item.values for item in items)
    values = metric_values(stats, HEADLINE + (EXTRA if strict_extras else ()), round_digits)
    if strict_extras:
        gold_lines = stats.get("gold_lines", 0)
        coverage = stats.get("aligned_gold_lines", 0) / gold_lines if gold_lines else 0.0
        values["gold_line_coverage"] = (
            round(coverage, round_digits) if round_digits is not None else coverage
        )
    return values
