"""The official PAGED lexical evaluation as the Python API builds it: the walk ``specs/paged.spec`` declares.

:func:`lexical_walk` composes the same library components the spec's ``align`` block names (the parity
tests call the Python API; ``tests/test_paged_bounded.py`` checks that the spec compiles to an equal
walk, ``tests/test_aligned_walks.py`` that both count alike on the parity cases).
Keys: ``node|edge|agent|bleu_node|bleu_agent|bleu_edge[_once].<type>.<p|r>_<stat>`` (docs/metrics.md §5).
"""

from __future__ import annotations

from functools import cache

from procbench.runners.library.alignment import AlignedWalk, Entities, Stat, Tally
from procbench.runners.paged.model import FlowType, NodeType
from procbench.runners.paged.similarities import Bleu1, LexicalF1, SameWords
from procbench.runners.library.record_rules import AllOf, AtLeast, Cases, One, OnField

ALL_NODES = tuple(t.value for t in NodeType)
ACTIONS = ("Activity", "StartNode", "EndNode")
BLEU_NODES = (*ACTIONS, "DataObject", "TextAnnotation")
FLOWS = tuple(f.value for f in FlowType)


@cache
def node_strict() -> Cases:
    """Upstream's strict node match: the same kind, then start, end and OR nodes by kind alone, others by their words."""
    one = One()
    return Cases(
        ("kind",),
        "kind",
        (("StartNode", one), ("EndNode", one), ("OR", one)),
        OnField("text", SameWords()),
    )


@cache
def lexical_walk() -> AlignedWalk:
    """Upstream ``lexical_based``: lines aligned by lexical F1 >= 0.5, nodes identified by a registry, counts per type."""
    one, words, bleu = One(), SameWords(), Bleu1()
    text_bleu = OnField("text", bleu)
    strict = node_strict()
    node_bleu = Cases(("kind",), "kind", (("StartNode", one), ("EndNode", one)), text_bleu)
    actor_correct = AllOf(("kind",), (strict, OnField("actor", words)))
    actor_bleu = AllOf(("kind",), (OnField("actor", bleu),))
    gateway_bleu = OnField("text", Bleu1(both_empty=1.0))
    by_kind = (
        ("StartNode", one),
        ("EndNode", one),
        ("AND", one),
        ("XOR", gateway_bleu),
        ("OR", gateway_bleu),
    )
    end_soft = AtLeast(Cases((), "kind", by_kind, text_bleu), 0.5)
    ends = ("flow", "head.kind", "tail.kind")
    flow_strict = AllOf(
        ("flow",), (OnField("head", strict), OnField("tail", strict), OnField("condition", words))
    )
    flow_soft = AllOf(ends, (OnField("head", end_soft), OnField("tail", end_soft)))
    condition_soft = AllOf(
        ends, (OnField("head", end_soft), OnField("tail", end_soft), OnField("condition", bleu))
    )
    same_group = AllOf(("group",), ())
    identity = Cases(
        (),
        "kind",
        (("XOR", same_group), ("OR", same_group), ("AND", same_group)),
        OnField("text", LexicalF1(both_empty=1.0)),
    )
    once = Stat("total", "once")
    tallies = (
        Tally("node", "node", "kind", ALL_NODES, (once, Stat("correct", "each", strict))),
        Tally("edge", "", "flow", FLOWS, (once, Stat("correct", "each", flow_strict))),
        Tally("bleu_edge", "", "flow_kind", FLOWS, (once, Stat("correct", "each", flow_soft))),
        Tally(
            "bleu_edge",
            "",
            "flow_kind",
            ("ConditionFlow",),
            (Stat("sum", "each", condition_soft), Stat("num", "once")),
        ),
        Tally(
            "agent",
            "node",
            "kind",
            ACTIONS,
            (once, Stat("correct", "each", actor_correct)),
            where="actor",
        ),
        Tally(
            "bleu_agent",
            "node",
            "kind",
            ACTIONS,
            (Stat("sum", "each", actor_bleu), Stat("num", "once")),
            where="actor",
        ),
        Tally(
            "bleu_node",
            "node",
            "kind",
            BLEU_NODES,
            (Stat("sum", "each", node_bleu), Stat("num", "once")),
        ),
        Tally(
            "bleu_node_once",
            "node",
            "kind",
            BLEU_NODES,
            (Stat("sum", "best", node_bleu), Stat("num", "once")),
        ),
        Tally(
            "bleu_agent_once",
            "node",
            "kind",
            ACTIONS,
            (Stat("sum", "best", actor_bleu), Stat("num", "once")),
            where="actor",
        ),
    )
    nodes = Entities("node", ("head", "tail"), ("kind", "actor"), identity, 0.8, strict)
    return AlignedWalk(
        "lines",
        "lines",
        "lines",
        "line",
        LexicalF1(),
        0.5,
        "parsed",
        (nodes,),
        tallies,
        symmetric=True,
    )
