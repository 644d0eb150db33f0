"""Pair similarity functions: ``prepare`` each string once, then ``score`` (gold, prediction) pairs.

Splitting the work lets a matcher tokenise and count n-grams of every distinct string once per
item instead of once per pair.  The BLEU and ROUGE-L kernels reproduce the MS-COCO caption toolkit
(the variant OpenPI's official scorer uses); no maintained library computes that variant quickly,
so they are written here and tested against ``pycocoevalcap`` (the toolkit itself) as an oracle.

A similarity may also offer a *pair kernel* (``kernel()``): it encodes each distinct string once
into integer arrays and scores many (gold, prediction) pairs at a time with numpy.  The kernels
compute only integer statistics in numpy (clipped n-gram matches, LCS lengths); the float value of
each distinct statistic is then computed by the same scalar formula ``score`` uses, so batch and
scalar scores are bit-identical.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal


from procbench.runners.library.protocols import PairKernel, Similarity  # noqa: F401 - re-exported
from procbench.runners.runtime.registry import component

if TYPE_CHECKING:
    import numpy as np
else:  # imported on first use: see procbench.runners.runtime.lazy_numpy
    from procbench.runners.runtime.lazy_numpy import np


def _values_of_statistics(
    statistics: Sequence[np.ndarray], value: Callable[..., float]
) -> np.ndarray:
    """``value(*row)`` for every row of non-negative integer statistics, computed once per distinct row."""
    columns = [np.asarray(column, dtype=np.int64) for column in statistics]
    if not len(columns[0]):
        return np.zeros(0, dtype=np.float64)
    stacked = np.stack(columns, axis=1)
    bases = [int(column.max()) + 1 for column in columns]
    if math.prod(bases) < 2**62:
        # one int64 key per row (mixed radix) makes finding the distinct rows a fast 1-d sort
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for column, base in zip(columns, bases):
            key = key * base + column
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        rows = stacked[first]
    else:  # huge statistics (very long texts): the slower row-wise unique
        rows, inverse = np.unique(stacked, axis=0, return_inverse=True)
    table = np.array([value(*row) for row in rows.tolist()], dtype=np.float64)
    return table[inverse.reshape(-1)]


class _Vocabulary:
    """Token -> dense integer id, growing as new tokens are seen."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}

    def __call__(self, token: Any) -> int:
        found = self.ids.get(token)
        if found is None:
            found = self.ids[token] = len(self.ids)
        return found

    def __len__(self) -> int:
        return len(self.ids)


class _ExactKernel:
    """Equal strings have equal indices (the matcher indexes distinct similarity inputs)."""

    def extend(self, texts: Sequence[str]) -> None:
        return None

    def score_pairs(self, gold: np.ndarray, prediction: np.ndarray) -> np.ndarray:
        return (gold == prediction).astype(np.float64)


@dataclass(frozen=True)
class Exact:
    name: str = "exact"

    def prepare(self, text: str) -> Hashable:
        return text

    def score(self, gold: Any, prediction: Any) -> float:
        return 1.0 if gold == prediction else 0.0

    def kernel(self) -> PairKernel:
        return _ExactKernel()


@component("similarity", "exact", takes="str", gives="float")
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
        counts = tuple(
            Counter(tuple(words[i : i + k]) for i in range(len(words) - k + 1))
            for k in range(1, self.n + 1)
        )
        return _Ngrams(len(words), counts)

    def score(self, gold: _Ngrams, prediction: _Ngrams) -> float:
        corrects = [
            sum(min(c, gold.counts[k].get(g, 0)) for g, c in prediction.counts[k].items())
            for k in range(self.n)
        ]
        return self.value(prediction.length, gold.length, *corrects)

    def value(self, hypothesis_length: int, reference_length: int, *corrects: int) -> float:
        """BLEU-n from the clipped k-gram matches of each order and the two lengths."""
        bleu = 1.0
        for k in range(self.n):
            guess = max(0, hypothesis_length - k)
            bleu *= (corrects[k] + self.tiny) / (guess + self.small)
        value = bleu ** (1.0 / self.n)
        ratio = (hypothesis_length + self.tiny) / (reference_length + self.small)
        if ratio < 1:
            value *= math.exp(1 - 1 / ratio)
        return value

    def kernel(self) -> PairKernel:
        return _BleuKernel(self)


class _GrowingCsr:
    """Rows of int64 values appended over time, materialised as CSR arrays (offsets, flat values) on demand.

    Materialising converts only the rows appended since the last time.
    """

    def __init__(self) -> None:
        self.pending: list[int] = []
        self.pending_sizes: list[int] = []
        self.offsets = np.zeros(1, dtype=np.int64)
        self.flat = np.zeros(0, dtype=np.int64)

    def append(self, row: Iterable[int]) -> None:
        before = len(self.pending)
        self.pending.extend(row)
        self.pending_sizes.append(len(self.pending) - before)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self.pending_sizes:
            sizes = np.asarray(self.pending_sizes, dtype=np.int64)
            self.offsets = np.concatenate([self.offsets, self.offsets[-1] + np.cumsum(sizes)])
            self.flat = np.concatenate([self.flat, np.asarray(self.pending, dtype=np.int64)])
            self.pending, self.pending_sizes = [], []
        return self.offsets, self.flat


class _CountTable:
    """Per string, its distinct ids with non-negative int64 values; looked up by key ``string << 32 | id``."""

    def __init__(self) -> None:
        self._keys = _GrowingCsr()
        self._values = _GrowingCsr()
        self._strings = 0
        self._sorted: tuple[np.ndarray, np.ndarray] = (
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )

    def append(self, values: dict[int, int]) -> None:
        base = self._strings << 32
        self._keys.append([base | i for i in values])
        self._values.append(values.values())
        self._strings += 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, keys, values) row by row, then (keys, values) ascending by key for lookups."""
        done = len(self._keys.flat)
        offsets, keys = self._keys.arrays()
        _, values = self._values.arrays()
        if len(keys) > done:  # new strings have larger keys: sort only the new part
            order = np.argsort(keys[done:], kind="stable") + done
            self._sorted = (
                np.concatenate([self._sorted[0], keys[order]]),
                np.concatenate([self._sorted[1], values[order]]),
            )
        return offsets, keys, values, *self._sorted


def _counts(values: list[Any]) -> dict[Any, int]:
    counts: dict[Any, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def _explode(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For CSR ``offsets`` and a row per pair: (pair of each entry, position of each entry)."""
    starts, sizes = offsets[rows], offsets[rows + 1] - offsets[rows]
    pair = np.repeat(np.arange(len(rows), dtype=np.int64), sizes)
    first = np.cumsum(sizes) - sizes
    position = np.arange(len(pair), dtype=np.int64) - first[pair] + starts[pair]
    return pair, position


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at ``wanted`` in the sorted ``keys``, 0 where absent."""
    if not len(keys):
        return np.zeros(len(wanted), dtype=values.dtype)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], 0)


class _BleuKernel:
    """Clipped k-gram matches of many pairs at once: each hypothesis k-gram looked up in its reference."""

    def __init__(self, similarity: CocoBleu):
        self.similarity = similarity
        self.vocabularies = [_Vocabulary() for _ in range(similarity.n)]
        self.tables = [_CountTable() for _ in range(similarity.n)]
        self.lengths: list[int] = []

    def extend(self, texts: Sequence[str]) -> None:
        words_vocabulary = self.vocabularies[0]
        for text in texts:
            ids = [words_vocabulary(w) for w in text.split()]
            self.lengths.append(len(ids))
            grams = ids
            for k, (vocabulary, table) in enumerate(zip(self.vocabularies, self.tables), start=1):
                if k > 1:
                    grams = [vocabulary(tuple(ids[i : i + k])) for i in range(len(ids) - k + 1)]
                table.append(_counts(grams))

    def score_pairs(self, gold: np.ndarray, prediction: np.ndarray) -> np.ndarray:
        corrects = []
        for table in self.tables:
            offsets, keys, counts, sorted_keys, sorted_counts = table.arrays()
            pair, position = _explode(offsets, prediction)
            wanted = (gold[pair] << 32) | (keys[position] & 0xFFFFFFFF)
            clipped = np.minimum(counts[position], _lookup(sorted_keys, sorted_counts, wanted))
            corrects.append(
                np.bincount(pair, weights=clipped, minlength=len(gold)).astype(np.int64)
            )
        lengths = np.asarray(self.lengths, dtype=np.int64)
        return _values_of_statistics(
            [lengths[prediction], lengths[gold], *corrects], self.similarity.value
        )


@component("similarity", "coco_bleu", takes="str", gives="float")
def coco_bleu(n: int = 2) -> Similarity:
    """MS-COCO caption BLEU (pycocoevalcap), cumulative up to ``n`` (OpenPI uses n = 2): not sacrebleu's.

    sacrebleu's BLEU is the metric ``corpus_bleu()`` / ``sentence_bleu()`` of measure blocks.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    return CocoBleu(n=n)


@dataclass(frozen=True)
class CocoRougeL:
    """ROUGE-L F-measure of the COCO caption toolkit: tokens split on single spaces, LCS, weight beta."""

    beta: float = 1.2
    name: str = "coco_rouge_l"

    def prepare(self, text: str) -> tuple[str, ...]:
        return tuple(text.split(" "))

    def score(self, gold: tuple[str, ...], prediction: tuple[str, ...]) -> float:
        return self.value(_lcs_length(prediction, gold), len(prediction), len(gold))

    def value(self, lcs: int, prediction_length: int, gold_length: int) -> float:
        """The F-measure from the LCS length and the two token counts."""
        precision = lcs / float(prediction_length)
        recall = lcs / float(gold_length)
        if precision == 0 or recall == 0:
            return 0.0
        b2 = self.beta**2
        return ((1 + b2) * precision * recall) / float(recall + b2 * precision)

    def kernel(self) -> PairKernel:
        return _RougeKernel(self)


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


_WORD_BITS = 63  # masks stay non-negative int64 until the kernel views them as uint64


class _RougeKernel:
    """LCS lengths of many pairs at once, bit-parallel (Allison-Dix / Hyyrö) over 64-bit words.

    Each gold string of at most 63 tokens is a bit row; every prediction token updates the row
    ``V = (V + U) | (V - U)`` with ``U = V & match_mask(token)``; the LCS length is the number of
    cleared bits.  Longer gold strings fall back to the scalar dynamic programme.
    """

    def __init__(self, similarity: CocoRougeL):
        self.similarity = similarity
        self.vocabulary = _Vocabulary()
        self.tokens = _GrowingCsr()
        self._masks = _CountTable()  # per gold string: token id -> bit mask of its positions

    def extend(self, texts: Sequence[str]) -> None:
        vocabulary = self.vocabulary
        for text in texts:
            ids = [vocabulary(t) for t in text.split(" ")]
            self.tokens.append(ids)
            masks: dict[int, int] = {}
            if len(ids) <= _WORD_BITS:
                for position, token in enumerate(ids):
                    masks[token] = masks.get(token, 0) | 1 << position
            self._masks.append(masks)

    def score_pairs(self, gold: np.ndarray, prediction: np.ndarray) -> np.ndarray:
        offsets, flat = self.tokens.arrays()
        *_, keys, masks = self._masks.arrays()
        masks = masks.astype(np.uint64)
        lengths = offsets[1:] - offsets[:-1]
        gold_lengths, prediction_lengths = lengths[gold], lengths[prediction]
        lcs = np.zeros(len(gold), dtype=np.int64)
        short = np.flatnonzero(gold_lengths <= _WORD_BITS)
        # longest predictions first, so that step i works on a prefix of the pairs
        steps_wanted = prediction_lengths[short]
        narrow = (
            steps_wanted.astype(np.int16)
            if len(short) and steps_wanted.max() < 2**15
            else steps_wanted
        )
        order = short[np.argsort(-narrow, kind="stable")]  # a radix sort for 16-bit keys
        steps = prediction_lengths[order]
        row_keys = gold[order] << 32
        starts = offsets[prediction[order]]
        rows = np.full(len(order), np.iinfo(np.uint64).max, dtype=np.uint64)
        active = len(order)
        for i in range(int(steps[0]) if len(order) else 0):
            while active and steps[active - 1] <= i:
                active -= 1
            v = rows[:active]
            u = v & _lookup(keys, masks, row_keys[:active] | flat[starts[:active] + i])
            rows[:active] = (v + u) | (v - u)
        width = gold_lengths[order].astype(np.uint64)
        low = (np.uint64(1) << width) - np.uint64(1)
        lcs[order] = width.astype(np.int64) - np.bitwise_count(rows & low).astype(np.int64)
        for j in np.flatnonzero(gold_lengths > _WORD_BITS).tolist():
            p, g = int(prediction[j]), int(gold[j])
            lcs[j] = _lcs_length(
                tuple(flat[offsets[p] : offsets[p + 1]].tolist()),
                tuple(flat[offsets[g] : offsets[g + 1]].tolist()),
            )
        return _values_of_statistics([lcs, prediction_lengths, gold_lengths], self.similarity.value)


@component("similarity", "coco_rouge_l", takes="str", gives="float")
def coco_rouge_l(beta: float = 1.2) -> Similarity:
    """ROUGE-L F-measure of the COCO caption toolkit (pycocoevalcap), recall weighted by ``beta``: OpenPI's.

    Not rouge-score's ROUGE-L: whitespace tokens as given (no tokenizer, no stemming) and beta = 1.2,
    so the numbers differ; rouge-score's is the metric ``rouge(variant = "rougeL")`` of measure blocks.
    """
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


@component("similarity", "token_f1", takes="str", gives="float")
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
        weights = (
            tuple([1.0 / self.n] * self.n)
            if self.score_kind == "cumulative"
            else tuple([0.0] * (self.n - 1) + [1.0])
        )
        smoother = (
            None if self.smoothing == "none" else getattr(SmoothingFunction(), self.smoothing)
        )
        import warnings

        with warnings.catch_warnings():  # NLTK warns on zero n-gram overlaps; a zero is the answer
            warnings.simplefilter("ignore")
            return float(
                sentence_bleu([gold], prediction, weights=weights, smoothing_function=smoother)
            )


@component("similarity", "bleu", takes="str", gives="float")
def bleu(
    n: int = 4,
    *,
    score: Literal["cumulative", "individual"] = "cumulative",
    smoothing: Literal[
        "none", "method1", "method2", "method3", "method4", "method5", "method6", "method7"
    ] = "none",
) -> Similarity:
    """NLTK sentence BLEU of order ``n`` (brevity penalty against the single reference's length).

    ``score = "individual"`` keeps only the order-n precision (PAGED's BLEU-1 is ``bleu(1)``);
    ``smoothing`` names one of NLTK's SmoothingFunction methods.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    return NltkBleu(n=n, score_kind=score, smoothing=smoothing)
