"""PM-LLM-Benchmark scoring: per-question grades from verdicts, per-model sums (docs/metrics.md §4.3-4.5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from runners._types import GoldSet, InvalidPredictions, ItemScore, Problem
from runners.pmllm.answers import Answer
from runners.pmllm.grading import extract_grade, normalise
from runners.pmllm.grading import cot_penalty as penalise
from runners.pmllm.naming import CATEGORIES, VISION_CATEGORY, category_of
from runners.registry import component


SUMS = ("score", "total", *(f"c{c}" for c in CATEGORIES), "verdicts")


class MissingVerdicts(InvalidPredictions):
    """Answers that the judge has not graded yet: run the judge (runners.pmllm.judge) first."""


@component("scorer", "pmllm.grades", emits=("grade", "score", "judged"))
def score_answers(gold: GoldSet, predictions: Mapping[str, Answer], *, cot_penalty: bool = False) -> list[ItemScore]:
    """Per question: ``grade`` (read from the verdict), ``score`` (normalised, CoT-penalised if asked), ``judged`` (1/0).

    Unanswered questions and empty answers (which upstream never judges) get 0 everywhere. A
    non-empty answer without a verdict is an error: the judge must run before scoring.
    """
    unjudged = [qid for qid, a in predictions.items() if qid in gold.items and a.verdict is None and not a.is_empty]
    if unjudged:
        problem = Problem(
            None,
            f"{len(unjudged)} answers have no judge verdict ({', '.join(unjudged)}): run the judge first (runners.pmllm.judge.judge_answers, or the CLI's "
            "judge step)",
        )
        raise MissingVerdicts([problem])
    scores = []
    for qid in gold.items:
        answer = predictions.get(qid)
        # An empty answer scores 0 whatever verdict came with it: verdicts may be the submitter's own.
        if answer is None or answer.verdict is None or answer.is_empty:
            scores.append(ItemScore(qid, {"grade": 0.0, "score": 0.0, "judged": 0.0}))
            continue
        grade = extract_grade(answer.verdict)
        score = normalise(grade)
        scores.append(ItemScore(qid, {"grade": grade, "score": penalise(score) if cot_penalty else score, "judged": 1.0}))
    return scores


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
