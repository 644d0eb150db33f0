"""Tokens, lexical F1 and BLEU-1 exactly as the official PAGED scorer computes them.

Upstream loads ``en_core_web_sm`` with the tagger and attribute ruler disabled, so its "lemmas" are
just the lower-cased spaCy tokens (docs/metrics.md §5): spaCy's
``blank("en")`` tokenizer gives the same tokens without any model download.

Speed without changing a value: every distinct text is tokenised once (:mod:`procbench.runners.paged.tokenizer`
assembles texts from cached whitespace chunks, where that is exactly spaCy's answer), its token
counts are computed once (``_profile``), and pair values are cached, because the same node texts
and lines are compared many times. :func:`prepare` tokenises the chunks of many texts in a few
spaCy calls; the lexical F1 of every line pair of a document is one matrix product.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from procbench.runners.paged.tokenizer import ChunkTokenizer

# Tokens that upstream drops before BLEU (docs/metrics.md §5.6).
BLEU_DROPPED = frozenset(
    [
        ",",
        ".",
        "?",
        ";",
        ":",
        "!",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "'",
        '"',
        "-",
        "_",
        "a",
        "the",
        "an",
    ]
)

_tokenizer: Any = None
_chunked: ChunkTokenizer | None = None


def _spacy_tokenizer() -> Any:
    """spaCy's ``blank("en")`` tokenizer: the definition of PAGED's tokens."""
    global _tokenizer
    if _tokenizer is None:
        _tokenizer = (
            _import_spacy().blank("en").tokenizer
        )  # imported lazily: loading takes a quarter of a second
    return _tokenizer


def _import_spacy() -> Any:
    """spaCy, imported without PyTorch when PyTorch is not loaded yet.

    spaCy imports thinc, whose ``thinc.compat`` imports PyTorch when it is installed, only to offer
    torch-backed layers: about 1.5 s of CPU and 180 MB of memory that a blank tokenizer never uses
    (issue #19, PAGED's peak RSS). While spaCy is imported, ``import torch`` fails, so thinc records
    PyTorch as absent; afterwards PyTorch imports as usual for whoever needs it (the embedding
    baselines use it directly, not through thinc).
    """
    import sys

    if "thinc" in sys.modules or "torch" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # None in sys.modules: the import raises ImportError
    try:
        import spacy
    finally:
        if sys.modules.get("torch", ...) is None:
            del sys.modules["torch"]
    return spacy


def _chunk_tokenizer() -> ChunkTokenizer:
    global _chunked
    if _chunked is None:
        _chunked = ChunkTokenizer(_spacy_tokenizer())
    return _chunked


@lru_cache(maxsize=500_000)
def tokens(text: str) -> tuple[str, ...]:
    """spaCy English tokens, lower-cased (whitespace tokens kept, as upstream keeps them)."""
    if not text:
        return ()
    return _chunk_tokenizer()(text)


def prepare(texts: Iterable[str]) -> None:
    """Tokenise, in a few batched spaCy calls, what :func:`tokens` will need for these texts (optional: speed only)."""
    _chunk_tokenizer().prepare(texts)


@lru_cache(maxsize=500_000)
def _profile(text: str) -> tuple[int, dict[str, int], frozenset[str]]:
    """(token count, count of each distinct token, token set) of a text."""
    counts: dict[str, int] = {}
    for token in tokens(text):
        counts[token] = counts.get(token, 0) + 1
    return sum(counts.values()), counts, frozenset(counts)


@lru_cache(maxsize=500_000)
def _numbered(text: str) -> tuple[int, ...]:
    """The tokens of a text as numbers (one per distinct token), repeats kept: the columns of the lexical F1 matrices."""
    return _chunk_tokenizer().numbers(text)


# Pair caches hold a few hundred bytes an entry: sized so that a 100x split stays within its memory
# goal (issue #31) while a document's repeated comparisons, and recent documents', still hit.
PAIR_CACHE = 200_000


@lru_cache(maxsize=PAIR_CACHE)
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
    shared = sa & sb
    if not shared:
        return 0.0
    p = sum(ca[t] for t in shared) / na
    r = sum(cb[t] for t in shared) / nb
    return 2 * p * r / (p + r)


def same_tokens(a: str, b: str) -> bool:
    """``lexical_f1(a, b) >= 1``, without computing it: both texts have the same (non-empty) set of tokens.

    F1 is exactly 1 when every token of each text occurs in the other (both shares are n/n); otherwise
    one share is at most 1 - 1/n, and the F1 stays that far below 1, far beyond float rounding.
    """
    if not a or not b:
        return False
    tokens_a = _profile(a)[2]
    return bool(tokens_a) and tokens_a == _profile(b)[2]


def token_set(text: str) -> frozenset[str]:
    """The distinct tokens of a text (cached)."""
    return _profile(text)[2] if text else frozenset()


def lexical_f1_matrix(rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
    """``lexical_f1(r, c)`` for every row and column text, as one float64 matrix (identical values).

    Token counts become a dense (text x tokens of these texts) integer matrix; the two shared-token
    counts are integer matrix products (exact, and numpy's own loop: BLAS would wake threads for
    these tiny matrices), and the same float operations as ``lexical_f1`` follow element-wise.
    """
    m, n = len(rows), len(columns)
    if not m or not n:
        return np.zeros((m, n), dtype=np.float64)
    owners: list[int] = []
    numbers: list[int] = []
    for index, text in enumerate((*rows, *columns)):
        if text:
            ids = _numbered(text)
            numbers += ids
            owners += [index] * len(ids)
    if not numbers:
        return np.zeros((m, n), dtype=np.float64)
    used, column_of = np.unique(numbers, return_inverse=True)
    cells = np.array(owners) * len(used) + column_of
    counts = np.bincount(cells, minlength=(m + n) * len(used)).reshape(m + n, len(used))
    present = (counts > 0).astype(counts.dtype)
    lengths = np.maximum(counts.sum(axis=1), 1)  # a text without tokens shares none: 0 / 1
    shared_a = counts[:m] @ present[m:].T  # tokens of a row (with repeats) found in a column
    shared_b = present[:m] @ counts[m:].T  # tokens of a column (with repeats) found in a row
    p = shared_a / lengths[:m, None]
    r = shared_b / lengths[None, m:]
    total = p + r
    total[total == 0] = 1.0  # p = r = 0 there, and the F1 is 0
    return 2 * p * r / total


@lru_cache(maxsize=500_000)
def _bleu_profile(text: str) -> tuple[int, dict[str, int]]:
    """(length, count of each token) of a text's tokens after upstream's BLEU filter."""
    counts: dict[str, int] = {}
    for token in tokens(text):
        if token not in BLEU_DROPPED:
            counts[token] = counts.get(token, 0) + 1
    return sum(counts.values()), counts


@lru_cache(maxsize=PAIR_CACHE)
def bleu1(hypothesis: str, reference: str) -> float:
    """NLTK ``sentence_bleu([ref], hyp, weights=(1, 0, 0, 0))`` on filtered tokens, rounded to 4 decimals."""
    if not hypothesis or not reference:
        return 0.0
    hypothesis_length, hypothesis_counts = _bleu_profile(hypothesis)
    reference_length, reference_counts = _bleu_profile(reference)
    if not hypothesis_length or not reference_length:
        return 0.0
    clipped = sum(
        min(count, reference_counts.get(token, 0)) for token, count in hypothesis_counts.items()
    )
    return _bleu1_value(clipped, hypothesis_length, reference_length)


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
