"""Tokens, lexical F1 and BLEU-1 exactly as the official PAGED scorer computes them.

Upstream loads ``en_core_web_sm`` with the tagger and attribute ruler disabled, so its "lemmas" are
just the lower-cased spaCy tokens (parity README, "How the official scorer was run"): spaCy's
``blank("en")`` tokenizer gives the same tokens without any model download. Results are cached
because the same node texts and lines are compared many times.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

# Tokens that upstream drops before BLEU (parity README F1).
BLEU_DROPPED = frozenset([",", ".", "?", ";", ":", "!", "(", ")", "[", "]", "{", "}", "'", '"', "-", "_", "a", "the", "an"])

_tokenizer: Any = None
_LOWER = 0  # spaCy's LOWER attribute id, read when the tokenizer loads


def _spacy_tokenizer() -> Any:
    global _tokenizer, _LOWER
    if _tokenizer is None:
        import spacy  # imported lazily: loading takes a quarter of a second

        _LOWER = _spacy_lower_attribute()
        _tokenizer = spacy.blank("en").tokenizer
    return _tokenizer


@lru_cache(maxsize=500_000)
def tokens(text: str) -> tuple[str, ...]:
    """spaCy English tokens, lower-cased (whitespace tokens kept, as upstream keeps them)."""
    if not text:
        return ()
    tokenizer = _spacy_tokenizer()
    strings = tokenizer.vocab.strings
    # the LOWER attribute of every token at once: the same strings as ``token.lower_``, faster
    return tuple(strings[h] for h in tokenizer(text).to_array(_LOWER).tolist())


def _spacy_lower_attribute() -> int:
    from spacy.attrs import LOWER

    return int(LOWER)


@lru_cache(maxsize=500_000)
def _profile(text: str) -> tuple[int, dict[str, int], frozenset[str]]:
    """(token count, count of each distinct token, token set) of a text."""
    counts: dict[str, int] = {}
    for token in tokens(text):
        counts[token] = counts.get(token, 0) + 1
    return sum(counts.values()), counts, frozenset(counts)


@lru_cache(maxsize=1_000_000)
def lexical_f1(a: str, b: str) -> float:
    """Harmonic mean of the share of a's tokens found in b and of b's tokens found in a; 0 if either is empty.

    Order-insensitive; repeated tokens count each time. No library has this variant, hence the kernel.
    """
    if not a or not b:
        return 0.0
    na, ca, sa = _profile(a)
    nb, cb, sb = _profile(b)
    if not na or not nb:
        return 0.0
    p = sum(c for t, c in ca.items() if t in sb) / na
    r = sum(c for t, c in cb.items() if t in sa) / nb
    if p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)


def lexical_f1_matrix(rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
    """``lexical_f1(r, c)`` for every row and column text, as one float64 matrix (identical values).

    Token counts become a dense (text x vocabulary) matrix; the two shared-token counts are integer
    matrix products, and the same float operations as ``lexical_f1`` follow element-wise.
    """
    result = np.zeros((len(rows), len(columns)), dtype=np.float64)
    if not rows or not columns:
        return result
    vocabulary: dict[str, int] = {}
    profiles = [_profile(t) if t else (0, {}, frozenset()) for t in (*rows, *columns)]
    for _, counts, _ in profiles:
        for token in counts:
            vocabulary.setdefault(token, len(vocabulary))
    counts_matrix = np.zeros((len(profiles), max(len(vocabulary), 1)), dtype=np.float64)
    for i, (_, counts, _) in enumerate(profiles):
        for token, count in counts.items():
            counts_matrix[i, vocabulary[token]] = count
    lengths = counts_matrix.sum(axis=1)
    present = (counts_matrix > 0).astype(np.float64)
    a, b = counts_matrix[: len(rows)], counts_matrix[len(rows) :]
    la, lb = lengths[: len(rows), None], lengths[None, len(rows) :]
    shared_a = a @ present[len(rows) :].T  # tokens of a (with repeats) found in b
    shared_b = present[: len(rows)] @ b.T  # tokens of b (with repeats) found in a
    usable = (la > 0) & (lb > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = shared_a / la
        r = shared_b / lb
        f = 2 * p * r / (p + r)
    np.copyto(result, f, where=usable & (p + r != 0))
    return result


def _bleu_tokens(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in BLEU_DROPPED]


@lru_cache(maxsize=500_000)
def bleu1(hypothesis: str, reference: str) -> float:
    """NLTK ``sentence_bleu([ref], hyp, weights=(1, 0, 0, 0))`` on filtered tokens, rounded to 4 decimals."""
    if not hypothesis or not reference:
        return 0.0
    hyp, ref = _bleu_tokens(hypothesis), _bleu_tokens(reference)
    if not hyp or not ref:
        return 0.0
    reference_counts: dict[str, int] = {}
    for token in ref:
        reference_counts[token] = reference_counts.get(token, 0) + 1
    hypothesis_counts: dict[str, int] = {}
    for token in hyp:
        hypothesis_counts[token] = hypothesis_counts.get(token, 0) + 1
    clipped = sum(min(count, reference_counts.get(token, 0)) for token, count in hypothesis_counts.items())
    return _bleu1_value(clipped, len(hyp), len(ref))


@lru_cache(maxsize=100_000)
def _bleu1_value(clipped: int, hypothesis_length: int, reference_length: int) -> float:
    """What NLTK's ``sentence_bleu`` returns for weights (1, 0, 0, 0), rounded to 4 decimals.

    NLTK: 0 without unigram matches; else ``bp * exp(fsum(w_i * log(p_i)))`` where the zero-weight
    terms are ``0 * log(...)`` (= ±0.0, which leave the sum exactly ``log(p_1)``) and
    ``p_1 = clipped / hypothesis_length`` as a float; ``bp = exp(1 - r / c)`` when the hypothesis
    is shorter than the reference, else 1.  The test suite checks this against NLTK itself.
    """
    if clipped == 0:
        return 0.0
    c, r = hypothesis_length, reference_length
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return round(float(bp * math.exp(math.fsum([math.log(clipped / c)]))), 4)
