"""Every library metric × every declared input type: ``check`` refuses the spec (at the measure, with a hint), or the number equals the oracle.

The walk reads the metric registry, so a metric added later is walked too: it needs an entry in
:data:`ORACLES` (its spec arguments, the gold/prediction types it is meant for, and its oracle, a library
or an independent transcription called on the same values); a metric without one fails
:func:`test_every_registered_metric_has_an_oracle` with a message saying what to add.

An accepted combination is scored through the checked spec's own plan (so through the declared types,
``Metric.declared``), on Hypothesis-generated items, and compared with the oracle to 1e-9.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from hashlib import sha256
from typing import Any

import numpy as np
import pytest
import sacrebleu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from scipy import stats as scipy_stats
from sklearn import metrics as skm
from sklearn.preprocessing import MultiLabelBinarizer

from procbench.dsl.checker import check_text
from procbench.dsl.compiler import plan_of
from procbench.dsl.errors import SpecError
from procbench.dsl.plan import _measure_stage
from procbench.runners.runtime import registry
from procbench.runners.runtime._types import GoldSet, ItemScore
from procbench.runners.metrics import Measures
from tests.test_docs_catalogue_library import best

TYPES = (
    "str",
    "int",
    "float",
    "bool",
    'enum("a", "b", "c")',
    "list(str)",
    "list(int)",
    "list(float)",
    "ordering(str)",
    "ordering(int)",
    "set(str)",
)
CLASSES = ("a", "b", "c")
WORDS = ("a", "b", "c", "mix", "bake", "the", "oven", "dough")

SPEC = """task walk {
  title   = "walk"
  version = "1"
  primary = PRIMARY

  data {
    splits = [test]

    source rows { format = "jsonl"  path = "walk/{split}.jsonl" }

    id     = rows.id

    fields { g: GOLD = rows.g }
  }

  predictions { format = "jsonl"  schema { id = str  p = PRED } }

  score {
    measure m { metric = CALL  gold = g  prediction = p  aggregate = "AGGREGATE" }
  }
}
"""
MEASURE_LINE = (
    SPEC.splitlines().index(
        '    measure m { metric = CALL  gold = g  prediction = p  aggregate = "AGGREGATE" }'
    )
    + 1
)

Oracle = Callable[[list[Any], list[Any], str, dict[str, Any]], Sequence[float]]


@dataclass(frozen=True)
class Entry:
    """How the walk calls a metric: its spec arguments, the (gold, prediction) types it is meant for, its oracle."""

    oracle: Oracle
    call: str = ""  # the arguments in the spec: 'labels = ["a", "b", "c"]'
    kwargs: dict[str, Any] = field(default_factory=dict)  # the same, as the oracle takes them
    meant_for: tuple[
        tuple[str, str], ...
    ] = ()  # (gold, prediction) types beyond TYPES × TYPES on the diagonal


# -- oracles: each a library called directly, or a transcription of a definition ------------------------


def _nan0(value: float) -> float:
    """docs/language.md, metric library: a library's NaN (constant input) is stored as 0.0."""
    return 0.0 if value is None or math.isnan(value) else float(value)


def _quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _total(values: Sequence[float], aggregate: str) -> list[float]:
    return [float(sum(values))] if aggregate == "sum" else [_mean(values)]


def _ranks(ordering: Sequence[Any]) -> dict[Any, int]:
    return {v: i for i, v in enumerate(ordering)}


def _correlation(fn: Callable[..., Any]) -> Oracle:
    def oracle(
        golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], gold_type: str
    ) -> list[float]:
        if aggregate == "corpus":
            return [_nan0(_quiet(fn, golds, preds, **kw).statistic) if len(golds) > 1 else 0.0]
        values = []
        for g, p in zip(golds, preds):
            if gold_type.startswith(
                "ordering("
            ):  # two orderings: scipy on the rank vectors of the items
                rank_g, rank_p = _ranks(g), _ranks(p)
                x, y = [rank_g[v] for v in g], [rank_p[v] for v in g]
            else:
                x, y = g, p
            values.append(_nan0(_quiet(fn, x, y, **kw).statistic) if len(x) > 1 else 0.0)
        return [_mean(values)]

    return oracle


def _classes(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], which: str
) -> list[float]:
    labels = list(kw["labels"])
    if aggregate == "per_class":
        p, r, f, _ = skm.precision_recall_fscore_support(
            golds, preds, labels=labels, average=None, zero_division=0
        )
        scores = {"precision": p, "recall": r, "f1": f}
        if which == "prf":
            return [float(v) for trio in zip(p, r, f) for v in trio]
        return [float(v) for v in scores[which]]
    p, r, f, _ = skm.precision_recall_fscore_support(
        golds, preds, labels=labels, average=aggregate, zero_division=0
    )
    return [p, r, f] if which == "prf" else [{"precision": p, "recall": r, "f1": f}[which]]


def _sacre(kind: str) -> Oracle:
    def oracle(
        golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
    ) -> list[float]:
        refs = [[g] if isinstance(g, str) else g for g in golds]
        width = max(len(r) for r in refs)
        streams = [[r[i] if i < len(r) else None for r in refs] for i in range(width)]
        if kind == "sentence_bleu":
            return _total(
                [sacrebleu.sentence_bleu(p, r).score / 100 for p, r in zip(preds, refs)], aggregate
            )
        scorer = {
            "bleu": sacrebleu.metrics.BLEU(),
            "chrf": sacrebleu.metrics.CHRF(),
            "ter": sacrebleu.metrics.TER(),
        }[kind]
        return [scorer.corpus_score(preds, streams).score / 100]

    return oracle


@cache
def _rouge(kind: str) -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer([kind], use_stemmer=False)


def _rouge_oracle(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    scorer = _rouge("rougeL")
    values = []
    for g, p in zip(golds, preds):
        refs = [g] if isinstance(g, str) else g
        values.append(max(scorer.score(r, p)["rougeL"].fmeasure for r in refs) if refs else 0.0)
    return _total(values, aggregate)


def token_f1_plain(prediction: str, reference: str) -> float:
    """SQuAD's token F1 without its normalisation (token_f1() normalises only through the measure's normaliser)."""
    predicted, wanted = prediction.split(), reference.split()
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def _binary(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    g = [v for gold in golds for v in gold]
    p = [v for pred in preds for v in pred]
    tn, fp, fn, tp = skm.confusion_matrix(g, p, labels=[False, True]).ravel() if g else (0, 0, 0, 0)
    total = tp + tn + fp + fn
    return [(tp + tn) / total if total else 0.0]


def _answers(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    """docs/metrics.md, answer outcomes: a matching answer is a TP, any other one a FP (aligned lists, no TN)."""
    tp = sum(
        1
        for gold, pred in zip(golds, preds)
        for g, p in zip(gold, pred)
        if p is not None and p == g
    )
    fp = sum(
        1
        for gold, pred in zip(golds, preds)
        for g, p in zip(gold, pred)
        if p is not None and p != g
    )
    fn = sum(1 for gold, pred in zip(golds, preds) for g, p in zip(gold, pred) if p is None)
    total = tp + fp + fn
    return [tp / total if total else 0.0]


def _set_prf(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    texts = any(isinstance(v, str) for values in [*golds, *preds] for v in values)
    unused = (
        ["\0", "\1"] if texts else [-1, -2]
    )  # classes no item has: scikit-learn sees a multilabel matrix even when every set is empty
    binarise = MultiLabelBinarizer().fit([*golds, *preds, unused])
    average = "samples" if aggregate == "mean" else "micro"
    p, r, f, _ = skm.precision_recall_fscore_support(
        binarise.transform(golds), binarise.transform(preds), average=average, zero_division=0
    )
    return [p, r, f]


def _win_rate(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    """docs/metrics.md, pairwise preference: a win counts 1, a tie ``tie_credit`` (0.5 by default), a loss 0."""
    credit = kw.get("tie_credit", 0.5)
    return [
        _mean([1.0 if p > g else credit if p == g else 0.0 for g, p in zip(golds, preds)]),
        _mean([1.0 if p == g else 0.0 for g, p in zip(golds, preds)]),
    ]


def _exact_order(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    return _total([1.0 if list(p) == list(g) else 0.0 for g, p in zip(golds, preds)], aggregate)


def _linear_extensions(pairs: list[list[Any]]) -> set[tuple[Any, ...]]:
    """Every order of the constrained items that keeps each [before, after] pair: brute force over permutations."""
    import itertools

    items = sorted({v for pair in pairs for v in pair}, key=str)
    return {
        o for o in itertools.permutations(items) if all(o.index(a) < o.index(b) for a, b in pairs)
    }


def _precedence(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    kept, consistent = [], []
    for pairs, order in zip(golds, preds):
        unique = [list(t) for t in dict.fromkeys(tuple(p) for p in pairs)]
        at = _ranks(order)
        kept.append(sum(at[a] < at[b] for a, b in unique) / len(unique) if unique else 1.0)
        restricted = tuple(v for v in order if any(v in pair for pair in unique))
        consistent.append(1.0 if not unique or restricted in _linear_extensions(unique) else 0.0)
    return [_mean(kept), _mean(consistent)]


def _reciprocal_rank(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    return [
        _mean(
            [
                next((1 / (i + 1) for i, v in enumerate(p) if v in set(g)), 0.0)
                for g, p in zip(golds, preds)
            ]
        )
    ]


def sklearn_ndcg(relevant: set[Any], ranking: list[Any], k: int) -> float:
    """scikit-learn's ndcg_score over the ranked items followed by the relevant ones the ranking leaves out, placed below rank k.

    docs/metrics.md, rankings: an item the ranking leaves out is never credited; with k = 0 the cut lies below both the ranking and the ideal ranking.
    """
    cutoff = k or max(
        len(ranking), len(relevant)
    )  # no cut: deep enough for the ranking and for the ideal one
    left_out = [v for v in relevant if v not in ranking]
    truth = (
        [1.0 if v in relevant else 0.0 for v in ranking]
        + [0.0] * max(0, cutoff - len(ranking))
        + [1.0] * len(left_out)
    )
    truth += [0.0] * max(
        0, 2 - len(truth)
    )  # scikit-learn wants two documents; an irrelevant last one changes nothing
    if cutoff == 0 or not any(truth):
        return 0.0
    return float(skm.ndcg_score([truth], [list(range(len(truth), 0, -1))], k=cutoff))


def _ndcg(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    return [_mean([sklearn_ndcg(set(g), list(p), kw.get("k", 0)) for g, p in zip(golds, preds)])]


def _recall_at(
    golds: list[Any], preds: list[Any], aggregate: str, kw: dict[str, Any], *_: Any
) -> list[float]:
    k = kw["k"]
    return [
        _mean([len(set(g) & set(p[:k])) / len(set(g)) if g else 0.0 for g, p in zip(golds, preds)])
    ]


ORACLES: dict[str, Entry] = {
    "accuracy": Entry(
        lambda g, p, a, kw, *_: _total([1.0 if x == y else 0.0 for x, y in zip(g, p)], a)
    ),
    "confusion": Entry(
        lambda g, p, a, kw, *_: [
            float(v) for v in skm.confusion_matrix(g, p, labels=list(kw["labels"])).ravel()
        ],
        'labels = ["a", "b", "c"]',
        {"labels": CLASSES},
    ),
    "f1": Entry(
        lambda g, p, a, kw, *_: _classes(g, p, a, kw, "f1"),
        'labels = ["a", "b", "c"]',
        {"labels": CLASSES},
    ),
    "precision": Entry(
        lambda g, p, a, kw, *_: _classes(g, p, a, kw, "precision"),
        'labels = ["a", "b", "c"]',
        {"labels": CLASSES},
    ),
    "recall": Entry(
        lambda g, p, a, kw, *_: _classes(g, p, a, kw, "recall"),
        'labels = ["a", "b", "c"]',
        {"labels": CLASSES},
    ),
    "prf": Entry(
        lambda g, p, a, kw, *_: _classes(g, p, a, kw, "prf"),
        'labels = ["a", "b", "c"]',
        {"labels": CLASSES},
    ),
    "exact_match": Entry(
        lambda g, p, a, kw, *_: _total(
            [best(squad_exact_raw, y, [x] if isinstance(x, str) else x) for x, y in zip(g, p)], a
        )
    ),
    "sentence_bleu": Entry(_sacre("sentence_bleu")),
    "corpus_bleu": Entry(_sacre("bleu")),
    "chrf": Entry(_sacre("chrf")),
    "ter": Entry(_sacre("ter")),
    "rouge": Entry(_rouge_oracle),
    "token_f1": Entry(
        lambda g, p, a, kw, *_: _total(
            [best(token_f1_plain, y, [x] if isinstance(x, str) else x) for x, y in zip(g, p)], a
        )
    ),
    "set_prf": Entry(_set_prf),
    "win_rate": Entry(_win_rate),
    "binary_outcomes": Entry(_binary, meant_for=(("list(bool)", "list(bool)"),)),
    "answer_outcomes": Entry(_answers),
    "set_outcomes": Entry(lambda g, p, a, kw, *_: [], meant_for=()),
    "kendall_tau": Entry(_correlation(scipy_stats.kendalltau)),
    "spearman": Entry(_correlation(scipy_stats.spearmanr)),
    "pearson": Entry(_correlation(scipy_stats.pearsonr)),
    "exact_order": Entry(_exact_order),
    "precedence": Entry(_precedence, meant_for=(("list(list(str))", "ordering(str)"),)),
    "mrr": Entry(
        _reciprocal_rank, meant_for=(("set(str)", "ordering(str)"), ("set(int)", "ordering(int)"))
    ),
    "ndcg": Entry(_ndcg, "k = 3", {"k": 3}, meant_for=(("set(str)", "ordering(str)"),)),
    "recall_at": Entry(_recall_at, "k = 2", {"k": 2}, meant_for=(("set(str)", "ordering(str)"),)),
}


def squad_exact_raw(prediction: str, ground_truth: str) -> float:
    """exact_match() without a normaliser: plain string equality."""
    return float(prediction == ground_truth)


# -- the walk -----------------------------------------------------------------------------------------


def _metric_names() -> list[str]:
    return sorted(registry.names("metric"))


def _cases() -> list[tuple[str, str, str, str]]:
    cases = []
    for name in _metric_names():
        metric = (
            registry.get("metric", name).build(**ORACLES[name].kwargs) if name in ORACLES else None
        )
        if metric is None:
            continue
        pairs = [(t, t) for t in TYPES] + list(ORACLES[name].meant_for)
        cases += [(name, aggregate, g, p) for aggregate in metric.aggregations for g, p in pairs]
    return cases


# A class metric's labels as the declared type's values (scikit-learn compares the values themselves).
LABELS_BY_TYPE: dict[str, tuple[Any, ...]] = {
    "int": (0, 1, 2),
    "float": (0, 1, 2),
    "bool": ("false", "true"),
}
VALUES_BY_TYPE: dict[str, tuple[Any, ...]] = {
    "int": (0, 1, 2),
    "float": (0.0, 1.0, 2.0),
    "bool": (False, True),
}


def kwargs_for(name: str, gold: str) -> tuple[str, dict[str, Any]]:
    """The metric's spec arguments and the oracle's keyword arguments; a class set of the gold type's values."""
    entry = ORACLES[name]
    if "labels" not in entry.kwargs:
        return entry.call, dict(entry.kwargs)
    labels = LABELS_BY_TYPE.get(gold, CLASSES)
    spelled = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in labels)
    values = VALUES_BY_TYPE.get(gold, CLASSES)
    return f"labels = [{spelled}]", {**entry.kwargs, "labels": list(values)}


def spec_text(name: str, aggregate: str, gold: str, prediction: str) -> str:
    call, _ = kwargs_for(name, gold)
    built = (
        {**ORACLES[name].kwargs, "labels": list(LABELS_BY_TYPE.get(gold, CLASSES))}
        if "labels" in ORACLES[name].kwargs
        else ORACLES[name].kwargs
    )
    metric = registry.get("metric", name).build(**built)
    primary = metric.outputs("m", aggregate)[0]
    spec = SPEC
    for key, value in (
        ("PRIMARY", primary),
        ("GOLD", gold),
        ("PRED", prediction),
        ("CALL", f"{name}({call})"),
        ("AGGREGATE", aggregate),
    ):
        spec = spec.replace(key, value)
    return spec


def test_every_registered_metric_has_an_oracle() -> None:
    missing = [name for name in _metric_names() if name not in ORACLES]
    assert not missing, (
        f"metric(s) {', '.join(missing)} have no entry in tests/test_metric_types.py ORACLES: add Entry(oracle, call, kwargs, meant_for) "
        "with the library call (or a transcription) that computes the same number, so the walk over declared types covers them"
    )


@cache
def checked(name: str, aggregate: str, gold: str, prediction: str) -> Any:
    """The checked spec, or the SpecError that refuses it."""
    try:
        return check_text(spec_text(name, aggregate, gold, prediction), "walk.spec").spec
    except SpecError as exc:
        return exc


# -- data for an accepted combination -------------------------------------------------------------------

word = st.sampled_from(WORDS)
number = st.floats(-50, 50, allow_nan=False).map(lambda v: round(v, 2))


def _scalar(spelled: str, classes: bool = False) -> st.SearchStrategy[Any]:
    if classes:
        return st.sampled_from(VALUES_BY_TYPE.get(spelled, CLASSES))
    return {"str": word, "int": st.integers(0, 4), "float": number, "bool": st.booleans()}.get(
        spelled, st.sampled_from(CLASSES)
    )


@st.composite
def _pair(draw: st.DrawFn, gold: str, prediction: str, classes: bool = False) -> tuple[Any, Any]:
    """One item's (gold, prediction) of the declared types, shaped as the metric expects (equal lengths, permutations)."""
    if gold.startswith("ordering(") or (
        gold.startswith("set(") and prediction.startswith("ordering(")
    ):
        pool = list(range(8)) if "int" in gold else list(WORDS)
        if gold.startswith("ordering("):
            items = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6, unique=True))
            return items, draw(st.permutations(items))
        relevant = draw(st.lists(st.sampled_from(pool), max_size=4, unique=True))
        return relevant, draw(st.lists(st.sampled_from(pool), max_size=6, unique=True))
    if gold == "list(list(str))":
        items = draw(st.lists(word, min_size=1, max_size=5, unique=True))
        hidden = draw(
            st.permutations(items)
        )  # constraints drawn along a hidden order cannot form a cycle
        pairs = [
            [a, b] for i, a in enumerate(hidden) for b in hidden[i + 1 :] if draw(st.booleans())
        ]
        extra = draw(st.lists(word.filter(lambda w: w not in items), max_size=2, unique=True))
        return pairs, draw(st.permutations(items + extra))
    if gold.startswith("set("):  # repeats allowed: a set's duplicates mean nothing
        return draw(st.lists(word, max_size=5)), draw(st.lists(word, max_size=5))
    if gold.startswith("list("):
        inner = gold[5:-1]
        values = draw(st.lists(_scalar(inner), min_size=0, max_size=6))
        same = st.lists(_scalar(inner), min_size=len(values), max_size=len(values))
        return values, draw(same)
    return draw(_scalar(gold, classes)), draw(_scalar(prediction, classes))


def _score(spec: Any, pairs: list[tuple[Any, Any]]) -> tuple[dict[str, float], Any]:
    plan = plan_of(spec, sha256(b"walk").hexdigest())
    stage = _measure_stage(plan["measures"][0])
    gold = GoldSet({f"i{n}": {"g": g} for n, (g, _) in enumerate(pairs)})
    predictions = {f"i{n}": {"id": f"i{n}", "p": p} for n, (_, p) in enumerate(pairs)}
    measures = Measures((stage,))
    per_item = measures.score(gold, predictions)
    return measures.aggregate([ItemScore(i, v) for i, v in per_item.items()]), stage


@pytest.mark.parametrize(("name", "aggregate", "gold", "prediction"), _cases())
def test_refused_at_the_measure_with_a_hint_or_equal_to_the_oracle(
    name: str, aggregate: str, gold: str, prediction: str
) -> None:
    got = checked(name, aggregate, gold, prediction)
    if isinstance(got, SpecError):
        errors = [d for d in got.diagnostics if d.severity == "error"]
        assert errors, got
        first = errors[0]
        assert first.span.line == MEASURE_LINE, first.render(
            spec_text(name, aggregate, gold, prediction)
        )
        assert first.span.column > 1 and first.hint and not first.hint.endswith(": "), first.render(
            spec_text(name, aggregate, gold, prediction)
        )
        return
    if name == "set_outcomes":
        pytest.skip(
            "set_outcomes reads records with an out_of member, which no declared type of the walk gives"
        )
    _agrees(got, name, aggregate, gold, prediction)


def _agrees(spec: Any, name: str, aggregate: str, gold: str, prediction: str) -> None:
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(_pair(gold, prediction, "labels" in ORACLES[name].kwargs), min_size=2, max_size=8)
    )
    def compare(pairs: list[tuple[Any, Any]]) -> None:
        got, stage = _score(spec, pairs)
        expected = ORACLES[name].oracle(
            [g for g, _ in pairs], [p for _, p in pairs], aggregate, kwargs_for(name, gold)[1], gold
        )
        assert list(got.values()) == pytest.approx([float(v) for v in expected], abs=1e-9), (
            name,
            aggregate,
            gold,
            prediction,
            pairs,
            got,
        )

    compare()


def test_the_issues_case_list_int_kendall_is_refused_and_ordering_int_equals_scipy() -> None:
    refused = checked("kendall_tau", "mean", "list(int)", "list(int)")
    assert isinstance(refused, SpecError)
    message = refused.render() if hasattr(refused, "render") else str(refused)
    assert "walk.spec:%d:" % MEASURE_LINE in message and "ordering(int)" in message
    spec = checked("kendall_tau", "mean", "ordering(int)", "ordering(int)")
    golds = [[2, 0, 1, 3], [0, 1, 2], [3, 1, 0, 2, 4]]
    preds = [[0, 2, 1, 3], [2, 1, 0], [3, 0, 1, 4, 2]]
    got, _ = _score(spec, list(zip(golds, preds)))
    # scipy's tau-b per item over the rank vectors (each item's gold position, its predicted position), averaged
    expected = np.mean(
        [
            scipy_stats.kendalltau([g.index(v) for v in g], [p.index(v) for v in g]).statistic
            for g, p in zip(golds, preds)
        ]
    )
    positional = np.mean([scipy_stats.kendalltau(g, p).statistic for g, p in zip(golds, preds)])
    assert got["m"] == pytest.approx(expected, abs=1e-12)
    assert (
        abs(expected - positional) > 0.1
    )  # the two readings differ on this data: the declared type decides which


def test_a_walk_case_counts_both_outcomes() -> None:
    """The walk is not vacuous: some cases are refused, others computed."""
    outcomes = Counter(isinstance(checked(*case), SpecError) for case in _cases())
    assert outcomes[True] > 20 and outcomes[False] > 20, outcomes
