"""The former Python counting of upstream PAGED's ``lexical_based`` scorer: the oracle of the declared walk (docs/metrics.md §5.3-5.6).

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

Not official (added beside, changing none of the above): the soft BLEU-1 node and actor sums count
a node each time a not-yet-matched node is compared again, while ``_num`` counts it once, so the
official soft scores can exceed 1 (docs/metrics.md §5). The bounded variant counts each registered
node once, at its best BLEU-1 over its comparisons (0 when never compared), so ``_sum <= _num``::

    bleu_node_once.<Activity|StartNode|EndNode|DataObject|TextAnnotation>.<side>_sum | <side>_num
    bleu_agent_once.<Activity|StartNode|EndNode>.<side>_sum | <side>_num

``_num`` equals the official ``_num``; where no node is compared twice ``_sum`` equals the official
``_sum`` to the last bit (the same additions in the same order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from procbench.runners.paged.model import ACTIONS, GATEWAYS, FlowType, NodeType
from procbench.runners.paged.parse import Edge, Endpoint, Span
from procbench.runners.paged.tokens import (
    bleu1,
    lexical_f1,
    lexical_f1_matrix,
    same_tokens,
    token_set,
)

ALIGN_THRESHOLD = 0.5  # a span whose best partner scores lower is skipped entirely
SAME_NODE_THRESHOLD = 0.8  # registry: two texts of this lexical F1 are one node
EXACT = 1.0  # strict matches need equal lower-cased token sets

SIDES = ("p", "r")
NODE_TYPES = tuple(NodeType)
EDGE_TYPES = ("SequenceFlow", "Association")
ACTION_TYPES = (NodeType.ACTIVITY, NodeType.START, NodeType.END)
BLEU_NODE_TYPES = (*ACTION_TYPES, NodeType.DATA, NodeType.TEXT)


def _empty_statistics() -> dict[str, float]:
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
    for side in SIDES:  # the bounded variant (not official), after every official key
        for t in BLEU_NODE_TYPES:
            stats[f"bleu_node_once.{t.value}.{side}_sum"] = 0
            stats[f"bleu_node_once.{t.value}.{side}_num"] = 0
        for t in ACTION_TYPES:
            stats[f"bleu_agent_once.{t.value}.{side}_sum"] = 0
            stats[f"bleu_agent_once.{t.value}.{side}_num"] = 0
    return stats


_EMPTY = _empty_statistics()


def empty_statistics() -> dict[str, float]:
    """Every key of the scheme, at zero (so that every document carries the same keys)."""
    return dict(_EMPTY)


@dataclass(frozen=True)
class _Keys:
    """The statistics keys one pass adds to, by node type or edge type (built once, not per increment)."""

    node_total: dict[NodeType, str]
    node_correct: dict[NodeType, str]
    bleu_node_sum: dict[NodeType, str]
    bleu_node_num: dict[NodeType, str]
    agent_total: dict[NodeType, str]
    agent_correct: dict[NodeType, str]
    bleu_agent_sum: dict[NodeType, str]
    bleu_agent_num: dict[NodeType, str]
    edge_total: dict[str, str]  # by strict type (SequenceFlow | Association)
    edge_correct: dict[str, str]
    soft_total: dict[str, str]  # by soft type (SequenceFlow | Association | ConditionFlow: _num)
    soft_correct: dict[str, str]  # SequenceFlow | Association
    condition_sum: str
    once_node_sum: dict[
        NodeType, str
    ]  # the bounded variant: each registered node once, at its best BLEU-1
    once_node_num: dict[NodeType, str]
    once_agent_sum: dict[NodeType, str]
    once_agent_num: dict[NodeType, str]

    @classmethod
    def of(cls, side: str) -> _Keys:
        def by_type(pattern: str, types: Sequence[NodeType]) -> dict[NodeType, str]:
            return {t: pattern.format(t=t.value, side=side) for t in types}

        return cls(
            node_total=by_type("node.{t}.{side}_total", NODE_TYPES),
            node_correct=by_type("node.{t}.{side}_correct", NODE_TYPES),
            bleu_node_sum=by_type("bleu_node.{t}.{side}_sum", BLEU_NODE_TYPES),
            bleu_node_num=by_type("bleu_node.{t}.{side}_num", BLEU_NODE_TYPES),
            agent_total=by_type("agent.{t}.{side}_total", ACTION_TYPES),
            agent_correct=by_type("agent.{t}.{side}_correct", ACTION_TYPES),
            bleu_agent_sum=by_type("bleu_agent.{t}.{side}_sum", ACTION_TYPES),
            bleu_agent_num=by_type("bleu_agent.{t}.{side}_num", ACTION_TYPES),
            edge_total={e: f"edge.{e}.{side}_total" for e in EDGE_TYPES},
            edge_correct={e: f"edge.{e}.{side}_correct" for e in EDGE_TYPES},
            soft_total={
                **{e: f"bleu_edge.{e}.{side}_total" for e in EDGE_TYPES},
                "ConditionFlow": f"bleu_edge.ConditionFlow.{side}_num",
            },
            soft_correct={e: f"bleu_edge.{e}.{side}_correct" for e in EDGE_TYPES},
            condition_sum=f"bleu_edge.ConditionFlow.{side}_sum",
            once_node_sum=by_type("bleu_node_once.{t}.{side}_sum", BLEU_NODE_TYPES),
            once_node_num=by_type("bleu_node_once.{t}.{side}_num", BLEU_NODE_TYPES),
            once_agent_sum=by_type("bleu_agent_once.{t}.{side}_sum", ACTION_TYPES),
            once_agent_num=by_type("bleu_agent_once.{t}.{side}_num", ACTION_TYPES),
        )


_KEYS = {side: _Keys.of(side) for side in SIDES}
_BLEU_NODES = frozenset(BLEU_NODE_TYPES)
_ALWAYS_SAME = frozenset({NodeType.START, NodeType.END, NodeType.OR})  # strict match by type alone
_SOFT_BY_TYPE = frozenset(
    {NodeType.START, NodeType.END, NodeType.AND}
)  # soft edge end: 1 by type alone
_TEXTLESS_GATEWAYS = frozenset({NodeType.XOR, NodeType.OR})
_START_END = frozenset(
    {NodeType.START, NodeType.END}
)  # (members are read once: Enum class attributes are slow)
_SEQUENCE = FlowType.SEQUENCE
_FLOW_NAMES = {flow: flow.value for flow in FlowType}


@dataclass(slots=True)
class _Registered:
    """A node already seen in this pass (mutable: ``matched`` flips on its first strict match)."""

    node: Endpoint
    agent: str
    source_span: str
    tokens: frozenset[str]  # of the node's text
    matched: bool = False
    best_bleu: float | None = (
        None  # the bounded variant: its best BLEU-1 so far (None: never compared)
    )
    best_agent: float | None = None  # likewise for its actor


def strict_node_match(a: Endpoint, b: Endpoint) -> bool:
    if a.type is not b.type:
        return False
    if a.type in _ALWAYS_SAME:  # OR matches whatever its text
        return True
    return _texts_match(a.text, b.text)


def _texts_match(a: str, b: str) -> bool:
    if not a and not b:
        return True
    if not a or not b:
        return False
    return same_tokens(a, b)  # lexical_f1(a, b) >= EXACT


def _soft_end_score(a: Endpoint, b: Endpoint) -> float:
    """One end of a soft edge (types already equal)."""
    if a.type in _SOFT_BY_TYPE:
        return 1.0
    if a.type in _TEXTLESS_GATEWAYS and not a.text and not b.text:
        return 1.0
    return bleu1(a.text, b.text)


class _Pass:
    """One alignment pass over ``these`` spans against ``others`` (statistics keyed by ``side``)."""

    def __init__(self, stats: dict[str, float], side: str):
        self.stats = stats
        self.side = side
        self.keys = _KEYS[side]
        # registered nodes by (node type, agent), in registration order: only those can be the same node
        self.registry_by_kind: dict[tuple[NodeType, str], list[_Registered]] = {}
        # (type, agent, gateway line or text) -> the entry such a node resolves to: the registry only
        # grows, so the first matching entry (in registration order) of an identity never changes
        self.resolved: dict[tuple[NodeType, str, str], _Registered] = {}
        self.aligned = 0

    def run(self, these: Sequence[Span], others: Sequence[Span], similarity: np.ndarray) -> None:
        """``similarity[i, j]``: lexical F1 of ``these[i]`` and ``others[j]``."""
        if not len(others):
            return
        best_partners = similarity.argmax(
            axis=1
        ).tolist()  # argmax: the first of equally good partners wins
        best_values = similarity.max(axis=1).tolist()
        for span, best_j, best in zip(these, best_partners, best_values):
            if best < ALIGN_THRESHOLD:
                continue
            self.aligned += 1
            edge = span.edge
            if not edge.parsed:
                continue
            partner = others[best_j]
            other_edge = partner.edge
            if edge.head is not None:
                self._node(
                    edge.head,
                    span.agent,
                    edge.source_span,
                    other_edge.head if other_edge.parsed else None,
                    partner.agent,
                )
            if edge.tail is not None:
                self._node(
                    edge.tail,
                    span.agent,
                    edge.source_span,
                    other_edge.tail if other_edge.parsed else None,
                    partner.agent,
                )
            self._edge(edge, other_edge)

    def _node(
        self, node: Endpoint, agent: str, source_span: str, other: Endpoint | None, other_agent: str
    ) -> None:
        """Register the node (or find it registered), then compare it with its partner's node unless already matched."""
        gateway = node.type in GATEWAYS
        key = (node.type, agent, source_span if gateway else node.text)
        entry = self.resolved.get(key)
        if entry is None:
            entry = self._register(node, agent, source_span)
            if (
                gateway or not node.text or token_set(node.text)
            ):  # the node is the same as itself (a text has tokens)
                self.resolved[key] = entry
        if entry.matched or other is None:
            return
        self._compare(entry, node, agent, other, other_agent)

    def _register(self, node: Endpoint, agent: str, source_span: str) -> _Registered:
        """The first registered node that is the same node, else a new entry.

        The same node (upstream's registry rule): same type and actor, and the same gateway line
        (gateways), both texts empty, or texts of lexical F1 >= 0.8.
        """
        t, text = node.type, node.text
        candidates = self.registry_by_kind.setdefault((t, agent), [])
        if not candidates:
            found = None
        elif t in GATEWAYS:
            found = next((e for e in candidates if e.source_span == source_span), None)
        elif not text:
            found = next((e for e in candidates if not e.node.text), None)
        else:
            mine = token_set(text)  # no shared token: lexical F1 0, not computed
            found = next(
                (
                    e
                    for e in candidates
                    if e.node.text
                    and not mine.isdisjoint(e.tokens)
                    and lexical_f1(e.node.text, text) >= SAME_NODE_THRESHOLD
                ),
                None,
            )
        if found is not None:
            return found
        entry = _Registered(node, agent, source_span, token_set(text))
        candidates.append(entry)
        keys, stats = self.keys, self.stats
        stats[keys.node_total[t]] += 1
        if t in _BLEU_NODES:
            stats[keys.bleu_node_num[t]] += 1
            stats[keys.once_node_num[t]] += 1
        if t in ACTIONS and agent:
            stats[keys.agent_total[t]] += 1
            stats[keys.bleu_agent_num[t]] += 1
            stats[keys.once_agent_num[t]] += 1
        return entry

    def _compare(
        self, entry: _Registered, node: Endpoint, agent: str, other: Endpoint, other_agent: str
    ) -> None:
        t, keys, stats = node.type, self.keys, self.stats
        if strict_node_match(node, other):
            stats[keys.node_correct[t]] += 1
            entry.matched = True
            if t in ACTIONS and agent and _texts_match(agent, other_agent):
                stats[keys.agent_correct[t]] += 1
        if t in _BLEU_NODES:
            same_type = other.type is t
            if not same_type:
                score = 0.0
            elif t in _START_END:
                score = 1.0
            else:
                score = bleu1(node.text, other.text)  # this pass's text is the hypothesis
            stats[keys.bleu_node_sum[t]] += score
            entry.best_bleu = _raise_best(stats, keys.once_node_sum[t], entry.best_bleu, score)
            if same_type and t in ACTIONS and agent:
                agent_score = bleu1(agent, other_agent)
                stats[keys.bleu_agent_sum[t]] += agent_score
                entry.best_agent = _raise_best(
                    stats, keys.once_agent_sum[t], entry.best_agent, agent_score
                )

    def _edge(self, edge: Edge, other: Edge) -> None:
        flow = edge.type
        assert flow is not None
        keys, stats = self.keys, self.stats
        strict_type = _FLOW_NAMES[flow]
        soft_type = "ConditionFlow" if flow is _SEQUENCE and edge.condition else strict_type
        stats[keys.edge_total[strict_type]] += 1
        stats[keys.soft_total[soft_type]] += 1
        head, tail, other_head, other_tail = edge.head, edge.tail, other.head, other.tail
        if (
            head is None
            or tail is None
            or not other.parsed
            or other_head is None
            or other_tail is None
        ):
            return  # not both complete
        if (
            flow is other.type
            and strict_node_match(head, other_head)
            and strict_node_match(tail, other_tail)
            and _texts_match(edge.condition, other.condition)
        ):
            stats[keys.edge_correct[strict_type]] += 1
        if (
            head.type is not other_head.type
            or tail.type is not other_tail.type
            or flow is not other.type
        ):
            return
        if _soft_end_score(head, other_head) >= 0.5 and _soft_end_score(tail, other_tail) >= 0.5:
            if soft_type == "ConditionFlow":
                stats[keys.condition_sum] += bleu1(edge.condition, other.condition)
            else:
                stats[keys.soft_correct[soft_type]] += 1


def _raise_best(stats: dict[str, float], key: str, best: float | None, score: float) -> float:
    """The bounded variant's sum holds each node's best score: its first score, then only what a better one adds."""
    if best is None:
        stats[key] += (
            score  # as the official sum on a node's first comparison: bit-equal where nothing is compared twice
        )
        return score
    if score > best:
        stats[key] += score - best
        return score
    return best


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
