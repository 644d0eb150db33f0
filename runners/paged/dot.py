"""Graphviz DOT text for PAGED graphs (no Graphviz binary needed: ``st.graphviz_chart`` takes the string).

Shapes: Start a circle, End a double circle, activities rounded boxes, gateways diamonds labelled
XOR / OR / AND (their text as an outside label), data constraints notes, action constraints dashed
notes; each actor is a cluster; sequence flows are solid arrows labelled with their condition,
constraint flows dashed. :func:`draw_pair` colours what a prediction got right against the gold, by one of
two matchings (:class:`Matching`): ``soft``, the one the headline scores use (BLEU-1 of texts, as the
official walk's ``bleu_node`` and ``bleu_edge`` tallies in :mod:`procbench.runners.paged.walk`), and ``strict``, the
official strict counts (the same words).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from enum import Enum

from procbench.runners.paged.gold import GoldDocument
from procbench.runners.paged.model import Flow, FlowType, Graph, Node, NodeType
from procbench.runners.paged.parse import Endpoint, graph_of_gold_lines, parse_text
from procbench.runners.paged.tokens import bleu1, lexical_f1
from procbench.runners.paged.walk import node_strict

WRAP = 22
SOFT_AT = 0.5  # a soft match: BLEU-1 at least this (the threshold of the walk's soft flow ends, ``end_soft``)


class Matching(str, Enum):
    """How an element of one graph is found in the other."""

    SOFT = "soft"  # as the headline scores: texts by BLEU-1 >= SOFT_AT (gateways by their flows; counts by kind)
    STRICT = (
        "strict"  # as the official strict counts: the same words (Start, End and OR by kind alone)
    )


class Status(str, Enum):
    MATCHED = "matched"
    MISSED = "missed"  # in the gold, not in the prediction
    SPURIOUS = "spurious"  # in the prediction, not in the gold


COLOURS = {Status.MATCHED: "#2e7d32", Status.MISSED: "#c62828", Status.SPURIOUS: "#ef6c00"}

_SHAPES = {
    NodeType.START: 'shape=circle, width=0.5, fixedsize=false, style=filled, fillcolor="#e8f5e9"',
    NodeType.END: 'shape=doublecircle, width=0.5, style=filled, fillcolor="#ffebee"',
    NodeType.ACTIVITY: 'shape=box, style="rounded,filled", fillcolor="#e3f2fd"',
    NodeType.XOR: 'shape=diamond, style=filled, fillcolor="#fff8e1"',
    NodeType.OR: 'shape=diamond, style=filled, fillcolor="#fff8e1"',
    NodeType.AND: 'shape=diamond, style=filled, fillcolor="#fff8e1"',
    NodeType.DATA: 'shape=note, style=filled, fillcolor="#f5f5f5"',
    NodeType.TEXT: 'shape=note, style="dashed,filled", fillcolor="#fafafa"',
}


def quote(text: str) -> str:
    """A DOT double-quoted string (backslashes and quotes escaped; newlines become centred breaks)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{escaped}"'


def _wrapped(text: str) -> str:
    return "\n".join(textwrap.wrap(text, WRAP)) or text


def _node_attributes(node: Node, status: Status | None, note: str = "") -> str:
    parts = [_SHAPES[node.type]]
    if node.type.is_gateway:
        parts.append(f"label={quote(node.type.value)}")
        if node.text:
            parts.append(f"xlabel={quote(_wrapped(node.text))}")
    elif node.type in (NodeType.START, NodeType.END):
        default = "start" if node.type is NodeType.START else "end"
        parts.append(f"label={quote(_wrapped(node.text) if node.text else default)}")
    else:
        parts.append(f"label={quote(_wrapped(node.text))}")
    if status is not None:
        parts.append(
            f'color="{COLOURS[status]}", penwidth=2.5, tooltip={quote(status.value + (f" ({note})" if note else ""))}'
        )
    return ", ".join(parts)


def _flow_attributes(flow: Flow, status: Status | None) -> str:
    parts = []
    if flow.type is FlowType.ASSOCIATION:
        parts.append("style=dashed, arrowhead=open")
    if flow.condition:
        parts.append(f"label={quote(_wrapped(flow.condition))}")
    if status is not None:
        parts.append(f'color="{COLOURS[status]}", fontcolor="{COLOURS[status]}", penwidth=2')
    return ", ".join(parts)


def to_dot(
    graph: Graph,
    *,
    node_status: Mapping[str, Status] | None = None,
    flow_status: Mapping[int, Status] | None = None,
    title: str = "",
    node_notes: Mapping[str, str] | None = None,
) -> str:
    """The graph as a DOT digraph. ``node_status`` (by node id) / ``flow_status`` (by flow index) colour elements;
    ``node_notes`` (by node id) add to a coloured node's tooltip (e.g. its BLEU-1)."""
    node_status = node_status or {}
    flow_status = flow_status or {}
    node_notes = node_notes or {}
    dot_id = {node.id: f"n{i}" for i, node in enumerate(graph.nodes)}
    lines = [
        "digraph paged {",
        "  rankdir=LR;",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    if title:
        lines.append(f"  label={quote(title)}; labelloc=t;")
    clusters: dict[str, list[Node]] = {}
    for node in graph.nodes:
        clusters.setdefault(node.actor, []).append(node)
    for index, (actor, members) in enumerate(clusters.items()):
        indent = "  "
        if actor:
            lines.append(f"  subgraph cluster_{index} {{")
            lines.append(f'    label={quote(actor)}; style="rounded"; color="#9e9e9e";')
            indent = "    "
        for node in members:
            lines.append(
                f"{indent}{dot_id[node.id]} [{_node_attributes(node, node_status.get(node.id), node_notes.get(node.id, ''))}];"
            )
        if actor:
            lines.append("  }")
    for index, flow in enumerate(graph.flows):
        attributes = _flow_attributes(flow, flow_status.get(index))
        lines.append(
            f"  {dot_id[flow.source]} -> {dot_id[flow.target]}"
            + (f" [{attributes}];" if attributes else ";")
        )
    lines.append("}")
    return "\n".join(lines)


def _endpoint(node: Node) -> Endpoint:
    return Endpoint(node.type, node.text, node.id)


def _same_element(a: Node, b: Node) -> bool:
    """The official strict node rule (type, then token-set equality; Start/End/OR by type alone)."""
    same = node_strict()
    ends = [{"kind": end.type.value, "text": end.text} for end in (_endpoint(a), _endpoint(b))]
    return same.score(same.prepare(ends[0]), same.prepare(ends[1])) == 1.0


def _same_condition(a: str, b: str) -> bool:
    return (not a and not b) or (bool(a) and bool(b) and lexical_f1(a, b) >= 1.0)


def soft_similarity(a: Node, b: Node) -> float:
    """How softly ``a`` (the graph being walked: BLEU-1's hypothesis) matches ``b``, as the score's soft tallies compare
    nodes: 0 for another kind; start, end and AND nodes 1 by kind; XOR and OR gateways BLEU-1 of their texts
    (1 when both are empty); other nodes BLEU-1 of their texts (``procbench.runners.paged.walk``: ``node_bleu``, ``end_soft``)."""
    if a.type is not b.type:
        return 0.0
    if a.type in (NodeType.START, NodeType.END, NodeType.AND):
        return 1.0
    if a.type in (NodeType.XOR, NodeType.OR) and not a.text and not b.text:
        return 1.0
    return bleu1(a.text, b.text)


def _soft_end(a: Node, b: Node) -> bool:
    return soft_similarity(a, b) >= SOFT_AT


Statuses = tuple[
    dict[str, Status], dict[int, Status], dict[str, str]
]  # by node id, by flow index, notes by node id


def _statuses(
    graph: Graph, other: Graph, unmatched: Status, matching: Matching = Matching.STRICT
) -> Statuses:
    """Each node's and flow's status in ``graph`` against ``other``, and (soft) each text node's best BLEU-1 as a note."""
    nodes, other_nodes = graph.by_id(), other.by_id()
    soft = matching is Matching.SOFT
    same_end = _soft_end if soft else _same_element
    flow_status: dict[int, Status] = {}
    for index, flow in enumerate(graph.flows):
        found = any(
            o.type is flow.type
            and (
                soft or _same_condition(flow.condition, o.condition)
            )  # the soft flow counts look at the ends only
            and same_end(nodes[flow.source], other_nodes[o.source])
            and same_end(nodes[flow.target], other_nodes[o.target])
            for o in other.flows
        )
        flow_status[index] = Status.MATCHED if found else unmatched
    node_status: dict[str, Status] = {}
    notes: dict[str, str] = {}
    for node in graph.nodes:
        if node.type.is_gateway:
            # A gateway's text rarely identifies it: it counts as found when one of its flows is.
            found = any(
                flow_status[i] is Status.MATCHED
                for i, f in enumerate(graph.flows)
                if node.id in (f.source, f.target)
            )
        elif soft:
            best = max((soft_similarity(node, o) for o in other.nodes), default=0.0)
            found = best >= SOFT_AT
            if node.type not in (NodeType.START, NodeType.END):
                notes[node.id] = f"best BLEU-1 {best:.2f}"
        else:
            found = any(_same_element(node, o) for o in other.nodes)
        node_status[node.id] = Status.MATCHED if found else unmatched
    return node_status, flow_status, notes


def draw_pair(
    gold: Graph, predicted: Graph, matching: Matching = Matching.STRICT
) -> tuple[str, str]:
    """DOT for the gold and the predicted graph: matched elements green, missed (gold) red, spurious (prediction) orange."""
    gold_nodes, gold_flows, gold_notes = _statuses(gold, predicted, Status.MISSED, matching)
    pred_nodes, pred_flows, pred_notes = _statuses(predicted, gold, Status.SPURIOUS, matching)
    return (
        to_dot(
            gold,
            node_status=gold_nodes,
            flow_status=gold_flows,
            title="gold",
            node_notes=gold_notes,
        ),
        to_dot(
            predicted,
            node_status=pred_nodes,
            flow_status=pred_flows,
            title="prediction",
            node_notes=pred_notes,
        ),
    )


def graphs_of(
    document: GoldDocument, output: str, *, prompt_spellings: bool = False
) -> tuple[Graph, Graph]:
    """The gold graph (as its linearisation shows it) and the graph a model output text gives."""
    return graph_of_gold_lines(document.lines), parse_text(
        output, prompt_spellings=prompt_spellings
    ).graph()


def outcomes(document: GoldDocument, output: str, matching: Matching) -> dict[str, Status]:
    """Each gold node's status (by node id) against ``output`` under ``matching``: what the gold graph's colours show."""
    gold, predicted = graphs_of(document, output)
    return _statuses(gold, predicted, Status.MISSED, matching)[0]


def draw_document(
    document: GoldDocument,
    output: str,
    *,
    prompt_spellings: bool = False,
    matching: Matching = Matching.STRICT,
) -> tuple[str, str]:
    """:func:`draw_pair` for a gold document (as its linearisation shows it) and a model output text."""
    gold, predicted = graphs_of(document, output, prompt_spellings=prompt_spellings)
    return draw_pair(gold, predicted, matching)
