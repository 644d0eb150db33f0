"""From summed raw statistics to the official PAGED metrics (micro P/R/F1 over the corpus).

Headline metrics (the paper's Table 2 columns) and where upstream keeps them:

==================  ==========================================  ==========================================
name                official field                              what is counted
==================  ==========================================  ==========================================
actor               ``other_results.bleu_agent.Actor``          soft: BLEU of actors, Activity/Start/End
action              ``other_results.bleu_node.Action``          soft: BLEU of Activity/Start/End texts
data_constraint     ``other_results.bleu_node.DataObject``      soft: BLEU of DataObject texts
action_constraint   ``other_results.bleu_node.TextAnnotation``  soft: BLEU of TextAnnotation texts
exclusive           ``node_eva_results.XOR``                    strict XOR gateway count
inclusive           ``node_eva_results.OR``                     strict OR gateway count
parallel            ``node_eva_results.AND``                    strict AND gateway count
sequence_flow       ``other_results.bleu_edge.SequenceFlow``    soft count (both ends BLEU >= 0.5)
condition_flow      ``other_results.bleu_edge.ConditionFlow``   soft: BLEU of the condition
constraint_flow     ``other_results.bleu_edge.Association``     soft count (both ends BLEU >= 0.5)
==================  ==========================================  ==========================================

Each is reported as F1 under its name, with ``<name>_p`` and ``<name>_r``. Soft BLEU metrics add a
node's BLEU each time an unmatched node is compared again but count the node once, so they can
exceed 1 (official behaviour). A ratio with a zero denominator is 0, and F1 is 0 when P + R = 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import reduce
from operator import add

from procbench.runners.paged.walk import ACTIONS as ACTION
from procbench.runners.paged.walk import ALL_NODES
from procbench.runners.paged.walk import FLOWS as EDGE_TYPES

GATEWAY = ("XOR", "OR", "AND")
CONSTRAINT = ("DataObject", "TextAnnotation")


@dataclass(frozen=True)
class MetricDef:
    """A metric: which statistics family and member types it sums, and its official location."""

    name: str
    family: str  # node | edge | agent | bleu_node | bleu_agent | bleu_edge
    members: tuple[str, ...]
    official: str

    @property
    def is_bleu(self) -> bool:
        """BLEU sums over item counts (``<side>_sum``/``<side>_num``) rather than correct/total counts."""
        return self.family in ("bleu_node", "bleu_agent") or self.members == ("ConditionFlow",)


HEADLINE: tuple[MetricDef, ...] = (
    MetricDef("actor", "bleu_agent", ACTION, "other_results.bleu_agent.Actor"),
    MetricDef("action", "bleu_node", ACTION, "other_results.bleu_node.Action"),
    MetricDef(
        "data_constraint", "bleu_node", ("DataObject",), "other_results.bleu_node.DataObject"
    ),
    MetricDef(
        "action_constraint",
        "bleu_node",
        ("TextAnnotation",),
        "other_results.bleu_node.TextAnnotation",
    ),
    MetricDef("exclusive", "node", ("XOR",), "node_eva_results.XOR"),
    MetricDef("inclusive", "node", ("OR",), "node_eva_results.OR"),
    MetricDef("parallel", "node", ("AND",), "node_eva_results.AND"),
    MetricDef(
        "sequence_flow", "bleu_edge", ("SequenceFlow",), "other_results.bleu_edge.SequenceFlow"
    ),
    MetricDef(
        "condition_flow", "bleu_edge", ("ConditionFlow",), "other_results.bleu_edge.ConditionFlow"
    ),
    MetricDef(
        "constraint_flow", "bleu_edge", ("Association",), "other_results.bleu_edge.Association"
    ),
)

# The strict ("hard") counterparts and aggregates upstream also computes.
EXTRA: tuple[MetricDef, ...] = (
    MetricDef("action_strict", "node", ACTION, "node_eva_results.Activity"),
    MetricDef("activity_strict", "node", ("Activity",), "node_detailed_results.Activity"),
    MetricDef("start_strict", "node", ("StartNode",), "node_detailed_results.StartNode"),
    MetricDef("end_strict", "node", ("EndNode",), "node_detailed_results.EndNode"),
    MetricDef("data_constraint_strict", "node", ("DataObject",), "node_eva_results.DataObject"),
    MetricDef(
        "action_constraint_strict", "node", ("TextAnnotation",), "node_eva_results.TextAnnotation"
    ),
    MetricDef("gateway_strict", "node", GATEWAY, "other_results.group.Gateway"),
    MetricDef("constraint_strict", "node", CONSTRAINT, "other_results.group.Constraint"),
    MetricDef("actor_strict", "agent", ACTION, "other_results.agent.total"),
    MetricDef(
        "sequence_flow_strict", "edge", ("SequenceFlow",), "edge_detailed_results.SequenceFlow"
    ),
    MetricDef(
        "constraint_flow_strict", "edge", ("Association",), "edge_detailed_results.Association"
    ),
    MetricDef("node_total_strict", "node", ALL_NODES, "node_total_results"),
    MetricDef("edge_total_strict", "edge", EDGE_TYPES, "edge_total_results"),
    MetricDef("constraint_bleu", "bleu_node", CONSTRAINT, "other_results.bleu_node.Constraint"),
)

METRICS: dict[str, MetricDef] = {m.name: m for m in (*HEADLINE, *EXTRA)}


@dataclass(frozen=True)
class Counts:
    """Micro-summed numerators and denominators of one metric (a BLEU sum and an item count for soft metrics)."""

    p_num: float
    p_den: float
    r_num: float
    r_den: float
    bleu: bool = False

    @property
    def precision(self) -> float:
        return self.p_num / self.p_den if self.p_den else 0.0

    @property
    def recall(self) -> float:
        return self.r_num / self.r_den if self.r_den else 0.0

    @property
    def f1(self) -> float:
        return f1_of(self.precision, self.recall)

    def official(self) -> dict[str, float]:
        """The counts under the names the parity fixtures use."""
        if self.bleu:
            return {
                "bleu_precision_total": self.p_num,
                "bleu_precision_num": self.p_den,
                "bleu_recall_total": self.r_num,
                "bleu_recall_num": self.r_den,
            }
        return {
            "p_correct": self.p_num,
            "p_total": self.p_den,
            "r_correct": self.r_num,
            "r_total": self.r_den,
        }


def f1_of(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def sum_statistics(per_document: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Corpus accumulators: key-wise sums of per-document statistics (in the given order)."""
    documents = list(per_document)
    keys = tuple(documents[0]) if documents else ()
    if all(
        tuple(stats) == keys for stats in documents
    ):  # the scorer's case: one key scheme in one order
        # column by column, added left to right from 0 like the loop below (not math.fsum, not sum())
        return {
            key: reduce(add, column, 0)
            for key, column in zip(keys, zip(*(stats.values() for stats in documents)))
        }
    total: dict[str, float] = {}
    for stats in documents:
        for key, value in stats.items():
            total[key] = total.get(key, 0) + value
    return total


def _summed(stats: Mapping[str, float], family: str, members: Iterable[str], suffix: str) -> float:
    return sum(stats.get(f"{family}.{member}.{suffix}", 0) for member in members)


def counts_of(metric: MetricDef, stats: Mapping[str, float]) -> Counts:
    num, den = ("sum", "num") if metric.is_bleu else ("correct", "total")
    f, m = metric.family, metric.members
    return Counts(
        _summed(stats, f, m, f"p_{num}"),
        _summed(stats, f, m, f"p_{den}"),
        _summed(stats, f, m, f"r_{num}"),
        _summed(stats, f, m, f"r_{den}"),
        metric.is_bleu,
    )


def metric_values(
    stats: Mapping[str, float],
    metrics: Iterable[MetricDef] = (*HEADLINE, *EXTRA),
    digits: int | None = None,
) -> dict[str, float]:
    """``{name: F1, name_p: P, name_r: R}`` for each metric; rounded with Python's ``round`` if ``digits``."""

    def r(x: float) -> float:
        return round(x, digits) if digits is not None else x

    values: dict[str, float] = {}
    for metric in metrics:
        c = counts_of(metric, stats)
        values[metric.name] = r(c.f1)
        values[f"{metric.name}_p"] = r(c.precision)
        values[f"{metric.name}_r"] = r(c.recall)
    return values


def _prf(c: Counts, digits: int = 4) -> dict[str, float]:
    return {
        "precision": round(c.precision, digits),
        "recall": round(c.recall, digits),
        "f1": round(c.f1, digits),
    }


def _group(stats: Mapping[str, float], family: str, members: Iterable[str]) -> dict[str, float]:
    return _prf(counts_of(MetricDef("", family, tuple(members), ""), stats))


def official_results(stats: Mapping[str, float]) -> dict[str, object]:
    """The result dicts upstream's ``get_detailed_results`` returns (4 decimals), from corpus statistics."""
    g = _group
    return {
        "node_detailed_results": {t: g(stats, "node", (t,)) for t in ALL_NODES},
        "edge_detailed_results": {e: g(stats, "edge", (e,)) for e in EDGE_TYPES},
        "node_total_results": g(stats, "node", ALL_NODES),
        "edge_total_results": g(stats, "edge", EDGE_TYPES),
        "node_eva_results": {
            "Activity": g(stats, "node", ACTION),
            **{t: g(stats, "node", (t,)) for t in (*GATEWAY, *CONSTRAINT)},
        },
        "other_results": {
            "agent": {
                "total": g(stats, "agent", ACTION),
                **{t: g(stats, "agent", (t,)) for t in ACTION},
            },
            "group": {
                "Action": g(stats, "node", ACTION),
                "Gateway": g(stats, "node", GATEWAY),
                "Constraint": g(stats, "node", CONSTRAINT),
                "SequentialEdge": g(stats, "edge", ("SequenceFlow",)),
                "ConstraintEdge": g(stats, "edge", ("Association",)),
                "Actor": g(stats, "agent", ACTION),
            },
            "bleu_node": {
                "Action": g(stats, "bleu_node", ACTION),
                "DataObject": g(stats, "bleu_node", ("DataObject",)),
                "TextAnnotation": g(stats, "bleu_node", ("TextAnnotation",)),
                "Constraint": g(stats, "bleu_node", CONSTRAINT),
            },
            "bleu_agent": {"Actor": g(stats, "bleu_agent", ACTION)},
            "bleu_edge": {
                "SequenceFlow": g(stats, "bleu_edge", ("SequenceFlow",)),
                "Association": g(stats, "bleu_edge", ("Association",)),
                "ConditionFlow": g(stats, "bleu_edge", ("ConditionFlow",)),
            },
        },
        "get_results": {
            f"{kind}_{measure}": value
            for kind, c in (
                ("nodes", g(stats, "node", ALL_NODES)),
                ("edges", g(stats, "edge", EDGE_TYPES)),
            )
            for measure, value in c.items()
        },
    }


def official_sample_result(stats: Mapping[str, float]) -> dict[str, object]:
    """The per-document dict upstream's ``update()`` returns (stored as ``eva_result``), 4 decimals."""
    nodes, edges = _group(stats, "node", ALL_NODES), _group(stats, "edge", EDGE_TYPES)
    results = official_results(stats)["other_results"]
    assert isinstance(results, dict)
    return {
        "node_precision": nodes["precision"],
        "node_recall": nodes["recall"],
        "node_f1": nodes["f1"],
        "edge_precision": edges["precision"],
        "edge_recall": edges["recall"],
        "edge_f1": edges["f1"],
        "group_eva_results": results["group"],
    }
