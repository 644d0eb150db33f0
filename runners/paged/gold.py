"""Reading PAGED gold records (``dev.json``/``test.json``) into typed graphs.

A record holds ``file_index``, ``paragraph``, ``step_nodes`` (Start/End/Activity/XOR/OR/AND with
``resourceId``, ``NodeText``, ``agent``), ``data_nodes`` (DataObject), ``text_nodes``
(TextAnnotation), ``SequenceFlow`` (``src``, ``tgt``, ``condition``), ``Association`` (``src``,
``tgt``) and an always-empty ``MessageFlow`` (ignored, as upstream ignores it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from procbench.runners.paged.linearise import GoldLine, linearise, render_text
from procbench.runners.paged.model import Flow, FlowType, Graph, Node, NodeType

STEP_TYPES = {
    t.value: t
    for t in (
        NodeType.START,
        NodeType.END,
        NodeType.ACTIVITY,
        NodeType.XOR,
        NodeType.OR,
        NodeType.AND,
    )
}


@dataclass(frozen=True)
class GoldDocument:
    """One gold document: its text, its graph and the official linearisation of the graph.

    The fields are the gold record as read (``record``: the record as JSON text with sorted keys),
    and they are what the task fingerprint hashes. ``graph`` and ``lines`` are derived from the
    record once (:func:`document_from_record` computes them while reading, so that a record
    upstream aborts on is rejected at read time). Hashing the derived views as well made
    fingerprinting the PAGED gold slower than scoring it: every line repeats both of its nodes.
    """

    file_index: int
    paragraph: str
    record: str

    @cached_property
    def graph(self) -> Graph:
        return graph_from_record(json.loads(self.record))

    @cached_property
    def lines(self) -> tuple[GoldLine, ...]:
        return linearise(self.graph)

    @property
    def item_id(self) -> str:
        return str(self.file_index)

    @property
    def text(self) -> str:
        """The gold graph in the model-output text format (``For <actor>:`` blocks of ``A -> B`` lines)."""
        return render_text(self.lines)


def graph_from_record(record: Mapping[str, Any]) -> Graph:
    """The gold record as a :class:`Graph`.

    Nodes keep file order (step nodes, then data nodes, then text nodes); artifacts listed twice
    with the same ``resourceId`` (dev has 211 such repeats, all identical) are kept once. Flows are
    the sequence flows in file order followed by the associations in file order.
    """
    nodes: dict[str, Node] = {}
    for key, fixed_type in (
        ("step_nodes", None),
        ("data_nodes", NodeType.DATA),
        ("text_nodes", NodeType.TEXT),
    ):
        for raw in record.get(key, []):
            node_type = fixed_type or STEP_TYPES.get(raw.get("type", ""))
            if node_type is None:
                raise ValueError(
                    f"record {record.get('file_index')}: unknown node type {raw.get('type')!r}"
                )
            node_id = str(raw["resourceId"])
            nodes.setdefault(
                node_id, Node(node_id, node_type, raw.get("NodeText") or "", raw.get("agent") or "")
            )
    flows = [
        Flow(str(f["src"]), str(f["tgt"]), FlowType.SEQUENCE, f.get("condition") or "")
        for f in record.get("SequenceFlow", [])
    ]
    flows += [
        Flow(str(a["src"]), str(a["tgt"]), FlowType.ASSOCIATION)
        for a in record.get("Association", [])
    ]
    for flow in flows:
        for end in (flow.source, flow.target):
            if end not in nodes:
                raise ValueError(
                    f"record {record.get('file_index')}: {flow.type.value} refers to unknown node {end!r}"
                )
    return Graph(tuple(nodes.values()), tuple(flows))


def document_from_record(record: Mapping[str, Any]) -> GoldDocument:
    """The document of one gold record, its graph and lines computed now (ValueError where upstream aborts)."""
    graph = graph_from_record(record)
    lines = linearise(graph)
    document = GoldDocument(
        int(record["file_index"]),
        str(record.get("paragraph", "")),
        json.dumps(record, sort_keys=True),
    )
    derived = vars(
        document
    )  # where cached_property keeps its values (a frozen dataclass still has a __dict__)
    derived["graph"], derived["lines"] = graph, lines
    return document


def load_documents(path: Path) -> list[GoldDocument]:
    """Every record of a gold JSON file, in file order; FileNotFoundError names the missing path."""
    if not path.is_file():
        raise FileNotFoundError(f"PAGED gold file not found: {path}")
    records: Sequence[Mapping[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [document_from_record(record) for record in records]
