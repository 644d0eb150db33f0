"""OpenPI kernels against the COCO caption toolkit (pycocoevalcap) and metric properties."""

from __future__ import annotations

import contextlib
import io
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.library.matching import BestMatch, PairScorer
from procbench.runners.library.similarity import CocoBleu, CocoRougeL, Exact, TokenF1
from procbench.runners.library.text import (
    Pipeline,
    delete_chars,
    drop_words,
    lowercase,
    squeeze_whitespace,
    stem,
    strip,
)

bleu_oracle = pytest.importorskip("pycocoevalcap.bleu.bleu")
rouge_oracle = pytest.importorskip("pycocoevalcap.rouge.rouge")

WORDS = [
    "oven",
    "rack",
    "racks",
    "hot",
    "cold",
    "water",
    "pan",
    "in",
    "on",
    "sink",
    "the",
    "a",
    "dry",
    "wet",
    "x",
]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
answers = st.lists(sentence, max_size=5)

CONTENT = Pipeline.of(
    [
        strip(),
        lowercase(),
        delete_chars(string.punctuation),
        squeeze_whitespace(),
        drop_words(["and", "was", "is", "before", "afterwards", "after", "of"]),
    ]
)
STEMMED = Pipeline.of(
    [strip(), lowercase(), delete_chars(string.punctuation), squeeze_whitespace(), stem()]
)


def _quiet(fn, *args):  # pycocoevalcap prints a line per call
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


@given(sentence, sentence)
def test_bleu_kernel_equals_pycocoevalcap(gold: str, pred: str) -> None:
    kernel = CocoBleu(n=2)
    ours = kernel.score(kernel.prepare(gold), kernel.prepare(pred))
    theirs = _quiet(bleu_oracle.Bleu(4).compute_score, {0: [gold]}, {0: [pred]})[0][1]
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


@given(sentence, sentence)
def test_rouge_kernel_equals_pycocoevalcap(gold: str, pred: str) -> None:
    kernel = CocoRougeL(beta=1.2)
    ours = kernel.score(kernel.prepare(gold), kernel.prepare(pred))
    theirs = rouge_oracle.Rouge().calc_score([pred], [gold])
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


SIMILARITIES = [Exact(), CocoBleu(n=2), CocoRougeL(beta=1.2), TokenF1()]


@pytest.mark.parametrize("similarity", SIMILARITIES, ids=lambda s: s.name)
@given(gold=answers, pred=answers, dedup=st.booleans())
def test_prf_within_bounds(similarity, gold: list[str], pred: list[str], dedup: bool) -> None:
    prf = BestMatch(dedup=dedup)(gold, pred, PairScorer(similarity, CONTENT, STEMMED))
    for value in (prf.precision, prf.recall, prf.f1):
        assert 0.0 <= value <= 1.0 + 1e-12


@pytest.mark.parametrize(
    "similarity", [Exact(), CocoRougeL(beta=1.2), TokenF1()], ids=lambda s: s.name
)
@given(gold=answers)
def test_predictions_equal_to_gold_score_one(similarity, gold: list[str]) -> None:
    prf = BestMatch()(gold, list(gold), PairScorer(similarity, CONTENT, STEMMED))
    assert (prf.precision, prf.recall, prf.f1) == pytest.approx((1.0, 1.0, 1.0))


@given(gold=answers)
def test_bleu_of_gold_is_one_up_to_the_official_epsilons(gold: list[str]) -> None:
    multi = [
        g for g in gold if len(CONTENT(g).split()) >= 2
    ]  # one-token BLEU-2 is ~0.001 by design
    prf = BestMatch()(multi, list(multi), PairScorer(CocoBleu(n=2), CONTENT, STEMMED))
    assert prf.f1 == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("similarity", [Exact(), TokenF1()], ids=lambda s: s.name)
@given(gold=answers, pred=answers)
def test_swapping_gold_and_predictions_swaps_precision_and_recall(
    similarity, gold: list[str], pred: list[str]
) -> None:
    # Holds for symmetric similarities (BLEU and ROUGE-L with beta != 1 are not symmetric).
    pairs = PairScorer(similarity, CONTENT, STEMMED)
    forward, backward = BestMatch()(gold, pred, pairs), BestMatch()(pred, gold, pairs)
    if gold and pred:
        assert forward.precision == pytest.approx(backward.recall)
        assert forward.recall == pytest.approx(backward.precision)
        assert forward.f1 == pytest.approx(backward.f1)


@pytest.mark.parametrize("similarity", SIMILARITIES, ids=lambda s: s.name)
@given(gold=answers, pred=answers, data=st.data())
def test_order_of_answers_does_not_matter(
    similarity, gold: list[str], pred: list[str], data
) -> None:
    pairs = PairScorer(similarity, CONTENT, STEMMED)
    shuffled_gold = data.draw(st.permutations(gold))
    shuffled_pred = data.draw(st.permutations(pred))
    a, b = BestMatch()(gold, pred, pairs), BestMatch()(shuffled_gold, shuffled_pred, pairs)
    assert (a.precision, a.recall, a.f1) == pytest.approx((b.precision, b.recall, b.f1), abs=1e-12)
