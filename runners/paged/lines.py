"""PAGED's graph text as typed lines: the deriver ``paged.graph_lines`` (parsing only; the scoring is the spec's).

Each line that holds ``->`` becomes a record the spec's ``align`` block walks (``specs/paged.spec``): the
line's text (what lines are aligned on), the actor in force, whether upstream's parser could read it, its
flow type (``SequenceFlow`` or ``Association``; a sequence flow with a condition is also a
``ConditionFlow`` by ``flow_kind``), its condition, and its two ends as node records (kind, text, actor,
and for gateways the line part that identifies them). The gold side is the official linearisation of the
gold graph, the prediction side the model's output; both are read by the same parser (docs/metrics.md §5).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from procbench.runners.paged.gold import GoldDocument, lines_of
from procbench.runners.paged.linearise import GoldLine
from procbench.runners.paged.model import GATEWAYS, FlowType, NodeType
from procbench.runners.paged.parse import Endpoint, Span, parse_edge, parse_text
from procbench.runners.paged.tokens import prepare
from procbench.runners.runtime.registry import component

NODE_KINDS = ", ".join(t.value for t in NodeType)
FLOWS = ", ".join(f.value for f in FlowType)
NODE = f"record(kind: enum({NODE_KINDS}), text: str, actor: str, group: str)"
LINE = (
    f"record(line: str, actor: str, parsed: bool, flow: optional(enum({FLOWS})), flow_kind: optional(enum({FLOWS}, ConditionFlow)), "
    f"condition: str, head: optional({NODE}), tail: optional({NODE}))"
)


def gold_spans(lines: Sequence[GoldLine]) -> list[Span]:
    """The gold side as the scorer sees it: each linearised line parsed, under its walk's actor."""
    return [
        Span(line.text, line.agent, number, parse_edge(line.text))
        for number, line in enumerate(lines, start=1)
    ]


def _node(end: Endpoint | None, actor: str, group: str) -> dict[str, str] | None:
    if end is None:
        return None
    return {
        "kind": end.type.value,
        "text": end.text,
        "actor": actor,
        "group": group if end.type in GATEWAYS else "",
    }


def line_records(spans: Sequence[Span]) -> list[dict[str, Any]]:
    """One record per span, as ``graph_lines`` gives them (unparsed lines: no flow, no ends)."""
    out = []
    for span in spans:
        edge = span.edge
        parsed = edge.parsed and edge.type is not None
        out.append(
            {
                "line": span.line,
                "actor": span.agent,
                "parsed": parsed,
                "flow": edge.type.value if parsed and edge.type is not None else None,
                "flow_kind": edge.soft_type if parsed else None,
                "condition": edge.condition if parsed else "",
                "head": _node(edge.head, span.agent, edge.source_span) if parsed else None,
                "tail": _node(edge.tail, span.agent, edge.source_span) if parsed else None,
            }
        )
    return out


def texts_of(spans: Iterable[Span]) -> Iterable[str]:
    """Every text of these spans that the similarities tokenise: lines, actors, conditions, node texts."""
    for span in spans:
        yield span.line
        yield span.agent
        edge = span.edge
        if edge.parsed:
            yield edge.condition
            if edge.head is not None:
                yield edge.head.text
            if edge.tail is not None:
                yield edge.tail.text


def spans_of(record: Any, *, prompt_spellings: bool = False) -> list[Span]:
    """A gold document's linearised lines, or a model output's lines (None: no output, no lines)."""
    if isinstance(record, GoldDocument):
        return gold_spans(lines_of(record))
    if record is not None and not isinstance(record, str):
        raise TypeError(
            f"a PAGED prediction must be the model output text, got {type(record).__name__}"
        )
    return list(parse_text(record or "", prompt_spellings=prompt_spellings).spans)


@component(
    "deriver",
    "paged.graph_lines",
    fields={"lines": f"list({LINE})"},
    gold_needs={"record": "any"},
    prediction_needs={"graph": "str"},
)
def graph_lines(
    record: Any, gold: Any = None, *, prompt_spellings: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """The lines of a gold document's official linearisation, or of a model output, as typed records.

    ``prompt_spellings`` (not official; default off): read the few-shot prompt's ``DataConstraint(x)`` /
    ``ActionConstraint(x)`` as ``DataObject(x)`` / ``TextAnnotation(x)``.
    """
    spans = spans_of(record, prompt_spellings=prompt_spellings)
    prepare(texts_of(spans))  # one spaCy call for the document's texts, not one per text
    return {"lines": line_records(spans)}
