"""Reading PAGED gold records (``dev.json``/``test.json``) into typed graphs.

A record holds ``file_index``, ``paragraph``, ``step_nodes`` (Start/End/Activity/XOR/OR/AND with
``resourceId``, ``NodeText``, ``agent``), ``data_nodes`` (DataObject), ``text_nodes``
(TextAnnotation), ``SequenceFlow`` (``src``, ``tgt``, ``condition``), ``Association`` (``src``,
``tgt``) and an always-empty ``MessageFlow`` (ignored, as upstream ignores it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
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
    document, graph, lines = read_document(record)
    derived = vars(
        document
    )  # where cached_property keeps its values (a frozen dataclass still has a __dict__)
    derived["graph"], derived["lines"] = graph, lines
    return document


def read_document(record: Mapping[str, Any]) -> tuple[GoldDocument, Graph, tuple[GoldLine, ...]]:
    """The document of one gold record and its graph and lines, checked now, but not kept on the document.

    A split's reader keeps only the documents (the record's text): their graphs and lines are several
    times larger, and scoring derives them again one document at a time (:func:`lines_of`).
    """
    graph = graph_from_record(record)
    lines = linearise(graph)
    document = GoldDocument(
        int(record["file_index"]),
        str(record.get("paragraph", "")),
        json.dumps(record, sort_keys=True),
    )
    return document, graph, lines


def lines_of(document: GoldDocument) -> tuple[GoldLine, ...]:
    """The document's official lines; computed from its record (and not kept) unless the document holds them."""
    held = vars(document).get("lines")
    if held is not None:
        return held
    return linearise(graph_from_record(json.loads(document.record)))


def load_documents(path: Path) -> list[GoldDocument]:
    """Every record of a gold JSON file, in file order; FileNotFoundError names the missing path."""
    return [document_from_record(record) for record in gold_records(path)]


def gold_records(path: Path) -> Iterator[Mapping[str, Any]]:
    """The records of a gold JSON file (one array), one at a time; FileNotFoundError names the missing path."""
    if not path.is_file():
        raise FileNotFoundError(f"PAGED gold file not found: {path}")
    return json_array_members(path)


_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"  # JSON's whitespace
_NUMBER_TAIL = "0123456789.eE+-"
CHUNK_CHARACTERS = 1 << 20  # text read at a time


def json_array_members(path: Path, *, chunk: int = CHUNK_CHARACTERS) -> Iterator[Any]:
    """The members of a file holding one JSON array, decoded one at a time, in order.

    The same values as ``json.loads`` of the whole text, while memory holds one member and about
    ``chunk`` characters of text, not the whole file (a 100x PAGED split is 250 MB of JSON and several
    times that as Python objects). Text ``json.loads`` would refuse raises ValueError with the position.
    """
    with path.open(encoding="utf-8") as handle:
        text, at, dropped, ended = "", 0, 0, False

        def more() -> bool:
            """Read the next chunk (keeping the text from ``at``); False at the end of the file."""
            nonlocal text, at, dropped, ended
            if ended:
                return False
            piece = handle.read(
                max(chunk, len(text) - at)
            )  # doubles for a member larger than a chunk
            if not piece:
                ended = True
                return False
            dropped += at
            text, at = text[at:] + piece, 0
            return True

        def skip_space() -> str:
            """The next character after whitespace ('' at the end of the file), not consumed."""
            nonlocal at
            while True:
                while at < len(text) and text[at] in _SPACE:
                    at += 1
                if at < len(text):
                    return text[at]
                if not more():
                    return ""

        def fail(what: str) -> ValueError:
            return ValueError(f"{path.name}: invalid JSON at character {dropped + at}: {what}")

        if skip_space() != "[":
            raise fail("expected a JSON array")
        at += 1
        if skip_space() == "]":
            at += 1
        else:
            while True:
                skip_space()
                while True:
                    try:
                        member, end = _DECODER.raw_decode(text, at)
                    except json.JSONDecodeError as exc:
                        if more():
                            continue
                        raise fail(exc.msg) from None
                    # a number could go on in the next chunk ("1" of "1.5", "1e" of "1e5")
                    if (
                        len(text) - end > 3
                        or any(c not in _NUMBER_TAIL for c in text[end:])
                        or not more()
                    ):
                        break
                at = end
                yield member
                following = skip_space()
                at += 1
                if following == "]":
                    break
                if following != ",":
                    at -= 1
                    raise fail("expected ',' or ']' after an array member")
        if skip_space():
            raise fail("extra data after the array")
