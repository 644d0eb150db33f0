"""Per-document statistics of the official ``lexical_based`` PAGED scorer (parity README, sections C to F).

For one document, two passes: the precision pass walks the predicted spans and aligns each with
the gold spans, the recall pass walks the gold spans and aligns each with the predicted spans. The
result is a flat mapping of the raw micro-count numerators/denominators and BLEU sums of that
document; documents are independent (the node registry is per document and per pass), so summing
these mappings over documents gives the official corpus accumulators.

Key scheme (``side`` is ``p`` for the precision pass, ``r`` for the recall pass)::

    node.<NodeType>.<side>_total | <side>_correct         strict node counts (8 node types)
    edge.<SequenceFlow|Association>.<side>_total | ...    strict edge counts
    agent.<Activity|StartNode|EndNode>.<side>_total | ... strict actor counts
    bleu_node.<Activity|StartNode|EndNode|DataObject|TextAnnotation>.<side>_sum | <side>_num
    bleu_agent.<Activity|StartNode|EndNode>.<side>_sum | <side>_num
    bleu_edge.<SequenceFlow|Association>.<side>_total | <side>_correct
    bleu_edge.ConditionFlow.<side>_sum | <side>_num
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from runners.paged.model import ACTIONS, NodeType
from runners.paged.parse import Edge, Endpoint, Span
from runners.paged.tokens import bleu1, lexical_f1, lexical_f1_matrix

ALIGN_THRESHOLD = 0.5  # a span whose best partner scores lower is skipped entirely
SAME_NODE_THRESHOLD = 0.8  # registry: two texts of this lexical F1 are one node
EXACT = 1.0  # strict matches need equal lower-cased token sets

SIDES = ("p", "r")
NODE_TYPES = tuple(NodeType)
EDGE_TYPES = ("SequenceFlow", "Association")
ACTION_TYPES = (NodeType.ACTIVITY, NodeType.START, NodeType.END)
BLEU_NODE_TYPES = (*ACTION_TYPES, NodeType.DATA, NodeType.TEXT)


def empty_statistics() -> dict[str, float]:
    """Every key of the scheme, at zero (so that every document carries the same keys)."""
    stats: dict[str, float] = {}
    for side in SIDES:
        for t in NODE_TYPES:
            stats[f"node.{t.value}.{side}_total"] = 0
            stats[f"node.{t.value}.{side}_correct"] = 0
        for e in EDGE_TYPES:
            stats[f"edge.{e}.{side}_total"] = 0
            stats[f"edge.{e}.{side}_correct"] = 0
            stats[f"bleu_edge.{e}.{side}_total"] = 0
            stats[f"bleu_edge.{e}.{side}_correct"] = 0
        stats[f"bleu_edge.ConditionFlow.{side}_sum"] = 0
        stats[f"bleu_edge.ConditionFlow.{side}_num"] = 0
        for t in ACTION_TYPES:
            stats[f"agent.{t.value}.{side}_total"] = 0
            stats[f"agent.{t.value}.{side}_correct"] = 0
            stats[f"bleu_agent.{t.value}.{side}_sum"] = 0
            stats[f"bleu_agent.{t.value}.{side}_num"] = 0
        for t in BLEU_NODE_TYPES:
            stats[f"bleu_node.{t.value}.{side}_sum"] = 0
            stats[f"bleu_node.{t.value}.{side}_num"] = 0
    return stats


@dataclass
class _Registered:
    """A node already seen in this pass (mutable: ``matched`` flips on its first strict match)."""

    node: Endpoint
    agent: str
    source_span: str
    matched: bool = False


def strict_node_match(a: Endpoint, b: Endpoint) -> bool:
    if a.type is not b.type:
        return False
    if a.type in (NodeType.START, NodeType.END, NodeType.OR):  # OR matches whatever its text
        return True
    return _texts_match(a.text, b.text)


def _texts_match(a: str, b: str) -> bool:
    if not a and not b:
        return True
    if not a or not b:
        return False
    return lexical_f1(a, b) >= EXACT


def _soft_end_score(a: Endpoint, b: Endpoint) -> float:
    """One end of a soft edge (types already equal)."""
    if a.type in (NodeType.START, NodeType.END, NodeType.AND):
        return 1.0
    if a.type in (NodeType.XOR, NodeType.OR) and not a.text and not b.text:
        return 1.0
    return bleu1(a.text, b.text)


def _same_node(entry: _Registered, node: Endpoint, agent: str, source_span: str) -> bool:
    if entry.node.type is not node.type or entry.agent != agent:
        return False
    if node.type.is_gateway:
        return entry.source_span == source_span
    if not entry.node.text and not node.text:
        return True
    if not entry.node.text or not node.text:
        return False
    return lexical_f1(entry.node.text, node.text) >= SAME_NODE_THRESHOLD


class _Pass:
    """One alignment pass over ``these`` spans against ``others`` (statistics keyed by ``side``)."""

    def __init__(self, stats: dict[str, float], side: str):
        self.stats = stats
        self.side = side
        self.registry: list[_Registered] = []
        # the same entries by (node type, agent), in registration order: only those can be the same node
        self.registry_by_kind: dict[tuple[NodeType, str], list[_Registered]] = {}
        self.aligned = 0

    def run(self, these: Sequence[Span], others: Sequence[Span], similarity: np.ndarray) -> None:
        """``similarity[i, j]``: lexical F1 of ``these[i]`` and ``others[j]``."""
        best_partners = similarity.argmax(axis=1).tolist() if len(others) else [-1] * len(these)
        for i, span in enumerate(these):
            best_j = best_partners[i]  # argmax: the first of equally good partners wins
            if best_j < 0 or similarity[i, best_j] < ALIGN_THRESHOLD:
                continue
            self.aligned += 1
            partner = others[best_j]
            if not span.edge.parsed:
                continue
            self._nodes(span, partner)
            self._edge(span.edge, partner.edge)

    def _nodes(self, span: Span, partner: Span) -> None:
        edge, other_edge = span.edge, partner.edge
        for position in (0, 1):
            node = edge.head if position == 0 else edge.tail
            if node is None:
                continue
            candidates = self.registry_by_kind.setdefault((node.type, span.agent), [])
            entry = next((e for e in candidates if _same_node(e, node, span.agent, edge.source_span)), None)
            if entry is None:
                entry = _Registered(node, span.agent, edge.source_span)
                self.registry.append(entry)
                candidates.append(entry)
                self._count_new(node, span.agent)
            if entry.matched or not other_edge.parsed:
                continue
            other = other_edge.head if position == 0 else other_edge.tail
            if other is None:
                continue
            self._compare(entry, node, span.agent, other, partner.agent)

    def _count_new(self, node: Endpoint, agent: str) -> None:
        t = node.type.value
        self.stats[f"node.{t}.{self.side}_total"] += 1
        if node.type in BLEU_NODE_TYPES:
            self.stats[f"bleu_node.{t}.{self.side}_num"] += 1
        if node.type in ACTIONS and agent:
            self.stats[f"agent.{t}.{self.side}_total"] += 1
            self.stats[f"bleu_agent.{t}.{self.side}_num"] += 1

    def _compare(self, entry: _Registered, node: Endpoint, agent: str, other: Endpoint, other_agent: str) -> None:
        t, side = node.type.value, self.side
        if strict_node_match(node, other):
            self.stats[f"node.{t}.{side}_correct"] += 1
            entry.matched = True
            if node.type in ACTIONS and agent and lexical_f1(agent, other_agent) >= EXACT:
                self.stats[f"agent.{t}.{side}_correct"] += 1
        if node.type in BLEU_NODE_TYPES:
            same_type = other.type is node.type
            if not same_type:
                score = 0.0
            elif node.type in (NodeType.START, NodeType.END):
                score = 1.0
            else:
                score = bleu1(node.text, other.text)  # this pass's text is the hypothesis
            self.stats[f"bleu_node.{t}.{side}_sum"] += score
            if same_type and node.type in ACTIONS and agent:
                self.stats[f"bleu_agent.{t}.{side}_sum"] += bleu1(agent, other_agent)

    def _edge(self, edge: Edge, other: Edge) -> None:
        assert edge.type is not None
        side, strict_type, soft_type = self.side, edge.type.value, edge.soft_type
        self.stats[f"edge.{strict_type}.{side}_total"] += 1
        if soft_type == "ConditionFlow":
            self.stats[f"bleu_edge.ConditionFlow.{side}_num"] += 1
        else:
            self.stats[f"bleu_edge.{soft_type}.{side}_total"] += 1
        if not (edge.complete and other.complete):
            return
        head, tail, other_head, other_tail = edge.head, edge.tail, other.head, other.tail
        assert head is not None and tail is not None and other_head is not None and other_tail is not None
        if (
            strict_node_match(head, other_head)
            and strict_node_match(tail, other_tail)
            and edge.type is other.type
            and _texts_match(edge.condition, other.condition)
        ):
            self.stats[f"edge.{strict_type}.{side}_correct"] += 1
        if head.type is not other_head.type or tail.type is not other_tail.type or edge.type is not other.type:
            return
        if _soft_end_score(head, other_head) >= 0.5 and _soft_end_score(tail, other_tail) >= 0.5:
            if soft_type == "ConditionFlow":
                self.stats[f"bleu_edge.ConditionFlow.{side}_sum"] += bleu1(edge.condition, other.condition)
            else:
                self.stats[f"bleu_edge.{soft_type}.{side}_correct"] += 1


@dataclass(frozen=True)
class DocumentStatistics:
    """The raw statistics of one document plus how many spans each pass aligned."""

    stats: dict[str, float]
    aligned_predicted: int
    aligned_gold: int


def score_document(gold: Sequence[Span], predicted: Sequence[Span]) -> DocumentStatistics:
    """Run both official passes on one document's gold and predicted spans."""
    stats = empty_statistics()
    # Lexical F1 is symmetric, so one matrix serves both passes.
    sims = lexical_f1_matrix([p.line for p in predicted], [g.line for g in gold])
    precision = _Pass(stats, "p")
    precision.run(predicted, gold, sims)
    recall = _Pass(stats, "r")
    recall.run(gold, predicted, sims.T)
    return DocumentStatistics(stats, precision.aligned, recall.aligned)
