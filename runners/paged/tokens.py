"""Tokens, lexical F1 and BLEU-1 exactly as the official PAGED scorer computes them.

Upstream loads ``en_core_web_sm`` with the tagger and attribute ruler disabled, so its "lemmas" are
just the lower-cased spaCy tokens (parity README, "How the official scorer was run"): spaCy's
``blank("en")`` tokenizer gives the same tokens without any model download. Results are cached
because the same node texts and lines are compared many times.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any

# Tokens that upstream drops before BLEU (parity README F1).
BLEU_DROPPED = frozenset([",", ".", "?", ";", ":", "!", "(", ")", "[", "]", "{", "}", "'", '"', "-", "_", "a", "the", "an"])

_tokenizer: Any = None


def _spacy_tokenizer() -> Any:
    global _tokenizer
    if _tokenizer is None:
        import spacy  # imported lazily: loading takes a quarter of a second

        _tokenizer = spacy.blank("en").tokenizer
    return _tokenizer


@lru_cache(maxsize=500_000)
def tokens(text: str) -> tuple[str, ...]:
    """spaCy English tokens, lower-cased (whitespace tokens kept, as upstream keeps them)."""
    return tuple(token.lower_ for token in _spacy_tokenizer()(text))


@lru_cache(maxsize=500_000)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def lexical_f1(a: str, b: str) -> float:
    """Harmonic mean of the share of a's tokens found in b and of b's tokens found in a; 0 if either is empty.

    Order-insensitive; repeated tokens count each time. No library has this variant, hence the kernel.
    """
    if not a or not b:
        return 0.0
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    sa, sb = _token_set(a), _token_set(b)
    p = sum(1 for t in ta if t in sb) / len(ta)
    r = sum(1 for t in tb if t in sa) / len(tb)
    if p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)


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
    from nltk.translate.bleu_score import sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns about the (zero-weighted) missing 2- to 4-gram overlaps
        score = sentence_bleu([ref], hyp, weights=(1, 0, 0, 0))
    return round(float(score), 4)
