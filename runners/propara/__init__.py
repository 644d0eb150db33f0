"""ProPara: the AI2 leaderboard evaluator (inputs/outputs/conversions/moves) and the NAACL'18
sentence-level evaluator (Cat-1/2/3, Q1–Q10), as registered components (docs/metrics.md §2)."""

from runners.propara import leaderboard, naacl18

__all__ = ["leaderboard", "naacl18"]
