"""Graphviz DOT drawings: well-formed (checked by a small dependency-free reader) and coloured by matching."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.paged.dot import COLOURS, Status, draw_document, draw_pair, to_dot
from procbench.runners.paged.model import Flow, FlowType, Graph, Node, NodeType
from procbench.runners.paged.parse import graph_of_gold_lines
from procbench.runners.paged.reader import read_graphs

_NODE = re.compile(r"^\s*(n\d+) \[")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)[ ;]")


def _unquoted(dot: str) -> str:
    """The DOT text with every double-quoted string emptied; fails on an unterminated string."""
    out, i, inside = [], 0, False
    while i < len(dot):
        c = dot[i]
        if inside:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                inside = False
                out.append('"')
            elif c == "\n":
                raise AssertionError("newline inside a quoted string")
        else:
            out.append(c)
            if c == '"':
                inside = True
        i += 1
    assert not inside, "unterminated string"
    return "".join(out)


def assert_well_formed(dot: str) -> None:
    bare = _unquoted(dot)
    assert bare.startswith("digraph paged {") and bare.rstrip().endswith("}")
    depth = 0
    for c in bare:
        depth += {"{": 1, "}": -1}.get(c, 0)
        assert depth >= 0
    assert depth == 0
    declared: list[str] = []
    for line in bare.splitlines()[1:-1]:
        assert line.rstrip().endswith((";", "{", "}")), line
        node, edge = _NODE.match(line), _EDGE.match(line)
        if node and not edge:
            declared.append(node.group(1))
    assert len(declared) == len(set(declared))
    for line in bare.splitlines():
        edge = _EDGE.match(line)
        if edge:
            assert edge.group(1) in declared and edge.group(2) in declared, line


def test_samples_draw_with_every_shape() -> None:
    gold = read_graphs(SAMPLE_DATA_ROOT, "dev")
    drawings = [to_dot(document.graph) for document in gold.items.values()]
    for dot in drawings:
        assert_well_formed(dot)
    every = "\n".join(drawings)
    for shape in ("circle", "doublecircle", "diamond", "note", "box"):
        assert f"shape={shape}" in every
    assert "subgraph cluster_" in every and "style=dashed" in every


def test_real_documents_draw_against_themselves_all_matched(data_root: Path) -> None:
    gold = read_graphs(data_root, "dev")
    for document in list(gold.items.values())[:40]:
        gold_dot, predicted_dot = draw_document(document, document.text)
        assert_well_formed(gold_dot)
        assert_well_formed(predicted_dot)
        for colour in (COLOURS[Status.MISSED], COLOURS[Status.SPURIOUS]):
            assert colour not in gold_dot + predicted_dot


def test_empty_prediction_marks_all_gold_missed() -> None:
    document = next(iter(read_graphs(SAMPLE_DATA_ROOT, "dev").items.values()))
    gold_dot, predicted_dot = draw_document(document, "")
    assert COLOURS[Status.MATCHED] not in gold_dot and COLOURS[Status.MISSED] in gold_dot
    assert_well_formed(predicted_dot)


def test_a_wrong_gateway_is_spurious_and_the_right_one_missed() -> None:
    document = read_graphs(SAMPLE_DATA_ROOT, "dev").items["1006"]
    gold = graph_of_gold_lines(document.lines)
    gold_dot, predicted_dot = draw_document(
        document,
        document.text.replace("XOR", "AND")
        .replace("(soil is dry) ", "")
        .replace("(soil is wet) ", ""),
    )
    assert COLOURS[Status.MISSED] in gold_dot and COLOURS[Status.SPURIOUS] in predicted_dot
    assert draw_pair(gold, gold)[0].count(COLOURS[Status.MATCHED]) > 0


nasty = st.text(alphabet=st.sampled_from('ab "\\{}[];->\n\r\t=<>|#'), max_size=12)


@given(
    st.lists(st.tuples(st.sampled_from(list(NodeType)), nasty, nasty), min_size=1, max_size=6),
    st.data(),
)
def test_any_text_gives_well_formed_dot(
    specs: list[tuple[NodeType, str, str]], data: st.DataObject
) -> None:
    nodes = tuple(Node(f"id{i}", t, text, actor) for i, (t, text, actor) in enumerate(specs))
    indices = st.integers(0, len(nodes) - 1)
    flows = tuple(
        Flow(nodes[a].id, nodes[b].id, kind, condition)
        for a, b, kind, condition in data.draw(
            st.lists(
                st.tuples(indices, indices, st.sampled_from(list(FlowType)), nasty), max_size=6
            )
        )
    )
    graph = Graph(nodes, flows)
    assert_well_formed(to_dot(graph, title='t"i\\tle'))
    for dot in draw_pair(graph, Graph((), ())):
        assert_well_formed(dot)
