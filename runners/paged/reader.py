"""The reader ``paged.graphs``: one gold split as a :class:`GoldSet` of :class:`GoldDocument` values.

Item id: the record's ``file_index`` as a string (what prediction files reference). Slice labels,
from the gold graph (all nodes, reachable or not):

* ``gateways``: none | exclusive | inclusive | parallel | mixed (more than one gateway type);
* ``constraints``: none | data | action | both (DataObject / TextAnnotation nodes present);
* ``actors``: none | single | multiple (distinct non-empty actors of the step nodes).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from procbench.runners.runtime._types import GoldSet
from procbench.runners.paged.gold import GoldDocument, gold_records, read_document
from procbench.runners.paged.model import Graph, NodeType
from procbench.runners.runtime.registry import component

SPLITS = ("train", "dev", "test")
GOLD_DIR = Path("paged") / "dataset" / "procedural_graph_extraction"
GATEWAY_NAMES = {NodeType.XOR: "exclusive", NodeType.OR: "inclusive", NodeType.AND: "parallel"}
# The contract: the label values document_labels gives, and GoldDocument's attributes (the gold record;
# ``graph`` and ``lines`` are derived from ``record``).
LABEL_VALUES = {
    "gateways": ("none", *GATEWAY_NAMES.values(), "mixed"),
    "constraints": ("none", "data", "action", "both"),
    "actors": ("none", "single", "multiple"),
}
DOCUMENT_FIELDS = {"file_index": "int", "paragraph": "str", "record": "str"}


def gold_path(data_root: Path, split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"unknown PAGED split {split!r}; expected one of {', '.join(SPLITS)}")
    return Path(data_root) / GOLD_DIR / f"{split}.json"


def document_labels(document: GoldDocument) -> dict[str, str]:
    return graph_labels(document.graph)


def graph_labels(graph: Graph) -> dict[str, str]:
    types = graph.node_types()
    gateways = [name for t, name in GATEWAY_NAMES.items() if t in types]
    data, action = NodeType.DATA in types, NodeType.TEXT in types
    actors = {node.actor for node in graph.nodes if node.actor and not node.type.is_artifact}
    return {
        "gateways": "none" if not gateways else gateways[0] if len(gateways) == 1 else "mixed",
        "constraints": "both"
        if data and action
        else "data"
        if data
        else "action"
        if action
        else "none",
        "actors": "none" if not actors else "single" if len(actors) == 1 else "multiple",
    }


def gold_set(documents: Iterable[GoldDocument]) -> GoldSet:
    items: dict[str, GoldDocument] = {}
    for document in documents:
        if document.item_id in items:
            raise ValueError(f"file_index {document.item_id} occurs twice in the gold file")
        items[document.item_id] = document
    return GoldSet(items, {item_id: document_labels(d) for item_id, d in items.items()})


def read_gold_file(path: Path) -> GoldSet:
    """Any file in the gold JSON format (e.g. the unofficial merged split the OR fixture uses).

    Read record by record; each document keeps its record, not its graph and lines (labelled and
    checked here, derived again when it is scored), so a large split costs its text, not its objects.
    """
    items: dict[str, GoldDocument] = {}
    labels: dict[str, dict[str, str]] = {}
    for record in gold_records(Path(path)):
        document, graph, _ = read_document(record)
        if document.item_id in items:
            raise ValueError(f"file_index {document.item_id} occurs twice in the gold file")
        items[document.item_id] = document
        labels[document.item_id] = graph_labels(graph)
    return GoldSet(items, labels)


@component("reader", "paged.graphs", fields=DOCUMENT_FIELDS, labels=LABEL_VALUES)
def read_graphs(data_root: Path, split: str) -> GoldSet:
    """PAGED procedural graphs of one split (``dev``; ``test``/``train`` when present), in file order.

    Items are :class:`procbench.runners.paged.gold.GoldDocument` values keyed by ``file_index``; labels:
    ``gateways``, ``constraints``, ``actors``. FileNotFoundError names the missing file (the staged
    data has no test.json).
    """
    return read_gold_file(gold_path(data_root, split))
