"""Reading the textual graph format (model outputs, and the gold lines) exactly as the official parser does.

docs/metrics.md §5.2, quirks included:

* the text is split on ``\\n`` and each line stripped; a line containing ``->`` is a *span* under
  the current actor (tested first, so ``For X -> Y`` is a span); otherwise a line starting with
  ``For``/``for`` is a header (``For``/``for`` removed only when whitespace follows, then one trailing
  ``:``, then stripped, so ``Forward the form`` is an actor and ``FOR X:`` is ignored); every other
  line is ignored;
* the condition is the greedy ``(...)`` right after the first arrow that still has a character
  after its ``)``; every ``(condition)`` is then deleted from the line;
* the rest must split on ``->`` into exactly two parts, else the span does not parse (it still
  takes part in line alignment but counts nowhere);
* each stripped part is typed by prefix (``end the call`` is an End node, ``ORDER goods`` an OR
  gateway) and an edge touching a DataObject/TextAnnotation is an Association.

Nothing here raises on any input: odd lines are reported as :class:`LineIssue` values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from procbench.runners.paged.linearise import GoldLine
from procbench.runners.paged.model import Flow, FlowType, Graph, Node, NodeType

ARROW = "->"
_CONDITION = re.compile(r"->\s*\((.+)\).+")
_WORD = re.compile(r"\w")
_HEADER = re.compile(r"(?:For|for)\s")
_GREEDY_PARENS = re.compile(r"\((.*)\)")
_FIRST_PARENS = re.compile(r"\((.*?)\)")
_GATEWAY_NUMBER = {
    NodeType.XOR: re.compile(r"XOR\d+"),
    NodeType.OR: re.compile(r"OR\d+"),
    NodeType.AND: re.compile(r"AND\d+"),
}
_LOWER_GATEWAY = {
    NodeType.XOR: re.compile(r"xor\d"),
    NodeType.OR: re.compile(r"or\d"),
    NodeType.AND: re.compile(r"and\d"),
}
_PROMPT_SPELLINGS = (("DataConstraint", "DataObject"), ("ActionConstraint", "TextAnnotation"))
# the gateway rules in the order they are tried: (type, prefix, lower-case spelling, its numbering)
_GATEWAY_RULES = tuple(
    (g, g.value, _LOWER_GATEWAY[g], _GATEWAY_NUMBER[g])
    for g in (NodeType.XOR, NodeType.OR, NodeType.AND)
)
_GATEWAY_INITIALS = frozenset(
    "XOAxoa"
)  # the first letter of every prefix and lower-case spelling above


@dataclass(frozen=True)
class Endpoint:
    """A typed end of a span: ``raw`` is the stripped part of the line it was read from."""

    type: NodeType
    text: str
    raw: str


@dataclass(frozen=True)
class Edge:
    """What the official parser makes of one line's text (independent of the actor)."""

    parsed: bool
    head: Endpoint | None = None
    tail: Endpoint | None = None
    condition: str = ""
    type: FlowType | None = None
    source_span: str = ""  # the head part: a gateway's identity (docs/metrics.md §5.2, item 7)
    arrows: int = 0

    @property
    def complete(self) -> bool:
        return self.parsed and self.head is not None and self.tail is not None

    @property
    def soft_type(self) -> str:
        """SequenceFlow, Association or ConditionFlow (a sequence flow with a condition)."""
        assert self.type is not None
        if self.type is FlowType.SEQUENCE and self.condition:
            return "ConditionFlow"
        return self.type.value


@dataclass(frozen=True)
class Span:
    """One line that contains ``->``, with the actor in force and its 1-based line number in the item."""

    line: str
    agent: str
    line_no: int
    edge: Edge


@dataclass(frozen=True)
class LineIssue:
    """A line the official parser ignores or cannot use. ``kind``: ignored | unparseable | missing_node | prompt_spelling."""

    line_no: int
    kind: str
    message: str
    line: str


@dataclass(frozen=True)
class ParsedOutput:
    spans: tuple[Span, ...]
    issues: tuple[LineIssue, ...]

    @property
    def unparsed_spans(self) -> int:
        return sum(1 for span in self.spans if not span.edge.parsed)

    def count(self, kind: str) -> int:
        return sum(1 for issue in self.issues if issue.kind == kind)

    def graph(self) -> Graph:
        return graph_of_spans(self.spans)


def type_endpoint(part: str) -> Endpoint | None:
    """Type one stripped side of a span by the first rule that applies; None means the node is missing."""
    if "DataObject" in part:
        return _artifact(NodeType.DATA, part)
    if "TextAnnotation" in part:
        return _artifact(NodeType.TEXT, part)
    if part.startswith(("Start", "start")):
        return Endpoint(NodeType.START, _greedy_parenthesised(part), part)
    if part.startswith(("End", "end")):
        return Endpoint(NodeType.END, _greedy_parenthesised(part), part)
    if part[:1] in _GATEWAY_INITIALS:
        for gateway, prefix, lower, number in _GATEWAY_RULES:
            if part.startswith(prefix) or lower.match(part):
                text = _FIRST_PARENS.search(number.sub("", part))
                return Endpoint(gateway, text.group(1) if text else "", part)
    # Inferred from upstream's outputs on the fixtures (docs/metrics.md §5.2, item 4): a part with no word character is
    # no node. The three dev gold lines whose greedy condition leaves the tail ")" (documents
    # 1193176259 and 1307764145) count as flows but add no Activity and are never strictly correct.
    return Endpoint(NodeType.ACTIVITY, part, part) if _WORD.search(part) else None


def _artifact(node_type: NodeType, part: str) -> Endpoint | None:
    text = _greedy_parenthesised(part)
    return Endpoint(node_type, text, part) if text else None


def _greedy_parenthesised(part: str) -> str:
    match = _GREEDY_PARENS.search(part)
    return match.group(1) if match else ""


@lru_cache(maxsize=200_000)
def parse_edge(line: str) -> Edge:
    """Parse one stripped span line (condition, the two typed ends, the edge type)."""
    match = _CONDITION.search(line)
    condition = match.group(1) if match else ""
    body = line.replace(f"({condition})", "") if condition else line
    parts = body.split(ARROW)
    if len(parts) != 2:
        return Edge(parsed=False, arrows=len(parts) - 1)
    head_part, tail_part = parts[0].strip(), parts[1].strip()
    head, tail = type_endpoint(head_part), type_endpoint(tail_part)
    artifact = any(end is not None and end.type.is_artifact for end in (head, tail))
    flow = FlowType.ASSOCIATION if artifact else FlowType.SEQUENCE
    return Edge(True, head, tail, condition, flow, head_part, 1)


def header_agent(line: str) -> str:
    """The actor a ``For <actor>:`` header line sets (the caller checked it starts with For/for)."""
    rest = line[3:] if _HEADER.match(line) else line
    if rest.endswith(":"):
        rest = rest[:-1]
    return rest.strip()


def parse_text(text: str, *, prompt_spellings: bool = False) -> ParsedOutput:
    """Parse a whole model output. ``prompt_spellings`` (not official) reads ``DataConstraint(x)`` /
    ``ActionConstraint(x)`` as ``DataObject(x)`` / ``TextAnnotation(x)``; officially they are activities."""
    return _parse_text(text, bool(prompt_spellings))


@lru_cache(maxsize=16_384)  # validation parses every output for its warnings, scoring again
def _parse_text(text: str, prompt_spellings: bool) -> ParsedOutput:
    spans: list[Span] = []
    issues: list[LineIssue] = []
    agent = ""
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if ARROW in line:
            if "Constraint" in line and any(old in line for old, _ in _PROMPT_SPELLINGS):
                if prompt_spellings:
                    for old, new in _PROMPT_SPELLINGS:
                        line = line.replace(old, new)
                else:
                    issues.append(
                        LineIssue(
                            number,
                            "prompt_spelling",
                            "DataConstraint/ActionConstraint is read as an Activity by the official parser (the constraint is lost)",
                            line,
                        )
                    )
            span = Span(line, agent, number, parse_edge(line))
            spans.append(span)
            issue = _span_issue(span)
            if issue is not None:
                issues.append(issue)
        elif line.startswith(("For", "for")):
            agent = header_agent(line)
        elif line:
            issues.append(
                LineIssue(
                    number, "ignored", "no '->' and not a 'For <actor>:' header: ignored", line
                )
            )
    return ParsedOutput(tuple(spans), tuple(issues))


def _span_issue(span: Span) -> LineIssue | None:
    edge = span.edge
    if not edge.parsed:
        return LineIssue(
            span.line_no,
            "unparseable",
            f"{edge.arrows} arrows after removing the condition (exactly one is needed): the line counts nowhere",
            span.line,
        )
    missing = [side for side, end in (("source", edge.head), ("target", edge.tail)) if end is None]
    if missing:
        return LineIssue(
            span.line_no,
            "missing_node",
            f"no {' and no '.join(missing)} node (empty, no word character, or a constraint without '(text)'): the flow counts, the node does not",
            span.line,
        )
    return None


def node_key(agent: str, raw: str) -> str:
    """Node identity in graphs read from text: the written label under its actor."""
    return json.dumps([agent, raw], ensure_ascii=False)


def graph_of_spans(spans: Iterable[Span]) -> Graph:
    """The graph a text describes: one node per (actor, written label), one flow per distinct parsed line."""
    nodes: dict[str, Node] = {}
    flows: dict[Flow, None] = {}
    for span in spans:
        edge = span.edge
        if not edge.complete:
            continue
        assert edge.head is not None and edge.tail is not None and edge.type is not None
        ids = []
        for end in (edge.head, edge.tail):
            key = node_key(span.agent, end.raw)
            nodes.setdefault(key, Node(key, end.type, end.text, span.agent))
            ids.append(key)
        flows[Flow(ids[0], ids[1], edge.type, edge.condition)] = None
    return Graph(tuple(nodes.values()), tuple(flows))


def graph_of_gold_lines(lines: Iterable[GoldLine]) -> Graph:
    """The same view built from the gold structure directly (no text parsing): what a perfect parse gives."""
    nodes: dict[str, Node] = {}
    flows: dict[Flow, None] = {}
    for line in lines:
        ids = []
        for node, raw in ((line.source, line.source_label), (line.target, line.target_label)):
            key = node_key(line.agent, raw)
            text = "" if node.type is NodeType.AND else node.text
            nodes.setdefault(key, Node(key, node.type, text, line.agent))
            ids.append(key)
        flows[Flow(ids[0], ids[1], line.type, line.condition)] = None
    return Graph(tuple(nodes.values()), tuple(flows))
