"""Levenshtein distance with unit costs (insert, delete, substitute; no transpositions).

What NLTK's ``nltk.metrics.distance.edit_distance(a, b)`` and upstream's ``pylev`` compute, without
importing NLTK (its package init pulls SciPy, scikit-learn and pandas: see runners/library/porter.py).
tests/test_porter_oracle.py checks it against NLTK as the oracle on the real ProPara vocabulary and
on generated strings (hypothesis).
"""

from __future__ import annotations


def edit_distance(a: str, b: str) -> int:
    """The least number of one-character insertions, deletions and substitutions turning ``a`` into ``b``."""
    if len(a) < len(b):  # one row of the shorter string's length
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
