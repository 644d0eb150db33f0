"""PAGED graphs are coloured by the matching the displayed score uses (issue #30, deliverable 3).

The Items page draws the gold graph coloured by what a prediction missed, by soft matching (the
headline scores' BLEU-1) by default or by strict matching (the strict counts), switchable, with a
legend naming the one shown.  The item here is the bundled sample ``careful-extractor`` on document
1005, which writes "inform the policyholder" where the gold says "notify the policyholder": the
scorer's own per-item statistics (stored by intake, not computed by the colouring) count every gold
activity in full under soft matching and five of six under strict matching, so that node must be green
in the soft view (with its best BLEU-1 as the walk found it) and red in the strict one, and no other
start, end or activity red in either.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from procbench.runners.paged.dot import COLOURS, Status
from procbench.leaderboard import queries
from tests.site_app import build_demo_store, page

ITEM = "1005"
NODE = "notify the\\npolicyholder"  # the gold activity as the DOT label wraps it
MODEL = "careful-extractor"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "paged-colours")


def _sid(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT submission_id FROM submissions WHERE task = 'paged' AND model = ?", [MODEL]
        ).fetchone()
    assert row is not None
    return str(row[0])


def _item_statistics(db: Path, sid: str) -> dict[str, float]:
    """The scorer's per-item statistics of the item, as intake stored them (the official walk's counts)."""
    return dict(next(i for i in queries.item_scores(db, [sid])[sid] if i.item_id == ITEM).values)


def _gold_graph(at: AppTest) -> str:
    graphs = [g.proto.spec for g in at.get("graphviz_chart")]
    assert len(graphs) == 3  # gold, the prediction, the gold coloured by what the prediction missed
    return graphs[2]


def _action_nodes(dot: str) -> dict[str, str]:
    """Label -> tooltip status of each coloured activity, start or end node of a DOT graph."""
    out = {}
    for line in dot.splitlines():
        found = re.search(
            r'shape=(box|circle|doublecircle).*label="((?:[^"\\]|\\.)*)".*tooltip="(\w+)', line
        )
        if found:
            out[found.group(2)] = found.group(3)
    return out


def test_the_gold_graph_is_coloured_by_the_matching_the_score_uses(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = _sid(demo_db)
    counts = _item_statistics(demo_db, sid)
    # soft: every gold activity counted in full (the Action score's recall sums); strict: five of its six activities
    assert counts["bleu_node.Activity.r_sum"] == counts["bleu_node.Activity.r_num"] == 6
    assert (counts["node.Activity.r_correct"], counts["node.Activity.r_total"]) == (5, 6)
    # each activity's best BLEU-1 summed: the five strict matches give 1 each, the sixth its own best
    best = counts["bleu_node_once.Activity.r_sum"] - counts["node.Activity.r_correct"]

    at = page(demo_db, monkeypatch, "items", task="paged", split="dev", id=sid, item=ITEM)
    assert at.radio(key="matching").value == "soft"  # the default: the headline scores' matching
    assert any("**soft** matching" in m.value and "BLEU-1" in m.value for m in at.markdown)
    soft = _gold_graph(at)
    soft_nodes = _action_nodes(soft)
    assert soft_nodes[NODE] == Status.MATCHED.value
    assert (
        Status.MISSED.value not in soft_nodes.values()
    )  # every gold action counted, as Action recall 1 says
    node_line = next(line for line in soft.splitlines() if NODE in line)
    assert COLOURS[Status.MATCHED] in node_line and f"best BLEU-1 {best:.2f}" in node_line

    at.radio(key="matching").set_value("strict").run()
    assert not at.exception
    assert any("**strict** matching" in m.value for m in at.markdown) and not any(
        "**soft** matching" in m.value for m in at.markdown
    )
    strict_nodes = _action_nodes(_gold_graph(at))
    assert strict_nodes[NODE] == Status.MISSED.value
    # one of the item's ten gold actions missed, as strict Action recall 0.9 says
    assert len(strict_nodes) == 10 and list(strict_nodes.values()).count(Status.MISSED.value) == 1


def test_the_matching_lives_in_the_address(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #30 (real-data review): the soft/strict choice was the one choice of the Items page not in its address, so a
    strict view could not be shared; ``matching`` is read from and written to the URL, an unknown value named."""
    sid = _sid(demo_db)
    at = page(
        demo_db,
        monkeypatch,
        "items",
        task="paged",
        split="dev",
        id=sid,
        item=ITEM,
        matching="strict",
    )
    assert at.radio(key="matching").value == "strict"
    assert any("**strict** matching" in m.value for m in at.markdown)
    assert _action_nodes(_gold_graph(at))[NODE] == Status.MISSED.value  # strict colours, as asked
    assert not at.warning

    at.radio(key="matching").set_value("soft").run()
    assert at.query_params["matching"] in (
        "soft",
        ["soft"],
    )  # the choice is written back to the address

    bad = page(
        demo_db,
        monkeypatch,
        "items",
        task="paged",
        split="dev",
        id=sid,
        item=ITEM,
        matching="fuzzy",
    )
    assert bad.radio(key="matching").value == "soft"
    assert any("Unknown matching" in w.value and "fuzzy" in w.value for w in bad.warning)

    plain = page(demo_db, monkeypatch, "items", task="paged", split="dev", id=sid, item=ITEM)
    assert "matching" not in plain.query_params  # the default adds nothing to the address
