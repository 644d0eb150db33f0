"""PM-LLM-Benchmark v2.2: process-mining questions answered by an LLM and graded by an LLM judge.

Importing this package registers its components: the reader ``pmllm.questions``, the prediction
validator ``pmllm.answers``, the scorer ``pmllm.grades`` and the aggregator ``pmllm.sums``. The
judge (``procbench.runners.pmllm.judge``), the leaderboard helpers (``procbench.runners.pmllm.leaderboard``) and the
model metadata (``procbench.runners.pmllm.models``) are plain modules.
"""

from procbench.runners.pmllm import answers, questions, scoring  # noqa: F401  (registration side effects)
from procbench.runners.pmllm.answers import Answer
from procbench.runners.pmllm.questions import Question
from procbench.runners.pmllm.scoring import MissingVerdicts

__all__ = ["Answer", "MissingVerdicts", "Question"]
