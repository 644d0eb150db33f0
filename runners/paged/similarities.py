"""PAGED's text similarities as spec components: upstream's tokens (spaCy's English tokenizer, lower-cased).

``paged.lexical_f1`` (aligns lines, identifies nodes), ``paged.bleu1`` (soft scores; the first text is the
hypothesis: in an aligned walk, the side being walked) and ``paged.same_words`` (strict matches). The
kernels are in :mod:`procbench.runners.paged.tokens`, tested against spaCy and NLTK (docs/metrics.md §5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from procbench.runners.paged.tokens import bleu1 as _bleu1
from procbench.runners.paged.tokens import lexical_f1 as _lexical_f1
from procbench.runners.paged.tokens import lexical_f1_matrix, same_tokens
from procbench.runners.runtime.registry import component
from procbench.runners.library.similarity import Similarity  # noqa: TC001


@dataclass(frozen=True)
class LexicalF1:
    """F1 of the two texts' tokens (order-insensitive, repeats counted); ``both_empty`` for two empty texts."""

    both_empty: float = 0.0
    name: str = "paged.lexical_f1"
    symmetric: bool = field(default=True, init=False)
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, text: str) -> str:
        return text

    def score(self, a: str, b: str) -> float:
        if not a and not b:
            return self.both_empty
        return _lexical_f1(a, b)

    def matrix(self, rows: Sequence[str], columns: Sequence[str]) -> list[list[float]]:
        """Every row text against every column text, the same values at once (one integer matrix product)."""
        values = lexical_f1_matrix(rows, columns)
        out: list[list[float]] = values.tolist()
        if self.both_empty:
            for i, row in enumerate(rows):
                for j, column in enumerate(columns):
                    if not row and not column:
                        out[i][j] = self.both_empty
        return out


@component("similarity", "paged.lexical_f1", takes="str", gives="float")
def lexical_f1(*, both_empty: float = 0.0) -> Similarity:
    """Upstream PAGED's lexical F1 of two texts' tokens (0 where either is empty; ``both_empty`` where both are)."""
    return LexicalF1(both_empty)


@dataclass(frozen=True)
class Bleu1:
    """NLTK sentence BLEU-1 of upstream's filtered tokens, rounded to 4 decimals; ``both_empty`` for two empty texts."""

    both_empty: float = 0.0
    name: str = "paged.bleu1"
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, text: str) -> str:
        return text

    def score(self, hypothesis: str, reference: str) -> float:
        if not hypothesis and not reference:
            return self.both_empty
        return _bleu1(hypothesis, reference)


@component("similarity", "paged.bleu1", takes="str", gives="float")
def bleu1(*, both_empty: float = 0.0) -> Similarity:
    """Upstream PAGED's BLEU-1 (NLTK weights (1, 0, 0, 0), filtered tokens, 4 decimals); the first text is the hypothesis."""
    return Bleu1(both_empty)


@dataclass(frozen=True)
class SameWords:
    """1 where both texts are empty or have the same set of tokens, else 0 (upstream's strict text match)."""

    name: str = "paged.same_words"
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, text: str) -> str:
        return text

    def score(self, a: str, b: str) -> float:
        if not a and not b:
            return 1.0
        return 1.0 if same_tokens(a, b) else 0.0


@component("similarity", "paged.same_words", takes="str", gives="float")
def same_words() -> Similarity:
    """1 where two texts are both empty or have the same set of tokens (lexical F1 of 1), else 0."""
    return SameWords()
