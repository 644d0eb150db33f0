"""The shipped PAGED samples: invented gold graphs in the upstream layout and three submissions of different quality."""

from __future__ import annotations

import warnings

import pytest

from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime._types import PredictionWarning
from procbench.runners.paged.metrics import HEADLINE
from procbench.runners.paged.model import FlowType, NodeType
from procbench.runners.paged.reader import read_graphs
from procbench.runners.runtime.registry import get

SUBMISSIONS = SAMPLE_SUBMISSIONS_DIR / "paged"
RANKING = ("careful-extractor", "activity-chain", "sloppy-prompt")  # best first


@pytest.mark.parametrize("split", ["dev", "test"])
def test_sample_splits_cover_every_element_and_slice(split: str) -> None:
    gold = get("reader", "paged.graphs").fn(SAMPLE_DATA_ROOT, split)
    types = {node.type for document in gold.items.values() for node in document.graph.nodes}
    assert types == set(NodeType)
    flows = [flow for document in gold.items.values() for flow in document.graph.flows]
    assert {flow.type for flow in flows} == set(FlowType)
    assert any(flow.is_condition_flow for flow in flows)
    values = {
        dimension: {labels[dimension] for labels in gold.labels.values()}
        for dimension in ("gateways", "constraints", "actors")
    }
    assert values == {
        "gateways": {"none", "exclusive", "inclusive", "parallel", "mixed"},
        "constraints": {"none", "data", "action", "both"},
        "actors": {"none", "single", "multiple"},
    }


def _score(name: str) -> dict[str, float]:
    gold = read_graphs(SAMPLE_DATA_ROOT, "dev")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predictions = get("predictions", "paged.graph_text").fn(SUBMISSIONS / f"{name}.jsonl", gold)
    assert all(issubclass(w.category, PredictionWarning) for w in caught)
    items = get("scorer", "paged.lexical").fn(gold, predictions)
    assert [item.item_id for item in items] == list(gold.items)
    return get("aggregator", "paged.lexical").fn(items)


def test_sample_submissions_rank_as_intended() -> None:
    scores = {name: _score(name) for name in RANKING}
    for metric in ("action", "sequence_flow"):
        ordered = [scores[name][metric] for name in RANKING]
        assert ordered == sorted(ordered, reverse=True) and len(set(ordered)) == 3, metric
    mean_f1 = {
        name: sum(scores[name][m.name] for m in HEADLINE) / len(HEADLINE) for name in RANKING
    }
    assert mean_f1[RANKING[0]] > mean_f1[RANKING[1]] > mean_f1[RANKING[2]]


def test_sloppy_submission_is_warned_about() -> None:
    gold = read_graphs(SAMPLE_DATA_ROOT, "dev")
    with pytest.warns(PredictionWarning) as caught:
        get("predictions", "paged.graph_text").fn(SUBMISSIONS / "sloppy-prompt.jsonl", gold)
    messages = " ".join(str(w.message) for w in caught)
    for expected in ("no prediction", "more than one '->'", "ignored", "DataConstraint"):
        assert expected in messages
