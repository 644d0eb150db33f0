"""PAGED's faster kernels agree exactly with the plain definitions (and with NLTK's BLEU itself)."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.paged import tokens

WORDS = [
    "Check",
    "the",
    "order",
    "order",
    "XOR1",
    "->",
    "(yes)",
    "Start",
    "end",
    "a",
    "DataObject(form)",
    ",",
    ".",
    "  ",
    "re-check",
]
line = st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join)


def _plain_lexical_f1(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    ta, tb = tokens.tokens(a), tokens.tokens(b)
    if not ta or not tb:
        return 0.0
    p = sum(1 for t in ta if t in set(tb)) / len(ta)
    r = sum(1 for t in tb if t in set(ta)) / len(tb)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


@given(st.lists(line, max_size=8), st.lists(line, max_size=8))
def test_lexical_f1_matrix_equals_pairwise_definition(rows: list[str], columns: list[str]) -> None:
    matrix = tokens.lexical_f1_matrix(rows, columns)
    assert matrix.shape == (len(rows), len(columns))
    assert matrix.tolist() == [[_plain_lexical_f1(r, c) for c in columns] for r in rows]
    assert matrix.tolist() == [[tokens.lexical_f1(r, c) for c in columns] for r in rows]


@given(line, line)
def test_bleu1_equals_nltk_sentence_bleu(hypothesis: str, reference: str) -> None:
    from nltk.translate.bleu_score import sentence_bleu

    hyp = (
        [t for t in tokens.tokens(hypothesis) if t not in tokens.BLEU_DROPPED] if hypothesis else []
    )
    ref = [t for t in tokens.tokens(reference) if t not in tokens.BLEU_DROPPED] if reference else []
    if not hyp or not ref:
        want = 0.0
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = round(float(sentence_bleu([ref], hyp, weights=(1, 0, 0, 0))), 4)
    assert tokens.bleu1(hypothesis, reference) == want


@pytest.mark.parametrize(
    "text", ["", " ", "a  b", "Forward the form -> End", "DataObject(Transformation form)"]
)
def test_tokens_are_spacy_lower_tokens(text: str) -> None:
    nlp_tokenizer = tokens._spacy_tokenizer()
    assert tokens.tokens(text) == tuple(t.lower_ for t in nlp_tokenizer(text))
