"""Pair similarity functions: ``prepare`` each string once, then ``score`` (gold, prediction) pairs.

Splitting the work lets a matcher tokenise and count n-grams of every distinct string once per
item instead of once per pair.  The BLEU and ROUGE-L kernels reproduce the MS-COCO caption toolkit
(the variant OpenPI's official scorer uses); no maintained library computes that variant quickly,
so they are written here and tested against ``pycocoevalcap`` (the toolkit itself) as an oracle.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from runners.registry import component


class Similarity(Protocol):
    name: str

    def prepare(self, text: str) -> Any: ...

    def score(self, gold: Any, prediction: Any) -> float: ...


@dataclass(frozen=True)
class Exact:
    name: str = "exact"

    def prepare(self, text: str) -> Hashable:
        return text

    def score(self, gold: Any, prediction: Any) -> float:
        return 1.0 if gold == prediction else 0.0


@component("similarity", "exact")
def exact() -> Similarity:
    """1.0 when the (normalised) strings are equal, else 0.0."""
    return Exact()


@dataclass(frozen=True)
class _Ngrams:
    length: int
    counts: tuple[Counter[tuple[str, ...]], ...]


@dataclass(frozen=True)
class CocoBleu:
    """Cumulative BLEU-n of one hypothesis against one reference, as the COCO caption scorer computes it.

    Precisions carry the toolkit's epsilons ``(m + 1e-15) / (g + 1e-9)`` and the brevity penalty
    ``ratio = (len_hyp + 1e-15) / (len_ref + 1e-9)`` applies whenever ``ratio < 1`` (so also for
    equal lengths): a perfect two-token match scores 0.99999999875, a one-token match about 0.001.
    """

    n: int = 2
    tiny: float = 1e-15
    small: float = 1e-9
    name: str = "coco_bleu"

    def prepare(self, text: str) -> _Ngrams:
        words = text.split()
        counts = tuple(Counter(tuple(words[i : i + k]) for i in range(len(words) - k + 1)) for k in range(1, self.n + 1))
        return _Ngrams(len(words), counts)

    def score(self, gold: _Ngrams, prediction: _Ngrams) -> float:
        bleu = 1.0
        for k in range(self.n):
            hyp, ref = prediction.counts[k], gold.counts[k]
            correct = sum(min(c, ref.get(g, 0)) for g, c in hyp.items())
            guess = max(0, prediction.length - k)
            bleu *= (correct + self.tiny) / (guess + self.small)
        value = bleu ** (1.0 / self.n)
        ratio = (prediction.length + self.tiny) / (gold.length + self.small)
        if ratio < 1:
            value *= math.exp(1 - 1 / ratio)
        return value


@component("similarity", "coco_bleu")
def coco_bleu(n: int = 2) -> Similarity:
    """MS-COCO caption BLEU, cumulative up to ``n`` (OpenPI uses n = 2)."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return CocoBleu(n=n)


@dataclass(frozen=True)
class CocoRougeL:
    """ROUGE-L F-measure of the COCO caption toolkit: tokens split on single spaces, LCS, weight beta."""

    beta: float = 1.2
    name: str = "rouge_l"

    def prepare(self, text: str) -> tuple[str, ...]:
        return tuple(text.split(" "))

    def score(self, gold: tuple[str, ...], prediction: tuple[str, ...]) -> float:
        lcs = _lcs_length(prediction, gold)
        precision = lcs / float(len(prediction))
        recall = lcs / float(len(gold))
        if precision == 0 or recall == 0:
            return 0.0
        b2 = self.beta**2
        return ((1 + b2) * precision * recall) / float(recall + b2 * precision)


def _lcs_length(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


@component("similarity", "rouge_l")
def rouge_l(beta: float = 1.2) -> Similarity:
    """ROUGE-L F-measure (COCO caption toolkit), recall weighted by ``beta``."""
    return CocoRougeL(beta=beta)


@dataclass(frozen=True)
class TokenF1:
    """SQuAD-style bag-of-tokens F1."""

    name: str = "token_f1"

    def prepare(self, text: str) -> Counter[str]:
        return Counter(text.split())

    def score(self, gold: Counter[str], prediction: Counter[str]) -> float:
        common = sum((gold & prediction).values())
        if common == 0:
            return 0.0
        p, r = common / sum(prediction.values()), common / sum(gold.values())
        return 2 * p * r / (p + r)


@component("similarity", "token_f1")
def token_f1() -> Similarity:
    """Harmonic mean of token precision and recall over bags of whitespace tokens."""
    return TokenF1()




@dataclass(frozen=True)
class NltkBleu:
    """Sentence BLEU from NLTK with an explicit n-gram order, score kind and smoothing."""

    n: int = 4
    score_kind: str = "cumulative"  # or "individual": only the n-gram precision of order n
    smoothing: str = "none"
    name: str = "bleu"

    def prepare(self, text: str) -> list[str]:
        return text.split()

    def score(self, gold: list[str], prediction: list[str]) -> float:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

        if not gold or not prediction:
            return 0.0
        weights = tuple([1.0 / self.n] * self.n) if self.score_kind == "cumulative" else tuple([0.0] * (self.n - 1) + [1.0])
        smoother = None if self.smoothing == "none" else getattr(SmoothingFunction(), self.smoothing)
        import warnings

        with warnings.catch_warnings():  # NLTK warns on zero n-gram overlaps; a zero is the answer
            warnings.simplefilter("ignore")
            return float(sentence_bleu([gold], prediction, weights=weights, smoothing_function=smoother))


@component("similarity", "bleu")
def bleu(
    n: int = 4,
    *,
    score: Literal["cumulative", "individual"] = "cumulative",
    smoothing: Literal["none", "method1", "method2", "method3", "method4", "method5", "method6", "method7"] = "none",
) -> Similarity:
    """NLTK sentence BLEU of order ``n`` (brevity penalty against the single reference's length).

    ``score = "individual"`` keeps only the order-n precision (PAGED's BLEU-1 is ``bleu(1)``);
    ``smoothing`` names one of NLTK's SmoothingFunction methods.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    return NltkBleu(n=n, score_kind=score, smoothing=smoothing)
