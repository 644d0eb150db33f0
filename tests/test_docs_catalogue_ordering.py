"""docs/pure-spec-tasks.md, ordering and ranking in spec alone: StepDeps (Kendall τ-b, Spearman, exact order,
precedence constraints) and ToolRank (MRR, NDCG@k, recall@k).

Each number ``procbench score --json`` prints is compared with its oracle computed here from the guide's own
files: scipy's ``kendalltau``/``spearmanr`` on the two rank vectors, list equality, the precedence pairs checked
directly and every linear extension of the constraints enumerated by brute force, scikit-learn's ``ndcg_score``,
and the reciprocal rank and recall written out.  Hypothesis then checks the precedence and ranking metrics
against the same oracles on generated inputs, and the documented difference from scikit-learn's NDCG is measured.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from sklearn.metrics import ndcg_score
from typer.testing import CliRunner

from procbench.cli import app
from procbench.runners.runtime import registry
from procbench.runners.runtime.predictions import FieldType
from tests import catalogue

TASKS = ("stepdeps", "toolrank")


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> catalogue.Guide:
    return catalogue.extracted(tmp_path_factory, "catalogue-ordering")


_rows = catalogue.rows


def _score(root: Path, task: str) -> dict[str, float]:
    return catalogue.scored(root, task)["metrics"]


def _pairs(
    root: Path, task: str, gold_key: str, prediction_key: str
) -> tuple[list[Any], list[Any]]:
    gold = _rows(root / "data" / task / "test.jsonl")
    predicted = {r["id"]: r[prediction_key] for r in _rows(root / "predictions" / f"{task}.jsonl")}
    return [g[gold_key] for g in gold], [predicted[g["id"]] for g in gold]


@pytest.mark.parametrize("task", TASKS)
def test_each_spec_checks_against_its_data_and_is_formatted(
    guide: catalogue.Guide, task: str
) -> None:
    catalogue.assert_checks_and_is_formatted(guide[0], task)


# -- the oracles ----------------------------------------------------------------------------------------


def rank_vectors(gold: list[Any], predicted: list[Any]) -> tuple[list[int], list[int]]:
    """Each gold item's position in the gold ordering and in the predicted one."""
    return [gold.index(v) for v in gold], [predicted.index(v) for v in gold]


def linear_extensions(pairs: list[list[Any]]) -> set[tuple[Any, ...]]:
    """Every order of the constrained items that keeps each [before, after] pair, by brute force."""
    items = sorted({v for pair in pairs for v in pair}, key=str)
    return {
        order
        for order in itertools.permutations(items)
        if all(order.index(a) < order.index(b) for a, b in pairs)
    }


def kept_share(pairs: list[list[Any]], order: list[Any]) -> float:
    unique = {tuple(p) for p in pairs}
    return sum(order.index(a) < order.index(b) for a, b in unique) / len(unique) if unique else 1.0


def consistent(pairs: list[list[Any]], order: list[Any]) -> float:
    constrained = {v for pair in pairs for v in pair}
    return (
        1.0
        if not pairs or tuple(v for v in order if v in constrained) in linear_extensions(pairs)
        else 0.0
    )


def reciprocal_rank(relevant: list[Any], ranking: list[Any]) -> float:
    return next((1 / rank for rank, v in enumerate(ranking, 1) if v in relevant), 0.0)


def sklearn_ndcg_every_candidate(relevant: list[Any], ranking: list[Any], k: int | None) -> float:
    """scikit-learn's ndcg_score as one would call it on every candidate: the ranked ones scored by rank, the
    relevant ones the ranking leaves out tied below them (scikit-learn averages the gains of tied documents)."""
    left_out = [v for v in relevant if v not in ranking]
    truth = [1.0 if v in relevant else 0.0 for v in ranking] + [1.0] * len(left_out)
    scores = [float(len(ranking) - i) for i in range(len(ranking))] + [0.0] * len(left_out)
    if len(truth) < 2:
        truth, scores = truth + [0.0], scores + [-1.0]
    return float(ndcg_score([truth], [scores], k=k))


def sklearn_ndcg_left_out_below_cut(relevant: list[Any], ranking: list[Any], k: int) -> float:
    """The same, with each relevant item the ranking leaves out placed below rank k (docs/metrics.md, Rankings)."""
    cutoff = k or max(
        len(ranking), len(relevant)
    )  # no cut: deep enough for the ranking and for the ideal one
    left_out = [v for v in relevant if v not in ranking]
    truth = (
        [1.0 if v in relevant else 0.0 for v in ranking]
        + [0.0] * max(0, cutoff - len(ranking))
        + [1.0] * len(left_out)
    )
    truth += [0.0] * max(0, 2 - len(truth))
    if cutoff == 0 or not any(truth):
        return 0.0
    return float(ndcg_score([truth], [list(range(len(truth), 0, -1))], k=cutoff))


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


# -- the guide's numbers ---------------------------------------------------------------------------------


def test_orderings_equal_scipy_and_the_precedence_transcription(guide: catalogue.Guide) -> None:
    root, expected = guide
    golds, predicted = _pairs(root, "stepdeps", "steps", "steps")
    constraints, _ = _pairs(root, "stepdeps", "after", "steps")
    want = {
        "kendall": mean(
            [
                scipy_stats.kendalltau(*rank_vectors(g, p)).statistic
                for g, p in zip(golds, predicted)
            ]
        ),
        "spearman": mean(
            [scipy_stats.spearmanr(*rank_vectors(g, p)).statistic for g, p in zip(golds, predicted)]
        ),
        "exact": mean([float(g == p) for g, p in zip(golds, predicted)]),
        "kept": mean([kept_share(c, p) for c, p in zip(constraints, predicted)]),
        "kept_consistent": mean([consistent(c, p) for c, p in zip(constraints, predicted)]),
    }
    got = _score(root, "stepdeps")
    assert got == pytest.approx(want, abs=1e-9)
    assert got == pytest.approx(json.loads(expected["stepdeps"]), abs=1e-6)
    # the guide's point: two orders other than the reference keep every constraint, which τ does not credit fully
    assert want["kept_consistent"] > want["exact"] and want["kendall"] < want["kept"]


def test_rankings_equal_scikit_learn_and_the_transcriptions(guide: catalogue.Guide) -> None:
    root, expected = guide
    relevant, rankings = _pairs(root, "toolrank", "tools", "ranking")
    want = {
        "mrr": mean([reciprocal_rank(g, p) for g, p in zip(relevant, rankings)]),
        "ndcg3": mean([sklearn_ndcg_every_candidate(g, p, 3) for g, p in zip(relevant, rankings)]),
        "recall3": mean(
            [len(set(g) & set(p[:3])) / len(set(g)) for g, p in zip(relevant, rankings)]
        ),
    }
    got = _score(root, "toolrank")
    assert got == pytest.approx(want, abs=1e-9)
    assert got == pytest.approx(json.loads(expected["toolrank"]), abs=1e-6)


def test_a_cycle_in_the_gold_constraints_is_an_error_at_its_line(
    guide: catalogue.Guide, tmp_path: Path
) -> None:
    root, _ = guide
    data = tmp_path / "data" / "stepdeps"
    data.mkdir(parents=True)
    lines = (root / "data" / "stepdeps" / "test.jsonl").read_text().splitlines()
    broken = json.loads(lines[1])
    broken["after"].append(
        ["tighten the nuts", "loosen the nuts"]
    )  # loosen < jack < ... < tighten < loosen
    (data / "test.jsonl").write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    args = [
        "score",
        str(root / "specs" / "stepdeps.spec"),
        "--split",
        "test",
        "--predictions",
        str(root / "predictions" / "stepdeps.jsonl"),
    ]
    result = CliRunner().invoke(app, [*args, "--data-dir", str(tmp_path / "data"), "--json"])
    assert result.exit_code != 0
    assert "stepdeps/test.jsonl:2" in result.output and "cycle" in result.output


def test_a_ranking_that_repeats_a_tool_is_refused_naming_it(
    guide: catalogue.Guide, tmp_path: Path
) -> None:
    root, _ = guide
    predictions = tmp_path / "toolrank.jsonl"
    rows = _rows(root / "predictions" / "toolrank.jsonl")
    rows[4]["ranking"] = ["plunger", "bucket", "plunger"]
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = [
        "score",
        str(root / "specs" / "toolrank.spec"),
        "--split",
        "test",
        "--predictions",
        str(predictions),
    ]
    result = CliRunner().invoke(app, [*args, "--data-dir", str(root / "data"), "--json"])
    assert result.exit_code != 0
    assert "toolrank.jsonl:5" in result.output and "repeated 'plunger'" in result.output


# -- the metrics on generated inputs -------------------------------------------------------------------

POOL = ["a", "b", "c", "d", "e", "f", "g"]


def metric(name: str, gold: str, prediction: str, **kwargs: Any) -> Any:
    return (
        registry.get("metric", name)
        .build(**kwargs)
        .declared(FieldType.parse(gold), FieldType.parse(prediction), "mean")
    )


@st.composite
def constrained_orders(draw: st.DrawFn) -> tuple[list[list[str]], list[str]]:
    items = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=6, unique=True))
    hidden = draw(st.permutations(items))  # pairs taken along a hidden order: never a cycle
    pairs = [[a, b] for i, a in enumerate(hidden) for b in hidden[i + 1 :] if draw(st.booleans())]
    return pairs, draw(st.permutations(items))


@settings(max_examples=150, deadline=None)
@given(constrained_orders())
def test_precedence_equals_the_pairs_and_the_linear_extensions(
    case: tuple[list[list[str]], list[str]],
) -> None:
    pairs, order = case
    kept, all_kept = metric("precedence", "list(list(str))", "ordering(str)").item(
        pairs, order, "mean"
    )
    assert kept == pytest.approx(kept_share(pairs, order), abs=1e-12)
    assert all_kept == consistent(pairs, order)


@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    return draw(st.lists(st.sampled_from(POOL), max_size=4, unique=True)), draw(
        st.lists(st.sampled_from(POOL), max_size=7, unique=True)
    )


@settings(max_examples=150, deadline=None)
@given(rankings(), st.integers(0, 8))
def test_ranking_metrics_equal_scikit_learn_and_the_transcriptions(
    case: tuple[list[str], list[str]], k: int
) -> None:
    relevant, ranking = case
    (ndcg,) = metric("ndcg", "set(str)", "ordering(str)", k=k).item(relevant, ranking, "mean")
    assert ndcg == pytest.approx(sklearn_ndcg_left_out_below_cut(relevant, ranking, k), abs=1e-9)
    if relevant and 0 < k <= len(
        ranking
    ):  # every relevant item left out already sits below the cut: the two calls agree
        assert ndcg == pytest.approx(sklearn_ndcg_every_candidate(relevant, ranking, k), abs=1e-9)
    (rr,) = metric("mrr", "set(str)", "ordering(str)").item(relevant, ranking, "mean")
    assert rr == pytest.approx(reciprocal_rank(relevant, ranking), abs=1e-12)
    if k:
        (recall,) = metric("recall_at", "set(str)", "ordering(str)", k=k).item(
            relevant, ranking, "mean"
        )
        assert recall == pytest.approx(
            len(set(relevant) & set(ranking[:k])) / len(relevant) if relevant else 0.0, abs=1e-12
        )


def test_the_documented_difference_from_scikit_learn_on_every_candidate() -> None:
    """A ranking shorter than k that leaves a relevant item out: scikit-learn on every candidate credits the item (tied last)."""
    relevant, ranking = ["b", "d"], ["a", "b", "c"]
    (ours,) = metric("ndcg", "set(str)", "ordering(str)", k=5).item(relevant, ranking, "mean")
    every = sklearn_ndcg_every_candidate(relevant, ranking, 5)
    assert ours == pytest.approx(sklearn_ndcg_left_out_below_cut(relevant, ranking, 5), abs=1e-12)
    # 'd' gets the gain of rank 4 in scikit-learn's call: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3)) against (1/log2(3)) / (1 + 1/log2(3))
    assert every - ours == pytest.approx(
        (1 / 2.321928094887362) / (1 + 1 / 1.584962500721156), abs=1e-9
    )
