"""The typed procedural-graph model shared by the gold reader, the text parser, the scorer and the drawing.

A :class:`Graph` is a set of typed nodes (actions, gateways, data/action constraints) joined by
sequence flows (optionally with a condition) and constraint flows (associations). PAGED's code
names are kept as the enum values (``DataObject`` is the paper's *data constraint*,
``TextAnnotation`` its *action constraint*, ``Association`` its *constraint flow*).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class NodeType(str, Enum):
    START = "StartNode"
    END = "EndNode"
    ACTIVITY = "Activity"
    XOR = "XOR"
    OR = "OR"
    AND = "AND"
    DATA = "DataObject"
    TEXT = "TextAnnotation"

    @property
    def is_gateway(self) -> bool:
        return self in GATEWAYS

    @property
    def is_artifact(self) -> bool:
        return self in ARTIFACTS

    @property
    def is_action(self) -> bool:
        """Activity, Start and End: the nodes that carry an actor (the paper's *action* group)."""
        return self in ACTIONS


GATEWAYS = frozenset({NodeType.XOR, NodeType.OR, NodeType.AND})
ARTIFACTS = frozenset({NodeType.DATA, NodeType.TEXT})
ACTIONS = frozenset({NodeType.ACTIVITY, NodeType.START, NodeType.END})


class FlowType(str, Enum):
    SEQUENCE = "SequenceFlow"
    ASSOCIATION = "Association"


@dataclass(frozen=True)
class Node:
    """One graph node. ``actor`` is the lane (``agent`` upstream), "" when none."""

    id: str
    type: NodeType
    text: str
    actor: str = ""


@dataclass(frozen=True)
class Flow:
    """A directed flow between two node ids; ``condition`` is "" when the flow is unconditional."""

    source: str
    target: str
    type: FlowType = FlowType.SEQUENCE
    condition: str = ""

    @property
    def is_condition_flow(self) -> bool:
        """The soft metrics' ConditionFlow: a sequence flow that carries a condition."""
        return self.type is FlowType.SEQUENCE and bool(self.condition)


@dataclass(frozen=True)
class Graph:
    """Nodes (unique ids, in source order) and flows (in source order)."""

    nodes: tuple[Node, ...]
    flows: tuple[Flow, ...]

    def node(self, node_id: str) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def by_id(self) -> dict[str, Node]:
        return {node.id: node for node in self.nodes}

    def actors(self) -> tuple[str, ...]:
        """Distinct non-empty actors in order of first appearance."""
        return tuple(dict.fromkeys(node.actor for node in self.nodes if node.actor))

    def node_types(self) -> frozenset[NodeType]:
        return frozenset(node.type for node in self.nodes)
