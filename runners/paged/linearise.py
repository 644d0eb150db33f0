"""The official gold linearisation: a gold graph as ``For <actor>:`` blocks of ``A -> B`` lines.

Reproduces upstream ``eva_trans2triples`` (docs/metrics.md §5.1): gateways are numbered per
type in node order; one block per Start node, a breadth-first walk (FIFO queue, its own visited
set) along sequence flows in file order, every line of the block carrying the Start node's actor.
Nodes no Start reaches are absent; a node reachable from several Starts is repeated; duplicate
lines are kept.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from procbench.runners.paged.model import ARTIFACTS, Flow, FlowType, Graph, Node, NodeType

# read once: members looked up on an Enum class are slow in a loop
_START, _END, _TEXT, _DATA = NodeType.START, NodeType.END, NodeType.TEXT, NodeType.DATA
_SEQUENCE, _ASSOCIATION = FlowType.SEQUENCE, FlowType.ASSOCIATION


@dataclass(frozen=True)
class GoldLine:
    """One linearised gold flow with the structure it came from (the scorer only uses ``text``)."""

    agent: str
    source: Node
    target: Node
    source_label: str
    target_label: str
    type: FlowType
    condition: str = ""
    block: int = 0  # which Start node's walk produced the line

    @property
    def text(self) -> str:
        if self.condition:
            return f"{self.source_label} -> ({self.condition}) {self.target_label}"
        return f"{self.source_label} -> {self.target_label}"


def gateway_numbers(graph: Graph) -> dict[str, int]:
    """Node id -> its 1-based number among the gateways of its type (XOR, OR, AND counted apart)."""
    counters: dict[NodeType, int] = {}
    numbers: dict[str, int] = {}
    for node in graph.nodes:
        if node.type.is_gateway:
            counters[node.type] = counters.get(node.type, 0) + 1
            numbers[node.id] = counters[node.type]
    return numbers


def node_label(node: Node, number: int | None = None) -> str:
    """How a node is written in the text format (an AND gateway's text is never shown)."""
    t, text = node.type, node.text
    if t is NodeType.START:
        return f"Start({text})" if text else "Start"
    if t is NodeType.END:
        return f"End({text})" if text else "End"
    if t in (NodeType.XOR, NodeType.OR):
        return f"{t.value}{number} ({text})" if text else f"{t.value}{number}"
    if t is NodeType.AND:
        return f"AND{number}"
    if t is NodeType.DATA:
        return f"DataObject({text})"
    if t is NodeType.TEXT:
        return f"TextAnnotation({text})"
    return text


def linearise(graph: Graph) -> tuple[GoldLine, ...]:
    """The gold lines, in the official order. Raises ValueError where upstream aborts."""
    nodes = graph.by_id()
    numbers = gateway_numbers(graph)
    labels = {node.id: node_label(node, numbers.get(node.id)) for node in graph.nodes}

    outgoing: dict[str, list[Flow]] = {}
    associations_from: dict[str, list[Flow]] = {}  # each list in file order, as upstream scans them
    associations_to: dict[str, list[Flow]] = {}
    for flow in graph.flows:
        if flow.type is _SEQUENCE:
            outgoing.setdefault(flow.source, []).append(flow)
        else:
            associations_from.setdefault(flow.source, []).append(flow)
            associations_to.setdefault(flow.target, []).append(flow)

    lines: list[GoldLine] = []
    current = (
        ""  # the label of the last dequeued non-End node (End nodes do not update it upstream)
    )
    starts = [node for node in graph.nodes if node.type is _START]
    for block, start in enumerate(starts):
        agent = start.actor
        queue: deque[str] = deque([start.id])
        visited = {start.id}
        while queue:
            node = nodes[queue.popleft()]
            if node.type is not _END:
                current = labels[node.id]
            for flow in outgoing.get(node.id, ()):
                target = nodes[flow.target]
                lines.append(
                    GoldLine(
                        agent,
                        node,
                        target,
                        current,
                        labels[target.id],
                        _SEQUENCE,
                        flow.condition,
                        block,
                    )
                )
                if target.id not in visited:
                    visited.add(target.id)
                    queue.append(target.id)
            for flow in associations_from.get(node.id, ()):
                target = nodes[flow.target]
                if target.type in ARTIFACTS:
                    lines.append(
                        GoldLine(
                            agent, node, target, current, labels[target.id], _ASSOCIATION, "", block
                        )
                    )
            for flow in associations_to.get(node.id, ()):
                source = nodes[flow.source]
                if source.type is _TEXT:
                    raise ValueError(
                        f"a TextAnnotation ({source.id}) is the source of an association: upstream aborts on this graph"
                    )
                if source.type is _DATA:
                    lines.append(
                        GoldLine(
                            agent, source, node, labels[source.id], current, _ASSOCIATION, "", block
                        )
                    )
    return tuple(lines)


def render_text(lines: Sequence[GoldLine]) -> str:
    """The lines as model-output text: one block per Start walk, ``For <actor>:`` when the actor is set."""
    blocks: list[list[str]] = []
    last_block: int | None = None
    for line in lines:
        if line.block != last_block:
            blocks.append([f"For {line.agent}:"] if line.agent else [])
            last_block = line.block
        blocks[-1].append(line.text)
    return "\n\n".join("\n".join(block) for block in blocks)
