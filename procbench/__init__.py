"""procbench: a declarative evaluation language and leaderboard for procedural-text understanding.

    >>> import procbench
    >>> procbench.fetch("OpenPI", split="dev")                   # data into PROCBENCH_DATA (verified)
    >>> result = procbench.score("openpi", "predictions.jsonl", split="dev")
    >>> result.metrics["rouge_f1"]
    >>> procbench.submit("openpi", "predictions.jsonl", split="dev", model="my-model", team="me")
    >>> [c for c in procbench.check() if not c.ok]                # specs with errors
"""

from procbench.api import SpecCheck, all_spec_paths, check, fetch, load_task, score, spec_path, submit

__all__ = ["SpecCheck", "all_spec_paths", "check", "fetch", "load_task", "score", "spec_path", "submit"]
__version__ = "0.1.0"
