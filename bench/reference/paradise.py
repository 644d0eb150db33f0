"""PARADISE (docs/metrics.md §3.2): accuracy, and precision/recall/F1 weighted by gold-class support."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def score(gold_csv: Path, predictions_file: Path) -> dict[str, float]:
    with gold_csv.open(newline="", encoding="utf-8") as handle:
        gold = {str(int(row[""])): int(row["label"]) for row in csv.DictReader(handle)}
    predicted = {}
    for line in predictions_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            predicted[str(record["id"])] = int(record["label"])
    pairs = [(g, predicted[i]) for i, g in gold.items()]
    accuracy = sum(1 for g, p in pairs if g == p) / len(pairs)
    wp = wr = wf = 0.0
    for label in sorted({g for g, _ in pairs}):
        support = sum(1 for g, _ in pairs if g == label)
        hits = sum(1 for g, p in pairs if g == p == label)
        guessed = sum(1 for _, p in pairs if p == label)
        precision = hits / guessed if guessed else 0.0
        recall = hits / support
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        wp, wr, wf = wp + precision * support, wr + recall * support, wf + f1 * support
    n = len(pairs)
    return {"accuracy": accuracy, "weighted_p": wp / n, "weighted_r": wr / n, "weighted_f1": wf / n}
