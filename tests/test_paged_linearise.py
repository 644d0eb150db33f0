"""Gold records, the official linearisation and its parse back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given

from procbench.runners.paged.gold import document_from_record, graph_from_record
from procbench.runners.paged.linearise import gateway_numbers, linearise
from procbench.runners.paged.model import NodeType
from procbench.runners.paged.parse import graph_of_gold_lines, parse_text
from procbench.runners.paged.reader import gold_path, read_graphs
from tests.test_paged_strategies import text_format_is_lossless, gold_records


@given(gold_records())
def test_linearised_gold_parses_back_to_the_same_graph(record: dict[str, Any]) -> None:
    assume(text_format_is_lossless(record))
    document = document_from_record(record)
    assert parse_text(document.text).graph() == graph_of_gold_lines(document.lines)


@given(gold_records())
def test_every_gold_line_parses_to_its_flow(record: dict[str, Any]) -> None:
    assume(text_format_is_lossless(record))
    for line in document_from_record(record).lines:
        edge = parse_text(line.text).spans[0].edge
        assert edge.complete and edge.head is not None and edge.tail is not None
        assert (edge.head.type, edge.tail.type, edge.type, edge.condition) == (
            line.source.type,
            line.target.type,
            line.type,
            line.condition,
        )
        for parsed, node in ((edge.head, line.source), (edge.tail, line.target)):
            assert parsed.text == ("" if node.type is NodeType.AND else node.text)


@given(gold_records())
def test_gateways_are_numbered_per_type_in_node_order(record: dict[str, Any]) -> None:
    graph = graph_from_record(record)
    numbers = gateway_numbers(graph)
    for gateway_type in (NodeType.XOR, NodeType.OR, NodeType.AND):
        ids = [node.id for node in graph.nodes if node.type is gateway_type]
        assert [numbers[i] for i in ids] == list(range(1, len(ids) + 1))


@given(gold_records())
def test_every_line_of_a_walk_carries_the_start_actor(record: dict[str, Any]) -> None:
    graph = graph_from_record(record)
    starts = [node for node in graph.nodes if node.type is NodeType.START]
    for line in linearise(graph):
        assert line.agent == starts[line.block].actor


def test_header_less_block_inherits_the_previous_actor() -> None:
    record = {
        "file_index": 1,
        "step_nodes": [
            {"resourceId": "s1", "NodeText": "", "agent": "clerk", "type": "StartNode"},
            {"resourceId": "a", "NodeText": "check order", "agent": "clerk", "type": "Activity"},
            {"resourceId": "s2", "NodeText": "", "agent": "", "type": "StartNode"},
            {"resourceId": "b", "NodeText": "ship goods", "agent": "", "type": "Activity"},
        ],
        "SequenceFlow": [
            {"src": "s1", "tgt": "a", "condition": ""},
            {"src": "s2", "tgt": "b", "condition": ""},
        ],
    }
    document = document_from_record(record)
    assert [line.agent for line in document.lines] == ["clerk", ""]
    assert [span.agent for span in parse_text(document.text).spans] == ["clerk", "clerk"]


def test_a_condition_equal_to_the_gateway_text_deletes_both() -> None:
    edge = parse_text("XOR1 (check) -> (check) ship goods").spans[0].edge
    assert edge.condition == "check"
    assert edge.head is not None and (edge.head.raw, edge.head.text) == ("XOR1", "")


def test_text_annotation_as_source_is_rejected_like_upstream() -> None:
    record = {
        "file_index": 2,
        "step_nodes": [
            {"resourceId": "s", "NodeText": "", "agent": "", "type": "StartNode"},
            {"resourceId": "a", "NodeText": "check order", "agent": "", "type": "Activity"},
        ],
        "text_nodes": [
            {"resourceId": "t", "NodeText": "be quick", "agent": "", "type": "TextAnnotation"}
        ],
        "SequenceFlow": [{"src": "s", "tgt": "a", "condition": ""}],
        "Association": [{"src": "t", "tgt": "a"}],
    }
    with pytest.raises(ValueError, match="TextAnnotation"):
        document_from_record(record)


def test_real_gold_reads_with_unique_nodes_and_reachable_lines(data_root: Path) -> None:
    gold = read_graphs(data_root, "dev")
    for document in gold.items.values():
        ids = [node.id for node in document.graph.nodes]
        assert len(ids) == len(set(ids))
        assert all(
            line.source.id in document.graph.by_id() and line.target.id in document.graph.by_id()
            for line in document.lines
        )


def test_missing_and_unknown_splits(data_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown PAGED split"):
        read_graphs(data_root, "validation")
    with pytest.raises(FileNotFoundError, match="test.json"):
        read_graphs(tmp_path, "test")
    assert gold_path(data_root, "dev").is_file()
