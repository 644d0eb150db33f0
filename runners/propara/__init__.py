"""ProPara: the AI2 leaderboard evaluator (inputs/outputs/conversions/moves) and the NAACL'18
sentence-level evaluator (Cat-1/2/3, Q1–Q10), as registered components (docs/metrics.md §2).

The two evaluators are separate entry points (pyproject.toml): a task that scores with one of them
never imports the other.  ``procbench.runners.propara.leaderboard`` and ``procbench.runners.propara.naacl18`` are
imported on first access here (PEP 562), so importing the package itself costs nothing.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["leaderboard", "naacl18"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
