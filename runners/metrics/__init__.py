"""The metric library of ``measure`` blocks: classification, generation, ordering and grading.

Each metric reproduces a library's numbers (scikit-learn, sacrebleu, rouge-score, scipy: its
``library`` says which), which the tests use as the oracle.  The libraries are imported only when a
task's metric first computes, never by importing this package.
"""

from procbench.runners.metrics._base import (
    AGGREGATION_DOCS,
    AGGREGATIONS,
    CLASS_AGGREGATIONS,
    Metric,
)
from procbench.runners.metrics._classification import (
    accuracy,
    confusion,
    f1,
    precision,
    prf,
    recall,
)
from procbench.runners.metrics._derived import with_derived
from procbench.runners.metrics._generation import (
    chrf,
    corpus_bleu,
    exact_match,
    rouge,
    sentence_bleu,
    ter,
)
from procbench.runners.metrics._measure import Measures, MeasureStage, combined
from procbench.runners.metrics._ordering import (
    exact_order,
    kendall_tau,
    pearson,
    precedence,
    spearman,
)
from procbench.runners.metrics._outcomes import answer_outcomes, binary_outcomes, set_outcomes
from procbench.runners.metrics._preference import win_rate
from procbench.runners.metrics._ranking import mrr, ndcg, recall_at
from procbench.runners.metrics._sets import set_prf
from procbench.runners.metrics._tokens import token_f1

__all__ = [
    "AGGREGATIONS",
    "AGGREGATION_DOCS",
    "CLASS_AGGREGATIONS",
    "MeasureStage",
    "Measures",
    "Metric",
    "accuracy",
    "answer_outcomes",
    "binary_outcomes",
    "chrf",
    "combined",
    "confusion",
    "corpus_bleu",
    "exact_match",
    "exact_order",
    "f1",
    "kendall_tau",
    "mrr",
    "ndcg",
    "pearson",
    "precedence",
    "precision",
    "prf",
    "recall",
    "recall_at",
    "rouge",
    "sentence_bleu",
    "set_outcomes",
    "set_prf",
    "spearman",
    "ter",
    "token_f1",
    "win_rate",
    "with_derived",
]
