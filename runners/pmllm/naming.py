"""PM-LLM-Benchmark naming: model names, question ids, answer/verdict file names (docs/metrics.md §4.1, 4.6)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

QUESTION_ID = re.compile(r"cat(\d+)_\d+_\w+")
VISION_CATEGORY = 7
CATEGORIES = tuple(range(1, 9))
DISPLAY_WIDTH = 33


def clean_model_name(name: str) -> str:
    """Provider model id -> model name: every '/' and ':' removed (``qwen/qwen3.7-max`` -> ``qwenqwen3.7-max``)."""
    return name.replace("/", "").replace(":", "")


def judge_folder(judge: str) -> str:
    """The verdict folder of a judge model: ``evaluation-<clean(judge)>``."""
    return f"evaluation-{clean_model_name(judge)}"


def category_of(question_id: str) -> int:
    """The integer after ``cat`` in a question id (``cat07_03_x`` -> 7)."""
    match = re.match(r"cat(\d+)", question_id)
    if match is None:
        raise ValueError(
            f"not a PM-LLM-Benchmark question id (expected catNN_MM_slug): {question_id!r}"
        )
    return int(match.group(1))


def is_vision(question_id: str) -> bool:
    return category_of(question_id) == VISION_CATEGORY


@dataclass(frozen=True)
class ResultFileName:
    """What upstream reads back from ``<model>_<question id>.txt``."""

    model: str
    question_id: str


def parse_result_file_name(file_name: str) -> ResultFileName | None:
    """Model = everything before the first ``_cat``; question id = what follows ``<model>_`` up to the first '.'.

    ``None`` when the name has no ``_cat`` (upstream would not read it as a result file).
    """
    name = Path(file_name).name
    cut = name.find("_cat")
    if cut <= 0:
        return None
    return ResultFileName(model=name[:cut], question_id=name[cut + 1 :].split(".", 1)[0])


def _after_last(name: str, needle: str) -> str:
    return name[name.lower().rfind(needle) + len(needle) :]


# (condition on the lower-cased name, rewrite) in upstream's order; at most two apply (4.6).
_REWRITES = (
    (lambda low: "deepseek-ai" in low, lambda n: _after_last(n, "deepseek-ai")),
    (lambda low: "nvidia" in low, lambda n: _after_last(n, "nvidia")),
    (lambda low: low.startswith("qwenqw"), lambda n: n[4:]),
    (lambda low: low.startswith("microsoft"), lambda n: n[len("microsoft") :]),
    (lambda low: low.startswith("meta-llama"), lambda n: n[len("meta-llama") :]),
    (lambda low: low.startswith("deepseekdeep"), lambda n: n[8:]),
    (lambda low: low.startswith("meta-"), lambda n: n[len("meta-") :]),
    (lambda low: low.endswith("free"), lambda n: n[: n.lower().find("free")]),
    (lambda low: "nemotron" in low, lambda n: "nemotron" + _after_last(n, "nemotron").lower()),
)


def display_name(model: str) -> str:
    """The shortened name the leaderboard table shows (per-model sections keep the full name).

    The conditions are tested on the lower-cased name: the staged table shows ``Muse-Spark-20260409``
    for ``Meta-Muse-Spark-20260409`` and ``nemotron-3-super-120b-a12b`` for
    ``nvidiaNVIDIA-Nemotron-3-Super-120B-A12B``, which only case-insensitive tests produce.
    """
    name = model
    for _ in range(2):
        rewrite = next((fn for test, fn in _REWRITES if test(name.lower())), None)
        if rewrite is None:
            break
        name = rewrite(name)
    if len(name) > DISPLAY_WIDTH:
        pieces = name.split("-")
        kept = pieces[0]
        for piece in pieces[1:]:
            if len(kept) + 1 + len(piece) > DISPLAY_WIDTH:
                break
            kept = f"{kept}-{piece}"
        name = kept[: DISPLAY_WIDTH + 1]
    return name
