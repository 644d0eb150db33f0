"""PAGED (ACL 2024): procedural graph extraction from documents, scored like upstream ``lexical_based``.

Importing this package registers its components: the reader ``paged.graphs``, the prediction
validator ``paged.graph_text``, the scorer and the aggregator ``paged.lexical``. The modules:
``model`` (typed graphs), ``gold`` (gold JSON records), ``linearise`` (the official gold text),
``parse`` (the official text parser), ``tokens`` (spaCy tokens, lexical F1, BLEU-1), ``tokenizer``
(spaCy's tokens of many texts from cached chunks), ``letters`` (which regexes cannot split a word), ``lexical``
(per-document statistics), ``metrics`` (corpus metrics), ``dot`` (Graphviz drawings).
"""

from procbench.runners.paged import lines, predictions, reader, scoring, similarities  # noqa: F401  (registration side effects)
from procbench.runners.paged.gold import (
    GoldDocument,
    document_from_record,
    graph_from_record,
    load_documents,
)
from procbench.runners.paged.linearise import GoldLine, linearise, render_text
from procbench.runners.paged.model import Flow, FlowType, Graph, Node, NodeType
from procbench.runners.paged.parse import ParsedOutput, parse_text
from procbench.runners.paged.reader import read_gold_file

__all__ = [
    "Flow",
    "FlowType",
    "GoldDocument",
    "GoldLine",
    "Graph",
    "Node",
    "NodeType",
    "ParsedOutput",
    "document_from_record",
    "graph_from_record",
    "linearise",
    "load_documents",
    "parse_text",
    "read_gold_file",
    "render_text",
]
