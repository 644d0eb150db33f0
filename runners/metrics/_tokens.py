"""Token F1 of a predicted text against its references: the answer score of extractive QA (SQuAD v1.1).

SQuAD's official script normalises both texts (lower-case, ASCII punctuation deleted, the articles
"a", "an", "the" deleted as whole words, whitespace squeezed), splits them on whitespace and scores
the bags of tokens: F1 = 2PR / (P + R) with P = shared / predicted tokens and R = shared / gold
tokens, 0 when no token is shared (also when either side is empty: v1.1's rule; SQuAD v2.0 gives 1
when both are empty).  The best score over the references counts.  The normalisation is the measure's
own ``normaliser`` (docs/pure-spec-tasks.md writes SQuAD's with ``delete_whole_words``), so the metric
itself only compares tokens; the token bags are the ``token_f1`` similarity's, one piece of code.
"""

from __future__ import annotations

from typing import Any

from procbench.runners.metrics._base import (
    TEXT,
    TEXTS,
    Metric,
    Stats,
    as_references,
    library_metric,
)


class TokenF1(Metric):
    gold = (TEXT, TEXTS)
    prediction = (TEXT,)
    text = True
    library = "SQuAD v1.1 evaluate script, f1_score (best over references)"

    def __init__(self) -> None:
        self._bags: Any = None

    @property
    def bags(self) -> Any:
        """The token bags of SQuAD's F1, made on first use: registering the metric builds one (its contract), and the
        metrics package is imported by every score, ProPara's too, which compares no text (issue #31: start-up)."""
        if self._bags is None:
            from procbench.runners.library.similarity import TokenF1 as TokenBags

            self._bags = TokenBags()
        return self._bags

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        predicted = self.bags.prepare(
            prediction or ""
        )  # no prediction scores as an empty answer: 0
        return (
            max(
                (
                    self.bags.score(self.bags.prepare(reference), predicted)
                    for reference in as_references(gold)
                ),
                default=0.0,
            ),
        )


@library_metric("token_f1")
def token_f1() -> Metric:
    """Token-bag F1 of the predicted text against each reference (the best counts), after the measure's normaliser: SQuAD's F1."""
    return TokenF1()
