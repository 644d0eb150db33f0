"""procbench: a declarative evaluation language and leaderboard for procedural-text understanding.

    >>> import procbench
    >>> procbench.fetch("OpenPI", split="dev")                   # data into PROCBENCH_DATA (verified)
    >>> result = procbench.score("openpi", "predictions.jsonl", split="dev")
    >>> result.metrics["rouge_f1"]
    >>> procbench.submit("openpi", "predictions.jsonl", split="dev", model="my-model", team="me")
    >>> [c for c in procbench.check() if not c.ok]                # specs with errors
    >>> procbench.compare(sid_a, sid_b, db="var/procbench.duckdb").verdict   # the site's paired test
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procbench.api import SpecCheck, all_spec_paths, check, fetch, load_task, score, spec_path, submit
    from procbench.comparison import Comparison, CompareError, compare

__all__ = ["CompareError", "Comparison", "SpecCheck", "all_spec_paths", "check", "compare", "fetch", "load_task", "score", "spec_path", "submit"]
_COMPARISON = ("CompareError", "Comparison", "compare")  # from procbench.comparison (the site's paired tests, below the site)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """The API names, imported on first use (PEP 562).

    ``procbench.cli`` lives in this package: importing the API here eagerly would make every
    command (``procbench --help`` included) pay for the spec language, NumPy and the registry.
    """
    if name in _COMPARISON:
        from procbench import comparison

        return getattr(comparison, name)
    if name in __all__:
        from procbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'procbench' has no attribute {name!r}")
