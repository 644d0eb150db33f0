"""procbench: a declarative evaluation language and leaderboard for procedural-text understanding.

The API a notebook needs is importable from here, in a checkout and in an installed wheel alike
(functions, result classes and every exception the API raises); each name is imported on first use,
so ``import procbench`` stays cheap:

    >>> import procbench
    >>> from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
    >>> preds = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl"
    >>> result = procbench.score("paradise-tip", preds, split="test", data_dir=SAMPLE_DATA_ROOT)
    >>> result.metrics["accuracy"], result.coverage.fraction, result.data_kind
    (1.0, 1.0, 'sample')
    >>> isinstance(result, procbench.ScoreResult)
    True
    >>> [c.task for c in procbench.check("paradise-tip")]       # procbench check paradise-tip
    ['paradise-tip']
    >>> issubclass(procbench.RejectedPredictions, procbench.InvalidPredictions)
    True
    >>> "score" in dir(procbench) and "MissingExtra" in procbench.__all__
    True

With data and a store (not run here): ``procbench.fetch("OpenPI", split="dev")`` downloads and
verifies the data, ``procbench.submit("openpi", "preds.jsonl", split="dev", model="m", team="me")``
stores a file, ``procbench.compare(sid_a, sid_b, db="var/procbench.duckdb").verdict`` is the site's
paired test.
"""

from __future__ import annotations

import importlib

# not typing's: this package is imported before the console script pauses the garbage collector
# (procbench/console.py), and importing typing here cost two collections of objects that stay alive
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from procbench.dsl import SpecError
    from procbench.dsl.datacheck import DataRefused
    from procbench.api import (
        SpecCheck,
        all_spec_paths,
        check,
        fetch,
        load_task,
        score,
        spec_path,
        submit,
    )
    from procbench.comparison import Comparison, CompareError, compare
    from procbench.data import FetchError, FetchResult
    from procbench.partial import Coverage
    from procbench.results import ScoreResult, SubmitResult
    from procbench.runners.runtime._types import GoldDataError, InvalidPredictions
    from procbench.runners.runtime.extras import MissingExtra
    from procbench.submissions.errors import (
        MissingData,
        RejectedPredictions,
        ScoringFailed,
        SubmissionRefused,
    )

# name -> the module that defines it
_HOMES: dict[str, str] = {
    # functions
    "all_spec_paths": "procbench.api",
    "check": "procbench.api",
    "compare": "procbench.comparison",
    "fetch": "procbench.api",
    "load_task": "procbench.api",
    "score": "procbench.api",
    "spec_path": "procbench.api",
    "submit": "procbench.api",
    # results
    "Comparison": "procbench.comparison",
    "Coverage": "procbench.partial",
    "FetchResult": "procbench.data",
    "ScoreResult": "procbench.results",
    "SpecCheck": "procbench.api",
    "SubmitResult": "procbench.results",
    # exceptions: every one the API raises
    "CompareError": "procbench.comparison",
    "DataRefused": "procbench.dsl.datacheck",
    "FetchError": "procbench.data",
    "GoldDataError": "procbench.runners.runtime._types",
    "InvalidPredictions": "procbench.runners.runtime._types",
    "MissingData": "procbench.submissions.errors",
    "MissingExtra": "procbench.runners.runtime.extras",
    "RejectedPredictions": "procbench.submissions.errors",
    "ScoringFailed": "procbench.submissions.errors",
    "SpecError": "procbench.dsl.errors",
    "SubmissionRefused": "procbench.submissions.errors",
}

__all__ = [  # every name of _HOMES (tests/test_api.py checks)
    "CompareError",
    "Comparison",
    "Coverage",
    "DataRefused",
    "FetchError",
    "FetchResult",
    "GoldDataError",
    "InvalidPredictions",
    "MissingData",
    "MissingExtra",
    "RejectedPredictions",
    "ScoreResult",
    "ScoringFailed",
    "SpecCheck",
    "SpecError",
    "SubmissionRefused",
    "SubmitResult",
    "all_spec_paths",
    "check",
    "compare",
    "fetch",
    "load_task",
    "score",
    "spec_path",
    "submit",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """The API names, imported on first use (PEP 562).

    ``procbench.cli`` lives in this package: importing the API here eagerly would make every
    command (``procbench --help`` included) pay for the spec language, NumPy and the registry.
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'procbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
