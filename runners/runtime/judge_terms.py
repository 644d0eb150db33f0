"""What intake needs of the LLM judge without importing it: the judge templates' names and the judge's error.

``procbench.runners.runtime.templates`` (Jinja2) and ``procbench.runners.pmllm.judge`` (the HTTP client, the PM-LLM package) re-export
these; ``procbench.submissions.judging`` reads them here, so that submitting a task no judge grades imports neither
(issue #31: ``procbench submit`` imports what intake needs).
"""

from __future__ import annotations

JUDGE = "judge"  # the spec's template that prompts the judge (a task declaring it is graded by one)
JUDGE_IMAGE = "judge_image"  # the prompt of questions that come with an image


class JudgeError(RuntimeError):
    """The judge endpoint refused a request (4xx) or kept failing after every retry."""
