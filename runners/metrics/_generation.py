"""Generation metrics: exact match, sacrebleu's BLEU / chrF / TER (sentence and corpus), rouge-score's ROUGE.

Corpus-level scores pool sacrebleu's own per-sentence statistics (n-gram matches and totals, edit
counts) over the items and compute the score from the sums, which is how ``corpus_score`` works;
the per-item statistics are stored, so a slice or a bootstrap resample is the corpus score of that
subset.  Scores are stored as fractions (sacrebleu's 0-100 divided by 100) like every other metric;
the board shows them x100.  These are not OpenPI's COCO variants (``coco_bleu`` and ``coco_rouge_l``
similarities of match blocks), which differ from sacrebleu and rouge-score by design.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from procbench.runners.metrics._base import (
    TEXT,
    TEXTS,
    Metric,
    Stats,
    as_references,
    library_metric,
)


class ExactMatch(Metric):
    gold = (TEXT, TEXTS)
    prediction = (TEXT,)
    text = True
    library = "string equality (after the measure's normaliser)"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        return (1.0 if prediction is not None and prediction in as_references(gold) else 0.0,)


class _Sacrebleu(Metric):
    """A sacrebleu metric object, built once; its statistics are sacrebleu's own."""

    gold = (TEXT, TEXTS)
    prediction = (TEXT,)
    text = True
    library = "sacrebleu"
    kind: str = ""  # set by the class (BLEU) or, for corpus scores, per object

    def __init__(self, **options: Any):
        self.options = options
        self._metric: Any = None

    @property
    def metric(self) -> Any:
        if self._metric is None:
            from sacrebleu import metrics

            self._metric = getattr(metrics, self.kind)(**self.options)
        return self._metric

    def signature(self) -> str:
        # nrefs is left out: it depends on the data, whose content the fingerprint covers anyway
        metric = self.metric
        signature = metric._SIGNATURE_TYPE(
            {**metric.__dict__, "num_refs": 1}
        )  # sacrebleu knows nrefs only after a run
        return "|".join(part for part in str(signature).split("|") if not part.startswith("nrefs:"))


class SentenceBleu(_Sacrebleu):
    kind = "BLEU"
    library = "sacrebleu sentence_bleu"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        return (self.metric.sentence_score(prediction or "", as_references(gold)).score / 100.0,)


class CorpusScore(_Sacrebleu):
    """BLEU, chrF or TER over the whole set: sacrebleu's statistics summed, then its formula."""

    aggregations = ("corpus",)

    def __init__(self, kind: str, width: int, **options: Any):
        super().__init__(**options)
        self.kind = kind
        self.width = width
        self.higher_is_better = kind != "TER"
        self.value_range = (
            (0.0, None) if kind == "TER" else (0.0, 1.0)
        )  # TER: edits per reference word, not bounded by 1
        self.library = f"sacrebleu {kind} corpus_score"

    def stat_names(self, aggregate: str) -> tuple[str, ...]:
        return tuple(f":{i}" for i in range(self.width))

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        stats = self.metric._extract_corpus_statistics(
            [prediction or ""], [[ref] for ref in as_references(gold)]
        )[0]
        return tuple(float(v) for v in stats)

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        if not rows:
            return (0.0,)
        sums = [sum(column) for column in zip(*rows)]
        if self.kind != "TER":  # n-gram counts are integers; sacrebleu's formulas expect them so
            sums = [int(round(v)) for v in sums]
        return (self.metric._compute_score_from_stats(sums).score / 100.0,)


class Rouge(Metric):
    gold = (TEXT, TEXTS)
    prediction = (TEXT,)
    text = True

    def __init__(self, variant: str, score: str, use_stemmer: bool):
        self.variant, self.score, self.use_stemmer = variant, score, use_stemmer
        self.library = f"rouge-score {variant}"
        self._scorer: Any = None

    def signature(self) -> str:
        return f"{self.variant}|{self.score}|stemmer:{self.use_stemmer}"

    def item(self, gold: Any, prediction: Any, aggregate: str) -> Stats:
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer([self.variant], use_stemmer=self.use_stemmer)
        references = as_references(gold)
        scored = (
            self._scorer.score_multi(references, prediction or "")
            if len(references) != 1
            else self._scorer.score(references[0], prediction or "")
        )
        value = scored[self.variant]
        return (
            {"precision": value.precision, "recall": value.recall, "f1": value.fmeasure}[
                self.score
            ],
        )


Tokenizer = Literal["13a", "none", "intl", "char", "zh"]
Smoothing = Literal["exp", "floor", "add-k", "none"]

# -- components ---------------------------------------------------------------------------------------


@library_metric("exact_match")
def exact_match() -> Metric:
    """1 where the predicted text equals the gold text (or one of a list of references), else 0; apply a normaliser in the measure."""
    return ExactMatch()


@library_metric("sentence_bleu")
def sentence_bleu(
    *, tokenize: Tokenizer = "13a", lowercase: bool = False, smooth_method: Smoothing = "exp"
) -> Metric:
    """sacrebleu's sentence_bleu per item (effective order), as a fraction; aggregate = mean."""
    return SentenceBleu(
        tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method, effective_order=True
    )


@library_metric(
    "corpus_bleu",
    aggregation_hint='a per-item BLEU averaged over items is sentence_bleu() with aggregate = "mean"',
)
def corpus_bleu(
    *, tokenize: Tokenizer = "13a", lowercase: bool = False, smooth_method: Smoothing = "exp"
) -> Metric:
    """sacrebleu's corpus_bleu over the items (gold: a reference or a list of them), as a fraction; aggregate = corpus."""
    return CorpusScore(
        "BLEU", 10, tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method
    )


@library_metric("chrf", aggregation_hint="chrF is computed over the corpus only")
def chrf(
    *, char_order: int = 6, word_order: int = 0, beta: int = 2, lowercase: bool = False
) -> Metric:
    """sacrebleu's corpus chrF (chrF++ with word_order = 2), as a fraction; aggregate = corpus."""
    return CorpusScore(
        "CHRF",
        3 * (char_order + word_order),
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        lowercase=lowercase,
    )


@library_metric("ter", aggregation_hint="TER is computed over the corpus only")
def ter(*, normalized: bool = False, case_sensitive: bool = False) -> Metric:
    """sacrebleu's corpus TER (edits per reference word; lower is better), as a fraction; aggregate = corpus."""
    return CorpusScore("TER", 2, normalized=normalized, case_sensitive=case_sensitive)


@library_metric("rouge")
def rouge(
    *,
    variant: Literal["rouge1", "rouge2", "rougeL", "rougeLsum"] = "rougeL",
    score: Literal["f1", "precision", "recall"] = "f1",
    use_stemmer: bool = False,
) -> Metric:
    """rouge-score's ROUGE per item (variant rouge1 | rouge2 | rougeL | rougeLsum; score f1 | precision | recall); several references: the best by F.

    rougeLsum splits summaries into sentences at newlines, as rouge-score does.
    """
    return Rouge(variant, score, use_stemmer)
