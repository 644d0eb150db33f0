"""PAGED's two kernels (docs/metrics.md §5): line alignment by lexical F1, and BLEU-1.

Per pair, from scratch: tokenise both strings with spaCy's English tokenizer (lower-cased), then
the harmonic mean of the shares of each side's tokens found in the other; BLEU-1 through NLTK's
``sentence_bleu`` itself on the filtered tokens, rounded to 4 decimals. ``document_statistics``:
the whole per-document statistics on these kernels, the plain way (tests/test_paged_fast_path.py).
"""

from __future__ import annotations

import warnings

DROPPED = {
    ",",
    ".",
    "?",
    ";",
    ":",
    "!",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "-",
    "_",
    "a",
    "the",
    "an",
}
_nlp = None


def tokens(text: str) -> list[str]:
    global _nlp
    if _nlp is None:
        import spacy

        _nlp = spacy.blank("en")
    return [t.lower_ for t in _nlp.tokenizer(text)]


def lexical_f1(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    p = sum(1 for t in ta if t in set(tb)) / len(ta)
    r = sum(1 for t in tb if t in set(ta)) / len(tb)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def alignment_matrix(predicted: list[str], gold: list[str]) -> list[list[float]]:
    return [[lexical_f1(p, g) for g in gold] for p in predicted]


def bleu1(hypothesis: str, reference: str) -> float:
    from nltk.translate.bleu_score import sentence_bleu

    if not hypothesis or not reference:
        return 0.0
    hyp = [t for t in tokens(hypothesis) if t not in DROPPED]
    ref = [t for t in tokens(reference) if t not in DROPPED]
    if not hyp or not ref:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return round(float(sentence_bleu([ref], hyp, weights=(1, 0, 0, 0))), 4)


# -- the whole per-document statistics, plainly -----------------------------------------------------
# Upstream ``lexical_based`` for one document (docs/metrics.md §5.3-5.6), written the obvious way: each
# span scored against every span of the other side, the first best partner kept, a node registry
# scanned from its start for every node. Spans come from ``procbench.runners.paged.parse`` (the parser is not
# what this reference checks); the result has the key scheme of ``procbench.runners.paged.walk``, zeros left out.

ACTIONS = ("Activity", "StartNode", "EndNode")
BLEU_NODES = (*ACTIONS, "DataObject", "TextAnnotation")


def _texts_match(a: str, b: str) -> bool:
    if not a and not b:
        return True
    if not a or not b:
        return False
    return lexical_f1(a, b) >= 1.0


def _strict_node_match(a, b) -> bool:  # noqa: ANN001 - parse.Endpoint values
    if a.type.value != b.type.value:
        return False
    if a.type.value in ("StartNode", "EndNode", "OR"):
        return True
    return _texts_match(a.text, b.text)


def _soft_end_score(a, b) -> float:  # noqa: ANN001
    if a.type.value in ("StartNode", "EndNode", "AND"):
        return 1.0
    if a.type.value in ("XOR", "OR") and not a.text and not b.text:
        return 1.0
    return bleu1(a.text, b.text)


def _same_node(entry: dict, node, agent: str, source_span: str) -> bool:  # noqa: ANN001
    if entry["node"].type.value != node.type.value or entry["agent"] != agent:
        return False
    if node.type.value in ("XOR", "OR", "AND"):
        return entry["source_span"] == source_span
    if not entry["node"].text and not node.text:
        return True
    if not entry["node"].text or not node.text:
        return False
    return lexical_f1(entry["node"].text, node.text) >= 0.8


def _one_pass(stats: dict, side: str, these: list, others: list) -> int:
    registry: list[dict] = []
    aligned = 0
    for span in these:
        scores = [lexical_f1(span.line, other.line) for other in others]
        if not scores or max(scores) < 0.5:
            continue
        aligned += 1
        partner = others[scores.index(max(scores))]
        edge, other_edge = span.edge, partner.edge
        if not edge.parsed:
            continue
        for node, other in ((edge.head, other_edge.head), (edge.tail, other_edge.tail)):
            if node is None:
                continue
            t = node.type.value
            entry = next(
                (e for e in registry if _same_node(e, node, span.agent, edge.source_span)), None
            )
            if entry is None:
                entry = {
                    "node": node,
                    "agent": span.agent,
                    "source_span": edge.source_span,
                    "matched": False,
                }
                registry.append(entry)
                stats[f"node.{t}.{side}_total"] += 1
                if t in BLEU_NODES:
                    stats[f"bleu_node.{t}.{side}_num"] += 1
                if t in ACTIONS and span.agent:
                    stats[f"agent.{t}.{side}_total"] += 1
                    stats[f"bleu_agent.{t}.{side}_num"] += 1
            if entry["matched"] or not other_edge.parsed or other is None:
                continue
            if _strict_node_match(node, other):
                stats[f"node.{t}.{side}_correct"] += 1
                entry["matched"] = True
                if t in ACTIONS and span.agent and lexical_f1(span.agent, partner.agent) >= 1.0:
                    stats[f"agent.{t}.{side}_correct"] += 1
            if t in BLEU_NODES:
                same_type = other.type.value == t
                score = (
                    0.0
                    if not same_type
                    else 1.0
                    if t in ("StartNode", "EndNode")
                    else bleu1(node.text, other.text)
                )
                stats[f"bleu_node.{t}.{side}_sum"] += score
                if same_type and t in ACTIONS and span.agent:
                    stats[f"bleu_agent.{t}.{side}_sum"] += bleu1(span.agent, partner.agent)
        kind = edge.type.value
        soft = "ConditionFlow" if kind == "SequenceFlow" and edge.condition else kind
        stats[f"edge.{kind}.{side}_total"] += 1
        stats[
            f"bleu_edge.{soft}.{side}_num"
            if soft == "ConditionFlow"
            else f"bleu_edge.{soft}.{side}_total"
        ] += 1
        if not (edge.complete and other_edge.complete):
            continue
        heads, tails = (edge.head, other_edge.head), (edge.tail, other_edge.tail)
        if (
            _strict_node_match(*heads)
            and _strict_node_match(*tails)
            and kind == other_edge.type.value
            and _texts_match(edge.condition, other_edge.condition)
        ):
            stats[f"edge.{kind}.{side}_correct"] += 1
        same_types = (
            heads[0].type.value == heads[1].type.value
            and tails[0].type.value == tails[1].type.value
            and kind == other_edge.type.value
        )
        if same_types and _soft_end_score(*heads) >= 0.5 and _soft_end_score(*tails) >= 0.5:
            if soft == "ConditionFlow":
                stats[f"bleu_edge.ConditionFlow.{side}_sum"] += bleu1(
                    edge.condition, other_edge.condition
                )
            else:
                stats[f"bleu_edge.{soft}.{side}_correct"] += 1
    return aligned


def document_statistics(gold: list, predicted: list) -> tuple[dict[str, float], int, int]:
    """(non-zero statistics, aligned predicted spans, aligned gold spans) of one document's spans."""
    from collections import defaultdict

    stats: dict[str, float] = defaultdict(float)
    aligned_predicted = _one_pass(stats, "p", predicted, gold)
    aligned_gold = _one_pass(stats, "r", gold, predicted)
    return {key: value for key, value in stats.items() if value}, aligned_predicted, aligned_gold
