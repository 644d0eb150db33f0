"""The metric library of ``measure`` blocks: classification, generation, ordering and grading.

Each metric reproduces a library's numbers (scikit-learn, sacrebleu, rouge-score, scipy: its
``library`` says which), which the tests use as the oracle.  The libraries are imported only when a
task's metric first computes, never by importing this package.

Every name here is imported on first use (PEP 562): every score that measures imports this package (its
stages, its derived formulas), and most use one metric family or none (issue #31: a ProPara score imports
none).  A family registers its metrics when it is imported: a lookup imports the family the component index
names (procbench.runners.runtime._component_index), and discovering every component imports
:data:`COMPONENT_MODULES` (procbench.runners.runtime.registry).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from procbench.runners.metrics._derived import (
        with_derived,
    )
    from procbench.runners.metrics._generation import (
        chrf,
        corpus_bleu,
        exact_match,
        rouge,
        sentence_bleu,
        ter,
    )
    from procbench.runners.metrics._measure import (
        Measures,
        MeasureStage,
        combined,
    )
    from procbench.runners.metrics._ordering import (
        exact_order,
        kendall_tau,
        pearson,
        precedence,
        spearman,
    )
    from procbench.runners.metrics._outcomes import (
        answer_outcomes,
        binary_outcomes,
        set_outcomes,
    )
    from procbench.runners.metrics._preference import (
        win_rate,
    )
    from procbench.runners.metrics._ranking import (
        mrr,
        ndcg,
        recall_at,
    )
    from procbench.runners.metrics._sets import (
        set_prf,
    )
    from procbench.runners.metrics._tokens import (
        token_f1,
    )

# the families whose import registers metric components (every one the component index names under this package)
COMPONENT_MODULES = (
    "procbench.runners.metrics._classification",
    "procbench.runners.metrics._generation",
    "procbench.runners.metrics._ordering",
    "procbench.runners.metrics._outcomes",
    "procbench.runners.metrics._preference",
    "procbench.runners.metrics._ranking",
    "procbench.runners.metrics._sets",
    "procbench.runners.metrics._tokens",
)

# name -> the module that defines it
_HOMES = {
    "AGGREGATIONS": "procbench.runners.metrics._base",
    "AGGREGATION_DOCS": "procbench.runners.metrics._base",
    "CLASS_AGGREGATIONS": "procbench.runners.metrics._base",
    "MeasureStage": "procbench.runners.metrics._measure",
    "Measures": "procbench.runners.metrics._measure",
    "Metric": "procbench.runners.metrics._base",
    "accuracy": "procbench.runners.metrics._classification",
    "answer_outcomes": "procbench.runners.metrics._outcomes",
    "binary_outcomes": "procbench.runners.metrics._outcomes",
    "chrf": "procbench.runners.metrics._generation",
    "combined": "procbench.runners.metrics._measure",
    "confusion": "procbench.runners.metrics._classification",
    "corpus_bleu": "procbench.runners.metrics._generation",
    "exact_match": "procbench.runners.metrics._generation",
    "exact_order": "procbench.runners.metrics._ordering",
    "f1": "procbench.runners.metrics._classification",
    "kendall_tau": "procbench.runners.metrics._ordering",
    "mrr": "procbench.runners.metrics._ranking",
    "ndcg": "procbench.runners.metrics._ranking",
    "pearson": "procbench.runners.metrics._ordering",
    "precedence": "procbench.runners.metrics._ordering",
    "precision": "procbench.runners.metrics._classification",
    "prf": "procbench.runners.metrics._classification",
    "recall": "procbench.runners.metrics._classification",
    "recall_at": "procbench.runners.metrics._ranking",
    "rouge": "procbench.runners.metrics._generation",
    "sentence_bleu": "procbench.runners.metrics._generation",
    "set_outcomes": "procbench.runners.metrics._outcomes",
    "set_prf": "procbench.runners.metrics._sets",
    "spearman": "procbench.runners.metrics._ordering",
    "ter": "procbench.runners.metrics._generation",
    "token_f1": "procbench.runners.metrics._tokens",
    "win_rate": "procbench.runners.metrics._preference",
    "with_derived": "procbench.runners.metrics._derived",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
