"""The templates a spec may declare, by name: who looks each one up, and the variables it is given.

A ``template name { text = ... }`` block is found by its name at run time (``procbench models
judge`` renders ``judge`` and ``judge_image`` with :func:`runners.pmllm.judge.render_prompt`).  A
name nothing looks up would be ignored without a word, and a variable the renderer does not pass
fails only when a judge is already being called; the checker refuses both against this table.
"""

from __future__ import annotations

from dataclasses import dataclass

JUDGE = "judge"
JUDGE_IMAGE = "judge_image"
JUDGE_VARIABLES = ("question", "answer", "cot", "severe")  # what runners.pmllm.judge.render_prompt passes


@dataclass(frozen=True)
class TemplateUse:
    name: str
    purpose: str
    variables: tuple[str, ...]


KNOWN: dict[str, TemplateUse] = {
    t.name: t
    for t in (
        TemplateUse(JUDGE, "the LLM judge's prompt for an answer to a textual question (procbench models judge)", JUDGE_VARIABLES),
        TemplateUse(JUDGE_IMAGE, "the LLM judge's prompt for an answer to a visual question (the image is attached)", JUDGE_VARIABLES),
    )
}
