"""PAGED's two kernels (metrics.md section 5): line alignment by lexical F1, and BLEU-1.

Per pair, from scratch: tokenise both strings with spaCy's English tokenizer (lower-cased), then
the harmonic mean of the shares of each side's tokens found in the other; BLEU-1 through NLTK's
``sentence_bleu`` itself on the filtered tokens, rounded to 4 decimals.
"""

from __future__ import annotations

import warnings

DROPPED = {",", ".", "?", ";", ":", "!", "(", ")", "[", "]", "{", "}", "'", '"', "-", "_", "a", "the", "an"}
_nlp = None


def tokens(text: str) -> list[str]:
    global _nlp
    if _nlp is None:
        import spacy

        _nlp = spacy.blank("en")
    return [t.lower_ for t in _nlp.tokenizer(text)]


def lexical_f1(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    p = sum(1 for t in ta if t in set(tb)) / len(ta)
    r = sum(1 for t in tb if t in set(ta)) / len(tb)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def alignment_matrix(predicted: list[str], gold: list[str]) -> list[list[float]]:
    return [[lexical_f1(p, g) for g in gold] for p in predicted]


def bleu1(hypothesis: str, reference: str) -> float:
    from nltk.translate.bleu_score import sentence_bleu

    if not hypothesis or not reference:
        return 0.0
    hyp = [t for t in tokens(hypothesis) if t not in DROPPED]
    ref = [t for t in tokens(reference) if t not in DROPPED]
    if not hyp or not ref:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return round(float(sentence_bleu([ref], hyp, weights=(1, 0, 0, 0))), 4)
