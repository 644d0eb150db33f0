"""Hypothesis strategies for PAGED gold records (imported by the other PAGED tests).

Generated texts are "well-behaved": words that no parser rule treats specially (no Start/End/
gateway prefixes, no parentheses or arrows, no token BLEU drops), so the text format is lossless
for them. Flows never leave an End node nor enter a Start node, as in the real data.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.paged.gold import document_from_record, graph_from_record
from procbench.runners.paged.model import NodeType

WORDS = (
    "check",
    "order",
    "ship",
    "goods",
    "invoice",
    "payment",
    "review",
    "approve",
    "send",
    "receive",
    "stock",
    "report",
    "archive",
    "notify",
    "budget",
    "clerk",
)
ACTORS = ("sales office", "warehouse", "customer")

phrase = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


@st.composite
def gold_records(draw: st.DrawFn, *, with_or: bool = True) -> dict[str, Any]:
    """A gold record in the upstream JSON format."""
    counter = iter(range(10_000))

    def node(node_type: str, text: str, agent: str) -> dict[str, str]:
        return {
            "resourceId": f"sid-{next(counter)}",
            "NodeText": text,
            "agent": agent,
            "type": node_type,
        }

    agents = draw(st.lists(st.sampled_from(("",) + ACTORS), min_size=1, max_size=2))
    starts = [
        node("StartNode", draw(st.sampled_from(("", "request received"))), agent)
        for agent in agents
    ]
    gateway_types = ["XOR", "AND"] + (["OR"] if with_or else [])
    middles = [
        node(
            kind,
            draw(phrase) if kind == "Activity" or draw(st.booleans()) else "",
            draw(st.sampled_from(agents)),
        )
        for kind in draw(
            st.lists(st.sampled_from(["Activity"] * 3 + gateway_types), min_size=1, max_size=6)
        )
    ]
    ends = [
        node("EndNode", draw(st.sampled_from(("", "order closed"))), draw(st.sampled_from(agents)))
        for _ in range(draw(st.integers(1, 2)))
    ]
    data = [
        {**node("DataObject", draw(phrase), ""), "type": "DataObject"}
        for _ in range(draw(st.integers(0, 2)))
    ]
    notes = [
        {**node("TextAnnotation", draw(phrase), ""), "type": "TextAnnotation"}
        for _ in range(draw(st.integers(0, 1)))
    ]

    sources = starts + middles
    targets = middles + ends
    flows = []
    for source in starts:
        flows.append((source, draw(st.sampled_from(targets))))
    flows += draw(
        st.lists(st.tuples(st.sampled_from(sources), st.sampled_from(targets)), max_size=8)
    )
    sequence = [
        {
            "src": s["resourceId"],
            "tgt": t["resourceId"],
            "condition": draw(phrase) if s["type"] in ("XOR", "OR") and draw(st.booleans()) else "",
        }
        for s, t in flows
    ]
    activities = [m for m in middles if m["type"] == "Activity"]
    associations = []
    if activities:
        for artifact in data:
            step = draw(st.sampled_from(activities))
            pair = (step, artifact) if draw(st.booleans()) else (artifact, step)
            associations.append({"src": pair[0]["resourceId"], "tgt": pair[1]["resourceId"]})
        for note in notes:
            associations.append(
                {"src": draw(st.sampled_from(activities))["resourceId"], "tgt": note["resourceId"]}
            )
    return {
        "file_index": draw(st.integers(1, 2**31)),
        "paragraph": "",
        "step_nodes": starts + middles + ends,
        "data_nodes": data,
        "text_nodes": notes,
        "SequenceFlow": sequence,
        "MessageFlow": [],
        "Association": associations,
        "or_node_num": sum(1 for m in middles if m["type"] == "OR"),
    }


gold_documents = gold_records().map(document_from_record)


def text_format_is_lossless(record: dict[str, Any]) -> bool:
    """The text format loses information in two places only (both official behaviour):

    * a block without a header inherits the previous header's actor;
    * every copy of ``(condition)`` is deleted from a line, so a gateway whose text equals the
      condition of one of its outgoing flows loses its text on that line.
    """
    lines = document_from_record(record).lines
    agents = [line.agent for line in lines]
    if not all(agent or not any(agents[:i]) for i, agent in enumerate(agents)):
        return False
    return all(not line.condition or line.text.count(f"({line.condition})") == 1 for line in lines)


@given(gold_records())
def test_generated_records_are_valid_gold(record: dict[str, Any]) -> None:
    """A smoke check of the generator: every record reads as a graph with a Start node."""
    graph = graph_from_record(record)
    assert {node.type for node in graph.nodes} <= set(NodeType)
    assert any(node.type is NodeType.START for node in graph.nodes)
