"""OpenPI (docs/metrics.md §1.4-1.7): best-match P/R/F1 under Exact, COCO BLEU-2 and COCO ROUGE-L.

Per pair, from scratch: normalise, drop the effect stop-words, Porter-stem, then the metric.
"""

from __future__ import annotations

import json
import math
import string
from collections import Counter
from pathlib import Path

from nltk.stem.porter import PorterStemmer

STOP = {"and", "was", "is", "before", "afterwards", "after", "of"}
PUNCTUATION = str.maketrans("", "", string.punctuation)
_STEMMER = PorterStemmer(mode="NLTK_EXTENSIONS")


def normalise(text: str) -> str:
    return " ".join(text.strip().lower().translate(PUNCTUATION).split())


def content(text: str) -> str:
    return " ".join(t for t in normalise(text).split(" ") if t.lower() not in STOP)


def normalise_and_stem(text: str) -> str:
    stems = (_STEMMER.stem(token.lower()).strip() for token in normalise(text).split())
    return " ".join(s for s in stems if s)


def exact(gold: str, prediction: str) -> float:
    return 1.0 if normalise_and_stem(gold) == normalise_and_stem(prediction) else 0.0


def bleu2(gold: str, prediction: str) -> float:
    reference, hypothesis = normalise_and_stem(gold).split(), normalise_and_stem(prediction).split()
    score = 1.0
    for n in (1, 2):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum(min(count, ref[gram]) for gram, count in hyp.items())
        score *= (matches + 1e-15) / (max(0, len(hypothesis) - n + 1) + 1e-9)
    score = score ** (1.0 / 2)
    ratio = (len(hypothesis) + 1e-15) / (len(reference) + 1e-9)
    if ratio < 1:
        score *= math.exp(1 - 1 / ratio)
    return score


def rouge_l(gold: str, prediction: str, beta: float = 1.2) -> float:
    candidate, reference = (
        normalise_and_stem(prediction).split(" "),
        normalise_and_stem(gold).split(" "),
    )
    table = [[0] * (len(reference) + 1) for _ in range(len(candidate) + 1)]
    for i, x in enumerate(candidate, 1):
        for j, y in enumerate(reference, 1):
            table[i][j] = (
                table[i - 1][j - 1] + 1 if x == y else max(table[i - 1][j], table[i][j - 1])
            )
    lcs = table[-1][-1]
    precision, recall = lcs / float(len(candidate)), lcs / float(len(reference))
    if precision == 0 or recall == 0:
        return 0.0
    return ((1 + beta**2) * precision * recall) / float(recall + beta**2 * precision)


METRICS = {"exact": exact, "bleu": bleu2, "rouge": rouge_l}


def guarded(metric, gold: str, prediction: str) -> float:
    g, p = content(gold), content(prediction)
    if not g or not p:
        return 1.0 if not g and not p else 0.0
    return metric(g, p)


def item_prf(
    metric, gold: list[str], predictions: list[str], dedup: bool
) -> tuple[float, float, float]:
    if len(predictions) == 1 and predictions[0].lower().strip().startswith(
        "there will be no change"
    ):
        predictions = []
    if not gold and not predictions:
        return 1.0, 1.0, 1.0
    if not gold:
        return 0.0, 1.0, 0.0
    if not predictions:
        return 1.0, 0.0, 0.0
    if dedup:
        predictions = list(dict.fromkeys(predictions))
    precision = sum(max([0.0] + [guarded(metric, g, p) for g in gold]) for p in predictions) / len(
        predictions
    )
    recall = sum(max([0.0] + [guarded(metric, g, p) for p in predictions]) for g in gold) / len(
        gold
    )
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def score(
    gold_file: Path, predictions_file: Path, *, dedup: bool = False, limit: int | None = None
) -> dict[str, dict[str, float]]:
    """Per item id: exact_p ... rouge_f1 (the names procbench stores)."""
    gold = [
        json.loads(line)
        for line in gold_file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ][:limit]
    predicted = {}
    for line in predictions_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            predicted[record["id"]] = record["answers"]
    out = {}
    for record in gold:
        values = {}
        for name, metric in METRICS.items():
            p, r, f = item_prf(metric, record["answers"], predicted.get(record["id"], []), dedup)
            values.update({f"{name}_p": p, f"{name}_r": r, f"{name}_f1": f})
        out[record["id"]] = values
    return out
