"""procbench: a declarative evaluation language and leaderboard for procedural-text understanding.

    >>> import procbench
    >>> result = procbench.score("openpi", "predictions.jsonl", split="dev")
    >>> result.metrics["rouge_f1"]
"""

from procbench.api import all_spec_paths, load_task, score, spec_path

__all__ = ["all_spec_paths", "load_task", "score", "spec_path"]
__version__ = "0.1.0"
