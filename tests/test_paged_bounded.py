"""PAGED's bounded soft scores (issue #16, item 2): each node counted once, at its best BLEU-1.

The official soft actor and element scores add a node's BLEU-1 each time a not-yet-matched node is
compared again while counting the node once (docs/metrics.md §5.4, item 5), so they can exceed 1.
``paged.lexical()`` also emits ``bleu_node_once.*`` / ``bleu_agent_once.*`` counts and the spec
declares ``<name>_bounded`` measures over them. Checked here: a document built by hand where a node
is compared three times (values worked out by hand), bit-equality with the official sums wherever no
node is compared twice (on the real dev split, instrumented), and [0, 1] on every scored submission.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from procbench.dsl.compiler import plan_of
from procbench.dsl.plan import _walk as built_walk
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.library import alignment
from procbench.runners import baselines
from procbench.runners.runtime._types import ItemScore
from procbench.runners.paged.lines import line_records
from procbench.runners.paged.parse import Span, parse_text
from procbench.runners.paged.scoring import gold_spans
from procbench.runners.paged.walk import ACTIONS, BLEU_NODES, lexical_walk
from procbench.runners.runtime.registry import get

SIDES = ("p", "r")

SOFT = ("actor", "action", "data_constraint", "action_constraint")
BOUNDED = [f"{name}_bounded{suffix}" for name in SOFT for suffix in ("", "_p", "_r")]
OFFICIAL = [f"{name}{suffix}" for name in SOFT for suffix in ("", "_p", "_r")]
FAMILIES = (("bleu_node", BLEU_NODES), ("bleu_agent", ACTIONS))
PARITY_CASES = (
    "gold_as_prediction",
    "perturbed",
    "sequential_baseline",
    "quirks",
)  # the ones on the dev split

# One actor, one head node on three lines. The prediction says "check the order now" where the gold says
# "check the order", and "Clerk" where the gold says "Sales clerk": the head is never matched strictly,
# so each of its three lines compares it again.
GOLD = "For Sales clerk:\ncheck the order -> ship goods\ncheck the order -> pack goods\ncheck the order -> bill customer\n"
PREDICTED = "For Clerk:\ncheck the order now -> ship goods\ncheck the order now -> pack goods\ncheck the order now -> bill customer\n"


def _by_hand() -> dict[str, float]:
    """BLEU-1 (4 decimals, 'the' dropped): hypothesis [check, order, now] vs [check, order] = 2/3 -> 0.6667; the reverse
    1 x exp(1 - 3/2) -> 0.6065; actor [clerk] vs [sales, clerk] = exp(1 - 2) -> 0.3679, the reverse 1/2 -> 0.5.
    Four Activity nodes a side (the head, three tails that match exactly: 1 each)."""
    return {
        "bleu_node.Activity.p_sum": 3 * 0.6667 + 3,  # official: the head added three times
        "bleu_node_once.Activity.p_sum": 0.6667
        + 3,  # bounded: once, its best (all three are equal)
        "bleu_node.Activity.r_sum": 3 * 0.6065 + 3,
        "bleu_node_once.Activity.r_sum": 0.6065 + 3,
        "bleu_agent.Activity.p_sum": 6 * 0.3679,  # three comparisons of the head, one of each tail
        "bleu_agent_once.Activity.p_sum": 4 * 0.3679,
        "bleu_agent.Activity.r_sum": 6 * 0.5,
        "bleu_agent_once.Activity.r_sum": 4 * 0.5,
    }


def test_the_walk_these_tests_count_with_is_the_one_the_spec_declares() -> None:
    """``lexical_walk()`` (the Python API) and the spec's align block build equal walks: every similarity, threshold and tally."""
    spec, runner = load_task("paged")
    how, walks = plan_of(spec, runner.spec_digest)["scorer"]
    assert how == "aligns"
    assert [built_walk(walk) for walk in walks] == [lexical_walk()]


def test_a_node_compared_three_times_counts_once_at_its_best_score() -> None:
    stats = _walk(parse_text(GOLD).spans, parse_text(PREDICTED).spans)
    for key, value in _by_hand().items():
        assert stats[key] == pytest.approx(value, abs=1e-9), key
    for side in SIDES:
        for family in ("bleu_node", "bleu_agent"):
            assert (
                stats[f"{family}_once.Activity.{side}_num"]
                == stats[f"{family}.Activity.{side}_num"]
                == 4
            )


def test_the_spec_declares_the_bounded_scores_over_those_counts() -> None:
    stats = _walk(parse_text(GOLD).spans, parse_text(PREDICTED).spans)
    _, runner = load_task("paged")
    values = runner.aggregate([ItemScore("hand", stats)])
    assert values["action_p"] == 1.25  # round(5.0001 / 4, 4): the official precision is above 1
    assert values["action_bounded_p"] == 0.9167  # round(3.6667 / 4, 4)
    assert values["action_bounded_r"] == 0.9016  # round(3.6065 / 4, 4)
    assert values["action_bounded"] == pytest.approx(
        2 * 0.91667 * 0.90163 / (0.91667 + 0.90163), abs=1e-4
    )  # F1 of the unrounded pair
    assert (
        values["actor_p"] == pytest.approx(6 * 0.3679 / 4, abs=1e-4)
        and values["actor_bounded_p"] == 0.3679
    )
    assert values["actor_r"] == 0.75 and values["actor_bounded_r"] == 0.5


def test_without_a_repeated_comparison_the_bounded_sums_are_the_official_ones() -> None:
    text = "For Clerk:\ncheck the order -> ship goods\nship goods -> DataObject(invoice)\n"
    stats = _walk(
        parse_text(text).spans, parse_text(text.replace("invoice", "the invoice copy")).spans
    )
    for key, value in stats.items():
        if "_once." in key:
            assert value == stats[key.replace("_once.", ".")], key
    assert stats["bleu_node_once.DataObject.p_sum"] < 1  # the data object was compared, not matched


@contextmanager
def _comparisons() -> Iterator[Counter[int]]:
    """How often each registered node is compared, by the node's identity (the scorer's own comparisons, counted)."""
    seen: Counter[int] = Counter()
    original = alignment._Pass._compare

    def counting(self, entities, entity, record, other):  # type: ignore[no-untyped-def]
        seen[id(entity)] += 1
        return original(self, entities, entity, record, other)

    alignment._Pass._compare = counting  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        alignment._Pass._compare = original  # type: ignore[method-assign]


def test_on_the_real_dev_split_bounded_equals_official_exactly_where_no_node_is_compared_twice(
    data_root: Path, parity_dir: Path
) -> None:
    _, runner = load_task("paged")
    gold, _ = runner.gold(data_root, "dev")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        predictions = get("predictions", "paged.graph_text").fn(
            parity_dir / "paged" / "perturbed" / "predictions.jsonl", gold
        )
    once_only = repeated = 0
    for item_id, document in gold.items.items():
        with _comparisons() as seen:
            stats = _walk(
                gold_spans(document.lines), parse_text(predictions.get(item_id) or "").spans
            )
        keys = [
            f"{family}.{t}.{side}_sum"
            for side in SIDES
            for family, types in FAMILIES
            for t in types
        ]
        if max(seen.values(), default=0) <= 1:
            once_only += 1
            assert all(stats[k.replace(".", "_once.", 1)] == stats[k] for k in keys), item_id
        else:
            repeated += 1
            assert all(stats[k.replace(".", "_once.", 1)] <= stats[k] + 1e-9 for k in keys), item_id
        for k in keys:
            assert (
                0
                <= stats[k.replace(".", "_once.", 1)]
                <= stats[k.replace(".", "_once.", 1).replace("_sum", "_num")] + 1e-9
            ), (item_id, k)
    assert once_only and repeated  # both kinds of document occur on dev


def _walk(
    gold: list[Span] | tuple[Span, ...], predicted: list[Span] | tuple[Span, ...]
) -> dict[str, float]:
    """The declared walk's counts of one document (the spec's align block, as the Python API builds it)."""
    return lexical_walk()(line_records(gold), line_records(predicted))


def _check_bounded(metrics: dict[str, float], where: str) -> None:
    for name in BOUNDED:
        assert 0.0 <= metrics[name] <= 1.0, (where, name, metrics[name])
    for name in (
        SOFT
    ):  # never above the official value: a node's best score is at most the sum of its scores
        assert (
            metrics[f"{name}_bounded_p"] <= metrics[f"{name}_p"]
            and metrics[f"{name}_bounded_r"] <= metrics[f"{name}_r"]
        ), (where, name)


@pytest.mark.parametrize("case", PARITY_CASES)
def test_bounded_scores_stay_within_one_on_the_real_dev_split(
    case: str, data_root: Path, parity_dir: Path
) -> None:
    _, runner = load_task("paged")
    evaluation = runner.evaluate(
        data_root, "dev", parity_dir / "paged" / case / "predictions.jsonl"
    )
    _check_bounded(evaluation.metrics, case)
    for label, by_value in evaluation.slices.items():
        for value, result in by_value.items():
            _check_bounded(result.metrics, f"{case} {label}={value}")
    if case in (
        "perturbed",
        "sequential_baseline",
    ):  # the official actor score is above 1 there; the bounded one is not
        assert evaluation.metrics["actor"] > 1.0 >= evaluation.metrics["actor_bounded"]


def test_bounded_scores_stay_within_one_for_the_sentence_chain_baseline_on_real_dev(
    data_root: Path, tmp_path: Path
) -> None:
    _, runner = load_task("paged")
    gold, _ = runner.gold(data_root, "dev")
    chosen = baselines.get("paged-sentence-chain")
    path = chosen.write(
        baselines.BaselineInput(data_root, "paged", "dev", gold.items), tmp_path / "chain.jsonl"
    )
    _check_bounded(runner.evaluate(data_root, "dev", path).metrics, "sentence chain")


def test_bounded_scores_stay_within_one_on_every_sample_submission() -> None:
    _, runner = load_task("paged")
    for path in sorted((SAMPLE_SUBMISSIONS_DIR / "paged").glob("*.jsonl")):
        evaluation = runner.evaluate(SAMPLE_DATA_ROOT, "dev", path)
        _check_bounded(evaluation.metrics, path.name)
        assert all(name in evaluation.metrics for name in OFFICIAL)
    careful = runner.evaluate(
        SAMPLE_DATA_ROOT, "dev", SAMPLE_SUBMISSIONS_DIR / "paged" / "careful-extractor.jsonl"
    ).metrics
    assert (
        careful["actor"] > 1.0 and careful["actor_bounded"] == 1.0
    )  # the 104.97 %, bounded
