"""PM-LLM-Benchmark scoring: per-question grades from verdicts, per-model sums (docs/metrics.md §4.3-4.5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from procbench.runners.runtime._types import GoldSet, InvalidPredictions, ItemScore, Problem
from procbench.runners.pmllm.answers import Answer
from procbench.runners.pmllm.grading import extract_grade, normalise
from procbench.runners.pmllm.grading import cot_penalty as penalise
from procbench.runners.pmllm.naming import CATEGORIES, VISION_CATEGORY, category_of
from procbench.runners.runtime.registry import component


SUMS = ("score", "total", *(f"c{c}" for c in CATEGORIES), "verdicts")


class MissingVerdicts(InvalidPredictions):
    """Answers that the judge has not graded yet: run the judge (procbench.runners.pmllm.judge) first."""


@component("scorer", "pmllm.verdicts", emits=("grade", "judged"))
def read_verdicts(gold: GoldSet, predictions: Mapping[str, Answer]) -> list[ItemScore]:
    """Per question: ``grade``, the number upstream reads from the judge's verdict, and ``judged`` (1/0). Extraction only.

    Unanswered questions and empty answers (which upstream never judges) get 0 for both. A non-empty
    answer without a verdict is an error: the judge must run before scoring. The spec computes the
    score from these (upstream's normalisation and chain-of-thought penalty as ``value`` formulas).
    """
    unjudged = [
        qid
        for qid, a in predictions.items()
        if qid in gold.items and a.verdict is None and not a.is_empty
    ]
    if unjudged:
        problem = Problem(
            None,
            f"{len(unjudged)} answers have no judge verdict ({', '.join(unjudged)}): run the judge first "
            "(procbench.runners.pmllm.judge.judge_answers, or the CLI's judge step)",
        )
        raise MissingVerdicts([problem])
    scores = []
    for qid in gold.items:
        answer = predictions.get(qid)
        # An empty answer scores 0 whatever verdict came with it: verdicts may be the submitter's own.
        if answer is None or answer.verdict is None or answer.is_empty:
            scores.append(ItemScore(qid, {"grade": 0.0, "judged": 0.0}))
        else:
            scores.append(ItemScore(qid, {"grade": extract_grade(answer.verdict), "judged": 1.0}))
    return scores


@component("scorer", "pmllm.grades", emits=("grade", "score", "judged"))
def score_answers(
    gold: GoldSet, predictions: Mapping[str, Answer], *, cot_penalty: bool = False
) -> list[ItemScore]:
    """The Python API of ``specs/pm-llm-benchmark.spec``'s per-item values: ``grade``, ``score`` (normalised, CoT-penalised if asked), ``judged``."""
    out = []
    for item in read_verdicts(gold, predictions):
        grade, judged = item.values["grade"], item.values["judged"]
        score = (penalise(normalise(grade)) if cot_penalty else normalise(grade)) if judged else 0.0
        out.append(ItemScore(item.item_id, {"grade": grade, "score": score, "judged": judged}))
    return out


@component("aggregator", "pmllm.sums", emits=SUMS)
def aggregate_sums(items: Sequence[ItemScore]) -> dict[str, float]:
    """``score`` (textual questions, /10), ``total`` (all, /10), ``c1``..``c8`` (per category, /10), ``verdicts``.

    The shipped spec declares these sums as measure blocks over ``pmllm.grades()``'s values; this
    function computes the same for Python callers (the parity tests) and for old stored submissions.

    Sums run in sorted question-id order (docs/metrics.md §4.8), unrounded; ``verdicts`` counts judged
    questions (the leaderboard lists a model only from 44 on).
    """
    ordered = sorted(items, key=lambda item: item.item_id)
    by_category = {c: 0.0 for c in CATEGORIES}
    textual = total = 0.0
    for item in ordered:
        score = item.values["score"]
        category = category_of(item.item_id)
        by_category[category] = by_category.get(category, 0.0) + score
        total += score
        if category != VISION_CATEGORY:
            textual += score
    metrics = {"score": textual / 10, "total": total / 10}
    metrics.update({f"c{c}": by_category[c] / 10 for c in CATEGORIES})
    metrics["verdicts"] = float(sum(item.values["judged"] for item in ordered))
    return metrics
