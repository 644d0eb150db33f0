"""The metric library of measure blocks against its oracles: scikit-learn, sacrebleu, rouge-score, scipy.

Every number is compared with the library called directly on the same inputs (never with values
the library code under test produced), over random inputs (hypothesis) and on subsets, since a
slice or a bootstrap resample reduces the statistics of a subset of items.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from scipy import stats as scipy_stats
from sklearn import metrics as skm

from procbench.runners.runtime import registry
from procbench.runners.runtime.predictions import FieldType

CLASSES = ["entail", "neutral", "contradict"]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "fast", "slowly", "red", ",", "."]

labels = st.sampled_from(CLASSES)
pairs = st.lists(st.tuples(labels, labels), min_size=1, max_size=40)
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
nonempty_sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)


def metric(name: str, **kwargs):
    return registry.get("metric", name).build(**kwargs)


def declared(m, spelled: str, aggregate: str = "mean"):
    """The metric as a measure over two fields declared ``spelled`` computes (the declared type fixes the meaning)."""
    ftype = FieldType.parse(spelled)
    return m.declared(ftype, ftype, aggregate)


def reduce(m, golds, preds, aggregate):
    return m.reduce([m.item(g, p, aggregate) for g, p in zip(golds, preds)], aggregate)


# -- classification = scikit-learn ------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(pairs, st.sampled_from(["micro", "macro", "weighted"]))
def test_precision_recall_f1_equal_scikit_learn(data, average):
    golds, preds = [g for g, _ in data], [p for _, p in data]
    p, r, f, _ = skm.precision_recall_fscore_support(
        golds, preds, labels=CLASSES, average=average, zero_division=0
    )
    assert reduce(metric("prf", labels=CLASSES), golds, preds, average) == pytest.approx(
        (p, r, f), abs=1e-12
    )
    assert reduce(metric("f1", labels=CLASSES), golds, preds, average) == pytest.approx(
        (f,), abs=1e-12
    )
    assert reduce(metric("precision", labels=CLASSES), golds, preds, average) == pytest.approx(
        (p,), abs=1e-12
    )
    assert reduce(metric("recall", labels=CLASSES), golds, preds, average) == pytest.approx(
        (r,), abs=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(pairs)
def test_per_class_f1_accuracy_and_confusion_equal_scikit_learn(data):
    golds, preds = [g for g, _ in data], [p for _, p in data]
    expected = skm.f1_score(golds, preds, labels=CLASSES, average=None, zero_division=0)
    assert reduce(metric("f1", labels=CLASSES), golds, preds, "per_class") == pytest.approx(
        tuple(expected), abs=1e-12
    )
    assert reduce(metric("accuracy"), golds, preds, "mean") == pytest.approx(
        (skm.accuracy_score(golds, preds),), abs=1e-12
    )
    matrix = skm.confusion_matrix(golds, preds, labels=CLASSES)
    assert reduce(metric("confusion", labels=CLASSES), golds, preds, "sum") == tuple(
        float(v) for row in matrix for v in row
    )


@settings(max_examples=40, deadline=None)
@given(pairs)
def test_class_metric_properties(data):
    golds, preds = [g for g, _ in data], [p for _, p in data]
    for average in ("micro", "macro", "weighted"):
        (f,) = reduce(metric("f1", labels=CLASSES), golds, preds, average)
        assert 0.0 <= f <= 1.0
        # F1 of each class is symmetric in gold and prediction (false positives and negatives swap)
    swapped = reduce(metric("f1", labels=CLASSES), preds, golds, "per_class")
    assert swapped == pytest.approx(
        reduce(metric("f1", labels=CLASSES), golds, preds, "per_class"), abs=1e-12
    )
    assert reduce(metric("f1", labels=CLASSES), golds, golds, "macro")[0] == pytest.approx(
        skm.f1_score(golds, golds, labels=CLASSES, average="macro", zero_division=0)
    )
    assert reduce(metric("accuracy"), golds, golds, "mean") == (1.0,)


def test_prediction_outside_the_classes_counts_as_scikit_learn_counts_it():
    golds, preds = ["entail", "neutral", "entail"], ["entail", "maybe", None]
    sk_preds = ["entail", "maybe", "none"]
    for average in ("micro", "macro", "weighted"):
        expected = skm.f1_score(golds, sk_preds, labels=CLASSES, average=average, zero_division=0)
        assert reduce(metric("f1", labels=CLASSES), golds, preds, average) == pytest.approx(
            (expected,), abs=1e-12
        )


def test_gold_outside_the_classes_is_an_error():
    with pytest.raises(ValueError, match="not one of the declared classes"):
        metric("f1", labels=CLASSES).item("maybe", "entail", "macro")


# -- generation = sacrebleu, rouge-score ----------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(nonempty_sentence, sentence), min_size=1, max_size=15))
def test_corpus_bleu_chrf_ter_equal_sacrebleu(data):
    refs, hyps = [r for r, _ in data], [h for _, h in data]
    assert reduce(metric("corpus_bleu"), refs, hyps, "corpus")[0] * 100 == pytest.approx(
        sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9
    )
    assert reduce(metric("chrf"), refs, hyps, "corpus")[0] * 100 == pytest.approx(
        sacrebleu.corpus_chrf(hyps, [refs]).score, abs=1e-9
    )
    assert reduce(metric("chrf", word_order=2), refs, hyps, "corpus")[0] * 100 == pytest.approx(
        sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score, abs=1e-9
    )
    assert reduce(metric("ter"), refs, hyps, "corpus")[0] * 100 == pytest.approx(
        sacrebleu.corpus_ter(hyps, [refs]).score, abs=1e-9
    )


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(nonempty_sentence, nonempty_sentence, sentence), min_size=1, max_size=10))
def test_corpus_bleu_with_two_references_equals_sacrebleu(data):
    first, second, hyps = ([d[i] for d in data] for i in range(3))
    ours = reduce(metric("corpus_bleu"), [[a, b] for a, b in zip(first, second)], hyps, "corpus")[0]
    assert ours * 100 == pytest.approx(sacrebleu.corpus_bleu(hyps, [first, second]).score, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(nonempty_sentence, sentence)
def test_sentence_bleu_and_rouge_equal_their_libraries(ref, hyp):
    assert metric("sentence_bleu").item(ref, hyp, "mean")[0] * 100 == pytest.approx(
        sacrebleu.sentence_bleu(hyp, [ref]).score, abs=1e-9
    )
    for variant in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        expected = rouge_scorer.RougeScorer([variant]).score(ref, hyp)[variant]
        assert metric("rouge", variant=variant).item(ref, hyp, "mean") == pytest.approx(
            (expected.fmeasure,), abs=1e-12
        )
        assert metric("rouge", variant=variant, score="recall").item(
            ref, hyp, "mean"
        ) == pytest.approx((expected.recall,), abs=1e-12)
    stemmed = (
        rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(ref, hyp)["rougeL"].fmeasure
    )
    assert metric("rouge", use_stemmer=True).item(ref, hyp, "mean") == pytest.approx(
        (stemmed,), abs=1e-12
    )


def test_generation_identity_and_bounds():
    ref = "the cat sat on the mat with a red dog"
    assert reduce(metric("corpus_bleu"), [ref], [ref], "corpus") == pytest.approx((1.0,), abs=1e-12)
    assert reduce(metric("ter"), [ref], [ref], "corpus") == (0.0,)
    assert metric("rouge").item(ref, ref, "mean") == (1.0,)
    assert metric("exact_match").item([ref, "x"], ref, "mean") == (1.0,)
    assert metric("exact_match").item(ref, None, "mean") == (0.0,)


# -- ordering and grading = scipy -----------------------------------------------------------------

numbers = st.lists(
    st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 3)), min_size=2, max_size=20
)


def scipy_or_zero(value: float) -> float:
    """The library's NaN (constant input) is 0.0 by the library's documented convention."""
    return 0.0 if math.isnan(value) else value


@settings(max_examples=50, deadline=None)
@given(numbers, st.randoms(use_true_random=False))
def test_correlations_equal_scipy_per_item_and_across_items(xs, rnd):
    ys = [x + rnd.uniform(-50, 50) if rnd.random() < 0.7 else x for x in xs]
    for name, fn in (
        ("kendall_tau", lambda a, b: scipy_stats.kendalltau(a, b).statistic),
        ("spearman", lambda a, b: scipy_stats.spearmanr(a, b).statistic),
        ("pearson", lambda a, b: scipy_stats.pearsonr(a, b).statistic),
    ):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = scipy_or_zero(fn(xs, ys))
        assert declared(metric(name), "list(float)").item(xs, ys, "mean") == pytest.approx(
            (expected,), abs=1e-9
        )
        assert reduce(metric(name), xs, ys, "corpus") == pytest.approx((expected,), abs=1e-9)
        # symmetric in gold and prediction
        assert reduce(metric(name), ys, xs, "corpus") == pytest.approx((expected,), abs=1e-9)
    tau_c = scipy_or_zero(scipy_stats.kendalltau(xs, ys, variant="c").statistic)
    assert declared(metric("kendall_tau", variant="c"), "list(float)").item(
        xs, ys, "mean"
    ) == pytest.approx((tau_c,), abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.permutations(["mix", "bake", "cool", "slice", "serve", "wash"]))
def test_kendall_tau_over_step_orderings(predicted):
    gold = ["mix", "bake", "cool", "slice", "serve", "wash"]
    positions = [predicted.index(step) for step in gold]
    expected = scipy_stats.kendalltau(list(range(len(gold))), positions).statistic
    (tau,) = declared(metric("kendall_tau"), "ordering(str)").item(gold, predicted, "mean")
    assert tau == pytest.approx(expected, abs=1e-12)
    assert -1.0 <= tau <= 1.0
    assert declared(metric("exact_order"), "ordering(str)").item(gold, predicted, "mean") == (
        (1.0,) if predicted == gold else (0.0,)
    )


def test_a_partial_ordering_is_invalid_not_scored_silently():
    gold = ["a", "b", "c", "d"]
    tau = declared(metric("kendall_tau"), "ordering(str)")
    assert (
        tau.invalid(gold, ["b", "a"]) == "not a permutation of the gold's items: missing 'c', 'd'"
    )
    assert tau.invalid(gold, ["b", "a", "c", "d"]) is None
    with pytest.raises(ValueError, match="not a permutation"):
        tau.item(gold, ["b", "a"], "mean")


# -- heavy libraries stay out of tasks that do not use them -----------------------------------------


HEAVY = ("nltk", "sklearn", "scipy", "sacrebleu", "rouge_score")


def _heavy_modules_after(code: str) -> list[str]:
    """Which heavy libraries a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport sys, json; print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    return json.loads(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )


def test_importing_the_library_imports_no_metric_backend():
    assert _heavy_modules_after("import procbench.runners.metrics") == []


def test_building_every_metric_imports_no_generation_backend_until_it_computes():
    # building (as check and compile do) must not load sacrebleu or rouge-score: only computing does
    loaded = _heavy_modules_after(
        "from procbench.runners.runtime import registry\nfor name in registry.names('metric'): registry.get('metric', name).build()"
    )
    assert not {"sacrebleu", "rouge_score"} & set(loaded)


def test_scoring_a_task_without_propara_never_imports_nltk_or_scikit_learn():
    # every component module is imported when the registry loads; ProPara's NLTK (which pulls SciPy and
    # scikit-learn) must wait until ProPara scores
    code = (
        "from procbench.api import load_task\n"
        "from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR\n"
        "_, runner = load_task('paradise-tip')\n"
        "runner.evaluate(SAMPLE_DATA_ROOT, 'test', sorted((SAMPLE_SUBMISSIONS_DIR / 'paradise-tip').glob('*.jsonl'))[0])"
    )
    assert _heavy_modules_after(code) == []


def test_the_stems_a_process_keeps_are_bounded() -> None:
    """A long-lived process stems every new token it is given: its memo keeps the most recent STEM_MEMO_SIZE words."""
    from procbench.runners.library import text

    stem = text._stemmer("porter", "nltk_extensions")
    assert stem.cache_info().maxsize == text.STEM_MEMO_SIZE  # type: ignore[attr-defined]
    assert stem("running") == "run" and stem("states") == "state"  # NLTK's Porter, through the memo
