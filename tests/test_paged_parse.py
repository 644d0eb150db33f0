"""The official text parser: the worked examples of docs/metrics.md §5.2 and robustness properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.paged.model import FlowType, NodeType
from procbench.runners.paged.parse import header_agent, parse_edge, parse_text, type_endpoint


def test_headers_and_spans() -> None:
    text = "For X -> Y\nfor Clerk\nA -> B\nFor Office :\nC -> D\nFOR Nobody:\nE -> F\nForward the form\nG -> H"
    spans = parse_text(text).spans
    assert [(s.line, s.agent) for s in spans] == [
        ("For X -> Y", ""),  # an arrow line is a span even when it starts with For
        ("A -> B", "Clerk"),  # 'for X' without a colon
        ("C -> D", "Office"),  # 'For X :'
        ("E -> F", "Office"),  # 'FOR X:' is ignored: the actor carries over
        ("G -> H", "Forward the form"),  # a leading For is removed only before whitespace
    ]
    assert header_agent("For Office :") == "Office"


def test_greedy_condition() -> None:
    edge = parse_edge("A -> (c) X (note) now")
    assert edge.condition == "c) X (note"
    assert edge.tail is not None and (edge.tail.type, edge.tail.text) == (NodeType.ACTIVITY, "now")
    bare = parse_edge("XOR1 -> (c)")  # nothing after the ')': no condition
    assert bare.condition == ""
    assert bare.tail is not None and (bare.tail.type, bare.tail.text) == (NodeType.ACTIVITY, "(c)")


def test_chains_and_arrows_in_text_do_not_parse() -> None:
    assert not parse_edge("A -> B -> C").parsed
    parsed = parse_text("Start -> A -> B\nA -> B")
    assert [s.edge.parsed for s in parsed.spans] == [False, True]
    assert [(i.line_no, i.kind) for i in parsed.issues] == [(1, "unparseable")]


def test_typing_by_prefix() -> None:
    cases = {
        "Starting the engine": NodeType.START,
        "end the call": NodeType.END,
        "End of Month": NodeType.END,
        "ORDER the goods": NodeType.OR,
        "xor1": NodeType.XOR,
        "xor": NodeType.ACTIVITY,
        "AND": NodeType.AND,
        "ANDROID": NodeType.AND,
        "DataObject(invoice)": NodeType.DATA,
        "TextAnnotation(two days)": NodeType.TEXT,
        "DataConstraint(invoice)": NodeType.ACTIVITY,
    }
    for part, expected in cases.items():
        endpoint = type_endpoint(part)
        assert endpoint is not None and endpoint.type is expected, part
    assert type_endpoint("DataConstraint(invoice)").text == "DataConstraint(invoice)"  # type: ignore[union-attr]
    assert (
        type_endpoint("DataObject()") is None
        and type_endpoint("DataObject") is None
        and type_endpoint("") is None
    )


def test_gateway_and_start_texts() -> None:
    assert type_endpoint("XOR3 (stock ok?)").text == "stock ok?"  # type: ignore[union-attr]
    assert type_endpoint("Start(order (web) received)").text == "order (web) received"  # type: ignore[union-attr]
    assert type_endpoint("Start").text == ""  # type: ignore[union-attr]


def test_constraint_lines_are_associations_and_prompt_spellings_are_not() -> None:
    assert parse_edge("ship goods -> DataObject(invoice)").type is FlowType.ASSOCIATION
    assert parse_edge("ship goods -> DataConstraint(invoice)").type is FlowType.SEQUENCE
    variant = parse_text(
        "ship goods -> DataConstraint(invoice)\nship goods -> ActionConstraint(be quick)",
        prompt_spellings=True,
    )
    assert [(s.edge.tail.type, s.edge.type) for s in variant.spans] == [  # type: ignore[union-attr]
        (NodeType.DATA, FlowType.ASSOCIATION),
        (NodeType.TEXT, FlowType.ASSOCIATION),
    ]
    official = parse_text("ship goods -> DataConstraint(invoice)")
    assert [i.kind for i in official.issues] == ["prompt_spelling"]


def test_text_graph_merges_a_label_under_one_actor() -> None:
    graph = parse_text(
        "For Clerk:\nStart -> check order\ncheck order -> XOR1\nXOR1 -> (ok) ship\nXOR1 -> (not ok) End"
    ).graph()
    assert [(n.type, n.text, n.actor) for n in graph.nodes] == [
        (NodeType.START, "", "Clerk"),
        (NodeType.ACTIVITY, "check order", "Clerk"),
        (NodeType.XOR, "", "Clerk"),
        (NodeType.ACTIVITY, "ship", "Clerk"),
        (NodeType.END, "", "Clerk"),
    ]
    assert [f.condition for f in graph.flows] == ["", "", "ok", "not ok"]


@given(st.text())
def test_parser_never_raises_and_reports_real_lines(text: str) -> None:
    parsed = parse_text(text)
    lines = text.split("\n")
    for span in parsed.spans:
        assert "->" in lines[span.line_no - 1]
    for issue in parsed.issues:
        assert 1 <= issue.line_no <= len(lines)
        assert issue.line == lines[issue.line_no - 1].strip() or issue.kind == "prompt_spelling"
    parsed.graph()


@given(
    st.lists(
        st.sampled_from(
            [
                "A -> B",
                "A -> B -> C",
                "x",
                "",
                "For Clerk:",
                "A ->",
                "-> B",
                "X -> (c) Y",
                "DataObject() -> A",
            ]
        ),
        max_size=12,
    )
)
def test_issue_line_numbers_match_the_odd_lines(lines: list[str]) -> None:
    parsed = parse_text("\n".join(lines))
    unparseable = {i + 1 for i, line in enumerate(lines) if line.count("->") > 1}
    ignored = {i + 1 for i, line in enumerate(lines) if line == "x"}
    missing = {
        i + 1 for i, line in enumerate(lines) if line in ("A ->", "-> B", "DataObject() -> A")
    }
    assert {i.line_no for i in parsed.issues if i.kind == "unparseable"} == unparseable
    assert {i.line_no for i in parsed.issues if i.kind == "ignored"} == ignored
    assert {i.line_no for i in parsed.issues if i.kind == "missing_node"} == missing
    assert parsed.unparsed_spans == len(unparseable)
