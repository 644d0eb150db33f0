"""Aligned walks (``align`` blocks) and composed similarities (``on``, ``cases``, ``all``, ``at_least``).

PAGED's official lexical evaluation is declared in ``specs/paged.spec`` with them. The oracle is the
former Python counting (``tests/paged_reference.py``), an independent transcription of upstream's loop:
the declared walk must give the same count for every key, to the bit, on every real parity case and on
generated documents (hypothesis). Then the combinators against their definitions, and the checker's
refusals of a wrong align block or similarity block, each at its place with a hint.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl import SpecError, check_file
from procbench.api import load_task
from procbench.paths import SPECS_DIR
from procbench.runners.paged.lines import line_records
from procbench.runners.paged.parse import parse_text
from procbench.runners.paged.scoring import COUNTS, gold_spans, lexical_scorer
from procbench.runners.paged.similarities import Bleu1, LexicalF1, SameWords
from procbench.runners.paged.walk import lexical_walk
from procbench.runners.library.record_rules import AllOf, AtLeast, Cases, One, OnField
from procbench.runners.runtime.registry import get
from tests.paged_reference import score_document

CASES = [
    "gold_as_prediction",
    "perturbed",
    "sequential_baseline",
    "quirks",
]  # the parity cases on a split of the spec


def _reference(gold_text_spans: list, predicted_spans: list) -> dict[str, float]:  # type: ignore[type-arg]
    result = score_document(gold_text_spans, predicted_spans)
    return {
        **result.stats,
        "lines.p_aligned": result.aligned_predicted,
        "lines.r_aligned": result.aligned_gold,
    }


@pytest.mark.parametrize("case", CASES)
def test_the_spec_counts_what_the_former_python_counting_counts_on_every_parity_case(
    case: str, data_root: Path, parity_dir: Path
) -> None:
    _, runner = load_task("paged")
    gold, _ = runner.gold(data_root, "dev")
    predictions_path = parity_dir / "paged" / case / "predictions.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fixtures cover subsets and contain odd lines on purpose
        predictions = get("predictions", "paged.graph_text").fn(predictions_path, gold)
        evaluation = runner.evaluate(data_root, "dev", predictions_path)
    assert len(evaluation.items) == len(gold.items) > 0
    for item in evaluation.items:
        document = gold.items[item.item_id]
        expected = _reference(
            gold_spans(document.lines), list(parse_text(predictions.get(item.item_id) or "").spans)
        )
        walked = {key: item.values[key] for key in expected}
        assert walked == expected, (
            item.item_id
        )  # every count, == (the same additions in the same order)
    api = {
        item.item_id: item.values for item in lexical_scorer(gold, predictions)
    }  # the Python API builds the same walk
    for item in evaluation.items:
        assert all(
            api[item.item_id][key] == value for key, value in item.values.items() if key in COUNTS
        ), item.item_id


# Generated documents: lines over a small vocabulary, so that nodes recur, align, nearly match and repeat.
_ACTIVITIES = [
    "check the order",
    "check order",
    "check the order now",
    "ship goods",
    "ship the goods",
    "bill customer",
    "!!",
]
_ENDS = [
    *_ACTIVITIES,
    "Start",
    "End",
    "XOR1",
    "XOR2",
    "OR1",
    "AND1",
    "XOR1 (paid?)",
    "DataObject(invoice)",
    "TextAnnotation(in 2 days)",
    "",
]
_CONDITIONS = ["", "(if paid) ", "(if not paid) ", "(paid) "]
_LINE = st.builds(
    lambda h, c, t: f"{h} -> {c}{t}",
    st.sampled_from(_ENDS),
    st.sampled_from(_CONDITIONS),
    st.sampled_from(_ENDS),
)
_BLOCK = st.tuples(
    st.sampled_from(["For Clerk:", "For Sales clerk:", "For Manager:", ""]),
    st.lists(_LINE | st.just("a -> b -> c"), max_size=6),
)
_DOCUMENT = st.lists(_BLOCK, min_size=0, max_size=3).map(
    lambda blocks: "\n".join(line for header, lines in blocks for line in (header, *lines))
)


@settings(max_examples=300, deadline=None)
@given(gold=_DOCUMENT, predicted=_DOCUMENT)
def test_the_walk_counts_what_the_former_python_counting_counts_on_generated_documents(
    gold: str, predicted: str
) -> None:
    gold_side, predicted_side = list(parse_text(gold).spans), list(parse_text(predicted).spans)
    expected = _reference(gold_side, predicted_side)
    walked = lexical_walk()(line_records(gold_side), line_records(predicted_side))
    assert walked == expected
    # a similarity without a matrix of its own is scored pair by pair, each pass on its own: the same counts
    pairwise = dataclasses.replace(
        lexical_walk(), similarity=_PairwiseOnly(LexicalF1()), symmetric=False
    )
    assert pairwise(line_records(gold_side), line_records(predicted_side)) == expected


@dataclasses.dataclass(frozen=True)
class _PairwiseOnly:
    """A similarity that only scores pairs (no ``matrix``), delegating to ``inner``."""

    inner: LexicalF1
    name: str = "pairwise"

    def prepare(self, text: str) -> str:
        return self.inner.prepare(text)

    def score(self, a: str, b: str) -> float:
        return self.inner.score(a, b)


def test_the_walk_counts_a_document_against_itself_as_all_matched() -> None:
    text = "For Clerk:\nStart -> check the order\ncheck the order -> XOR1\nXOR1 -> (if paid) ship goods\nship goods -> DataObject(invoice)\nship goods -> End\n"
    spans = list(parse_text(text).spans)
    walked = lexical_walk()(line_records(spans), line_records(spans))
    for side in ("p", "r"):
        assert walked[f"lines.{side}_aligned"] == 5
        for kind in ("StartNode", "Activity", "XOR", "DataObject", "EndNode"):
            assert (
                walked[f"node.{kind}.{side}_correct"] == walked[f"node.{kind}.{side}_total"] > 0
            ), kind
        assert (
            walked[f"bleu_edge.ConditionFlow.{side}_sum"]
            == walked[f"bleu_edge.ConditionFlow.{side}_num"]
            == 1
        )


# -- the combinators against their definitions -------------------------------------------------------
_WORDS = st.sampled_from(["", "check the order", "check order", "ship goods", "the goods ship"])
_NODE = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["StartNode", "Activity", "XOR"]),
        "text": _WORDS,
        "actor": st.sampled_from(["", "Clerk"]),
    }
)


def _score(similarity: object, a: object, b: object) -> float:
    return similarity.score(similarity.prepare(a), similarity.prepare(b))  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(a=_NODE, b=_NODE, threshold=st.floats(0, 1))
def test_composed_similarities_follow_their_definitions(
    a: dict[str, str], b: dict[str, str], threshold: float
) -> None:
    words, bleu = SameWords(), Bleu1()
    text_bleu = OnField("text", bleu)
    assert _score(text_bleu, a, b) == bleu.score(
        a["text"], b["text"]
    )  # the first record's text is the hypothesis
    assert (
        _score(OnField("head", words), {"head": None}, {"head": a}) == 0.0
    )  # an absent member scores 0
    strict = Cases(("kind",), "kind", (("StartNode", One()),), OnField("text", words))
    expected = (
        0.0
        if a["kind"] != b["kind"]
        else 1.0
        if a["kind"] == "StartNode"
        else words.score(a["text"], b["text"])
    )
    assert _score(strict, a, b) == expected
    both = AllOf(("actor",), (strict, text_bleu))
    assert _score(both, a, b) == (
        0.0 if a["actor"] != b["actor"] else _score(strict, a, b) * _score(text_bleu, a, b)
    )
    assert _score(AllOf(("kind", "actor"), ()), a, b) == float(
        a["kind"] == b["kind"] and a["actor"] == b["actor"]
    )
    assert _score(AtLeast(text_bleu, threshold), a, b) == float(
        _score(text_bleu, a, b) >= threshold
    )
    assert 0.0 <= _score(both, a, b) <= 1.0


# -- the checker ---------------------------------------------------------------------------------------
def _error(tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    text = (SPECS_DIR / "paged.spec").read_text(encoding="utf-8")
    assert old in text, old
    edited = text.replace(old, new, 1)
    if (SPECS_DIR / "paged.reported").exists():
        shutil.copy(SPECS_DIR / "paged.reported", tmp_path / "paged.reported")
    path = tmp_path / "paged.spec"
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        check_file(path)
    report = str(raised.value)
    line = edited[: edited.index(new)].count("\n") + 1
    return report, f"paged.spec:{line}:"


# (text in the spec, its mistaken replacement, what the error says, the text of the line it is reported on: default the replacement's)
MISTAKES = [
    # a text similarity over a record member that is a record
    (
        "similarity condition_same { use = paged.same_words()  on = condition }",
        "similarity condition_same { use = paged.same_words()  on = head }",
        "paged.same_words() compares str, but the answers are record(",
    ),
    ("same     = [kind, actor]", "same     = [kind, actr]", "'actr'"),
    (
        "stats { sum = best(node_bleu)  num = 1 }",
        "stats { sum = best(node_bleu)  num = 2 }",
        "a number counts 1 per line or entity",
    ),
    (
        "count edge { by = flow  stats { total = 1  correct = flow_strict } }",
        "count edge { by = flow  stats { total = 1  correct = best(flow_strict) } }",
        "best() keeps",
    ),
    (
        "kinds = [Activity, StartNode, EndNode, DataObject, TextAnnotation]",
        "kinds = [Activity, StartNod]",
        "'StartNod'",
    ),
    (
        "count node { of = node  by = kind",
        "count node { of = nodes  by = kind",
        "unknown entities block",
    ),
    (
        "        kinds = [ConditionFlow]\n\n        stats { sum = condition_soft  num = 1 }",
        "        kinds = [ConditionFlow, SequenceFlow]\n\n        stats { total = 1  num = 1 }",
        "'bleu_edge.SequenceFlow.p_total', which another count block writes too",
        "count bleu_edge {",
    ),
    ("    otherwise = same_text\n", "", "needs `otherwise", "similarity node_strict {"),
    (
        "similarity head_strict { use = node_strict  on = head }",
        "similarity head_strict { use = head_strict  on = head }",
        "similarity cycle",
    ),
    ("      where      = parsed\n", "      where      = parsd\n", "'parsd'"),
    (
        "    when { StartNode = one()  EndNode = one()  OR = one() }",
        "    when { StartNod = one()  EndNode = one()  OR = one() }",
        "'StartNod'",
    ),
    (
        "      gold       = lines\n",
        "      gold       = line\n",
        "unknown score field 'line'",
    ),  # no error for each measure of its counts
]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m[2][:30] for m in MISTAKES])
def test_each_mistake_in_an_align_or_similarity_block_is_one_error_at_its_place(
    tmp_path: Path, mistake: tuple[str, ...]
) -> None:
    old, new, message, *at = mistake
    report, _ = _error(tmp_path, old, new)
    assert message in report, report
    assert len(re.findall(r"paged\.spec:\d+:\d+: error: ", report)) == 1, (
        report
    )  # one mistake, one error: nothing downstream of it
    located = re.search(
        r"paged\.spec:(\d+):\d+: error: .*\n *(\d+) \| (.*)\n *\^", report
    )  # file:line:col, the line, a caret
    assert located and located[1] == located[2], report
    assert (at[0] if at else new.strip().splitlines()[0]) in located[3], report


def test_a_misplaced_member_is_reported_with_file_line_column_caret_and_hint(
    tmp_path: Path,
) -> None:
    report, where = _error(
        tmp_path,
        "similarity same_text { use = paged.same_words()  on = text }",
        "similarity same_text { use = paged.same_words()  on = txt }",
    )
    assert where in report and "^" in report, report
    assert "'txt'" in report and "text" in report  # the members it could have meant


def test_check_accepts_the_shipped_paged_spec_and_it_declares_no_python_scorer() -> None:
    spec = check_file(SPECS_DIR / "paged.spec").spec
    assert (
        spec.score.scorer is None and spec.score.aggregate is None and spec.score.derive is not None
    )
    (align,) = spec.score.aligns
    assert {c.name for c in align.counts} >= {
        "node",
        "edge",
        "bleu_edge",
        "agent",
        "bleu_agent",
        "bleu_node",
        "bleu_node_once",
        "bleu_agent_once",
    }
    node = next(c for c in align.counts if c.name == "node")
    assert node.kinds == (
        "StartNode",
        "EndNode",
        "Activity",
        "XOR",
        "OR",
        "AND",
        "DataObject",
        "TextAnnotation",
    )  # from the enum
