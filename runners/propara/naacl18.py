"""Registered components of the NAACL'18 sentence-level ProPara evaluation (docs/metrics.md §2B).

* reader ``propara.naacl18``: paragraphs (inventory + aligned annotator label sets)
* predictions ``propara.naacl18_grid``: ``pid sid participant from to`` rows, validated
* scorer ``propara.naacl18``: per-paragraph TP/FP/TN/FN of Q1–Q10, the counting the spec declares (Python API)
* aggregator ``propara.naacl18``: micro-summed Q scores (×100), Cat-1/2/3, macro and micro averages, and
  upstream's printed rows (``question_results``)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procbench.runners.runtime._types import (
    GoldSet,
    InvalidPredictions,
    ItemScore,
    PredictionWarning,
    Problem,
    ProblemList,
)
from procbench.runners.library.generic import Derived
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.propara.leaderboard import DEFAULT_PROMPTS, SPLITS
from procbench.runners.propara.naacl18_gold import read_paragraphs
from procbench.runners.propara.naacl18_grid import (
    ParagraphGrid,
    missing_predictions,
    read_grid_file,
)
from procbench.runners.propara.naacl18_questions import QUESTION_FIELDS, naacl18_questions
from procbench.runners.propara.prompts import prompt_labels, read_prompts
from procbench.runners.runtime.registry import component

if TYPE_CHECKING:
    from procbench.runners.metrics import Measures

EVAL_DIR = "propara/propara/tests/fixtures/eval"
QUESTION_IDS = tuple(f"q{n}" for n in range(1, 11))
CATEGORIES = {
    "cat1": ("q1", "q4", "q7"),
    "cat2": ("q2", "q5", "q8"),
    "cat3": ("q3", "q6", "q9", "q10"),
}
# Upstream hard-codes the NAACL'18 test question counts per category as the micro-average weights.
MICRO_WEIGHTS = {"cat1": 750, "cat2": 601, "cat3": 823}
F1_SCORED = (
    "q8",
)  # "At which steps does x move?" has several answers: its score is F1, not accuracy
_EXAMPLES = 5

# The contract: gold records are Paragraph values, prediction records ParagraphGrid values (attributes).
PARAGRAPH_FIELDS = {
    "pid": "int",
    "inventory": "list(str)",
    "annotator_sets": "list(list(any))",
    "num_sentences": "int",
}  # a frozenset; tuples of Label tuples
GRID_FIELDS = {
    "pid": "int",
    "rows": "any",
    "n_steps": "int",
}  # rows: a mapping participant -> sentence -> GridRow
OUTCOMES = (
    "tp",
    "fp",
    "tn",
    "fn",
)  # the order of procbench.runners.metrics._outcomes.OUTCOMES, which a test keeps equal
COUNTS = tuple(f"{q}_{o}" for q in QUESTION_IDS for o in OUTCOMES)
DETAIL_RATES = ("precision", "recall", "f1", "accuracy")


def naacl18_metrics(params: Mapping[str, object]) -> tuple[str, ...]:
    """q1..q10, cat1..cat3, macro, micro; with detail = true also q<n>_precision/_recall/_f1/_accuracy and q<n>_tp/_fp/_tn/_fn."""
    names = (*QUESTION_IDS, *CATEGORIES, "macro", "micro")
    if params.get("detail", False):
        names += tuple(f"{q}_{name}" for q in QUESTION_IDS for name in (*DETAIL_RATES, *OUTCOMES))
    return names


# ``prompt`` is absent from every item when the split's grids file is missing (a warning says so).
@component("reader", "propara.naacl18", fields=PARAGRAPH_FIELDS, labels={"prompt": ()})
def read_naacl18(
    data_root: Path,
    split: str,
    *,
    para_ids: str = EVAL_DIR + "/para_id.{split}.txt",
    gold_labels: str = EVAL_DIR + "/gold_labels.{split}.tsv",
    annotator_labels: str = EVAL_DIR + "/all-moves.full-grid.tsv",
    prompts: str = DEFAULT_PROMPTS,
) -> GoldSet:
    """Items = paragraph id (str, para-id file order) -> Paragraph (inventory, annotator label sets).

    Labels: ``prompt`` from the EMNLP'18 grids TSV, as for the leaderboard task. Upstream ships the
    evaluator inputs for the test split only.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown ProPara split {split!r}; expected one of {SPLITS}")
    root = Path(data_root)
    paragraphs = read_paragraphs(
        root / para_ids.format(split=split),
        root / gold_labels.format(split=split),
        root / annotator_labels.format(split=split),
    )
    items = {str(pid): paragraph for pid, paragraph in paragraphs.items()}
    return GoldSet(
        items=items, labels=prompt_labels(items, read_prompts(root / prompts.format(split=split)))
    )


@component("predictions", "propara.naacl18_grid", fields=GRID_FIELDS)
def read_naacl18_grid(path: Path, gold: GoldSet) -> dict[str, ParagraphGrid]:
    """TAB rows ``pid sid participant from to`` (``null``/``unk`` special), validated as 2B.1/2B.7.

    Rejected (every instance listed): blank lines, non-integer pid/sid, fewer than five fields, a sentence
    id outside its gold paragraph's sentences, and
    any paragraph, participant or sentence row that scoring reads but the file lacks. Paragraphs not
    in the gold and participants outside a paragraph's gold inventory are ignored with a warning.
    """
    path = Path(path)
    parsed = read_grid_file(path, {p.pid: p.num_sentences for p in gold.items.values()})
    problems = ProblemList(parsed.problems)
    if parsed.n_lines == 0:
        problems.append(Problem(None, "empty prediction file"))
    if (
        parsed.grids or not problems
    ):  # a file with no readable row gets no per-paragraph list on top
        for paragraph in gold.items.values():
            problems.extend(missing_predictions(paragraph, parsed.grids.get(paragraph.pid)))
    if problems:
        raise InvalidPredictions(problems, path.name)
    _warn_ignored(parsed.grids, gold)
    return {
        item_id: parsed.grids[p.pid] for item_id, p in gold.items.items() if p.pid in parsed.grids
    }


def _warn_ignored(grids: Mapping[int, ParagraphGrid], gold: GoldSet) -> None:
    unknown_pids = [pid for pid in grids if str(pid) not in gold.items]
    if unknown_pids:
        message = (
            f"{len(unknown_pids)} paragraph(s) not in the gold are ignored: {_sample(unknown_pids)}"
        )
        warnings.warn(PredictionWarning(message), stacklevel=3)
    unknown = [
        (pid, name)
        for pid, grid in grids.items()
        if str(pid) in gold.items
        for name in grid.rows
        if name not in gold.items[str(pid)].inventory
    ]
    if unknown:
        message = f"{len(unknown)} participant(s) outside the gold inventory are ignored: {_sample(unknown)}"
        warnings.warn(PredictionWarning(message), stacklevel=3)
    uneven = [
        pid
        for pid, grid in grids.items()
        if str(pid) in gold.items and len({len(rows) for rows in grid.rows.values()}) > 1
    ]
    if uneven:
        warnings.warn(
            PredictionWarning(
                f"{len(uneven)} paragraph(s) give their participants different numbers of sentences; Q8's step count K "
                f"is taken from the first participant, as upstream: {_sample(uneven)}"
            ),
            stacklevel=3,
        )


def _sample(values: Sequence[object]) -> str:
    shown = ", ".join(str(v) for v in values[:_EXAMPLES])
    return shown + (f" and {len(values) - _EXAMPLES} more" if len(values) > _EXAMPLES else "")


@component("scorer", "propara.naacl18", needs={"annotator_sets": "list(list(any))"}, emits=COUNTS)
def score_naacl18(gold: GoldSet, predictions: Mapping[str, ParagraphGrid]) -> list[ItemScore]:
    """Per paragraph ``q<n>_tp``, ``q<n>_fp``, ``q<n>_tn``, ``q<n>_fn`` for n = 1..10 (counts).

    The counting specs/propara-naacl18.spec declares, built from the same library components, for
    callers of the Python API (a test asserts the two agree value for value on the real test split).
    """
    measures = _question_measures()

    def count(questions: GoldSet, answers: Mapping[str, Any]) -> list[ItemScore]:
        # the measures store q<n>:tp ...; this API's names are q<n>_tp ...
        return [
            ItemScore(item_id, {key.replace(":", "_"): v for key, v in values.items()})
            for item_id, values in measures.score(questions, answers).items()
        ]

    return Derived(naacl18_questions, count)(gold, predictions)


def _question_measures() -> Measures:
    """Q1-Q10 as the spec's measure blocks: which extracted field each question counts, and how."""
    # imported here: the leaderboard task's components share this package and use neither
    from procbench.runners.metrics import Measures, MeasureStage
    from procbench.runners.metrics._outcomes import AnswerOutcomes, BinaryOutcomes, SetOutcomes
    from procbench.runners.library.text import Pipeline, delete_chars, lowercase, stem

    place = Pipeline.of(
        [lowercase(), delete_chars('"'), stem("porter2", keep_empty=True)]
    )  # the location check of docs/metrics.md §2B.4
    metrics = {
        "created": BinaryOutcomes(),
        "destroyed": BinaryOutcomes(),
        "moved": BinaryOutcomes(),
        "create_step": AnswerOutcomes(),
        "destroy_step": AnswerOutcomes(),
        "create_location": AnswerOutcomes(match="contained"),
        "destroy_location": AnswerOutcomes(match="contained"),
        "move_from": AnswerOutcomes(match="contained"),
        "move_to": AnswerOutcomes(match="contained"),
        "move_steps": SetOutcomes(),
    }
    stages = []
    for question, field_name in zip(QUESTION_IDS, QUESTION_FIELDS):
        metric, ftype = metrics[field_name], FieldType.parse(QUESTION_FIELDS[field_name])
        normalise = place if field_name.endswith(("location", "from", "to")) else None
        stages.append(
            MeasureStage(
                question, metric, "pooled", field_name, field_name, (ftype,), (ftype,), normalise
            )
        )
    return Measures(tuple(stages))


@dataclass(frozen=True)
class QuestionResult:
    """Micro-summed counts of one question and the percentages upstream prints."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def precision(self) -> float:
        return 0.0 if self.tp + self.fp == 0 else 100 * self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        return 0.0 if self.tp + self.fn == 0 else 100 * self.tp / (self.tp + self.fn)

    @property
    def f1(self) -> float:
        p, r = self.precision / 100, self.recall / 100
        return 0.0 if p + r == 0 else 100 * 2 * p * r / (p + r)

    @property
    def accuracy(self) -> float:
        # Upstream divides by zero here (only possible on a subset); a slice without units scores 0.
        return 0.0 if self.total == 0 else 100 * (self.tp + self.tn) / self.total

    def score(self, question: str) -> float:
        return self.f1 if question in F1_SCORED else self.accuracy

    def printed_row(self, question: str) -> str:
        """Upstream's row: counts, then Accuracy (F1 for Q8), Precision, Recall, F1 with %.2f."""
        numbers = (self.score(question), self.precision, self.recall, self.f1)
        counts = (self.total, self.tp, self.fp, self.tn, self.fn)
        return "\t".join([*(str(n) for n in counts), *("%.2f" % x for x in numbers)])


def question_results(items: Sequence[ItemScore]) -> dict[str, QuestionResult]:
    """Micro sums of every question over ``items``."""
    return {
        q: QuestionResult(*(int(sum(i.values[f"{q}_{o}"] for i in items)) for o in OUTCOMES))
        for q in QUESTION_IDS
    }


@component("aggregator", "propara.naacl18", emits=naacl18_metrics)
def aggregate_naacl18(items: Sequence[ItemScore], *, detail: bool = False) -> dict[str, float]:
    """``q1``..``q10`` (100 × accuracy; Q8 100 × F1), ``cat1``..``cat3``, ``macro``, ``micro`` (unrounded).

    micro = (750·Cat-1 + 601·Cat-2 + 823·Cat-3)/2174 with upstream's hard-coded weights, whatever
    subset is scored. ``detail`` adds ``q<n>_precision/_recall/_f1/_accuracy`` (×100; true accuracy
    also for Q8) and the summed counts ``q<n>_tp/_fp/_tn/_fn``. Empty subset: all zeros.
    """
    results = question_results(items)
    metrics: dict[str, float] = {q: results[q].score(q) for q in QUESTION_IDS}
    for category, questions in CATEGORIES.items():
        metrics[category] = sum(metrics[q] for q in questions) / len(questions)
    metrics["macro"] = (metrics["cat1"] + metrics["cat2"] + metrics["cat3"]) / 3
    metrics["micro"] = sum(MICRO_WEIGHTS[c] * metrics[c] for c in CATEGORIES) / sum(
        MICRO_WEIGHTS.values()
    )
    if detail:
        for q, result in results.items():
            for name in ("precision", "recall", "f1", "accuracy"):
                metrics[f"{q}_{name}"] = getattr(result, name)
            metrics.update({f"{q}_{o}": float(getattr(result, o)) for o in OUTCOMES})
    return metrics
