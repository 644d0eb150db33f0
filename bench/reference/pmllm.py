"""PM-LLM-Benchmark (docs/metrics.md §4.3-4.5): grade extraction, normalisation, per-category sums."""

from __future__ import annotations

import json
import re
from pathlib import Path

NUMBER = re.compile(r"([-+]?)(?:(\d+\.\d+)|(\d+)|(\d+)/(\d+))(?!\.)")


def grade(verdict: str) -> float:
    floats: list[float] = []
    ints: list[float] = []
    for match in NUMBER.finditer(verdict):
        value = float(match.group(0))
        if 1 <= value <= 10:
            (floats if "." in match.group(0) else ints).append(value)
    if floats:
        if 10.0 in floats[1:]:
            return floats[floats.index(10.0) - 1]
        return floats[0]
    return ints[0] if ints else 1.0


def normalised(g: float) -> float:
    return min(7.0, g) + 0.5 * max(min(g, 9.0) - 7.0, 0.0) + 2.0 * max(g - 9.0, 0.0)


def score(predictions_file: Path) -> dict[str, float]:
    per_question = {}
    for line in predictions_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if record.get("verdict") is not None:
                per_question[record["id"]] = normalised(grade(record["verdict"]))
    categories = {c: 0.0 for c in range(1, 9)}
    text = total = 0.0
    for qid in sorted(per_question):
        category = int(re.match(r"cat(\d+)", qid).group(1))  # type: ignore[union-attr]
        categories[category] += per_question[qid]
        total += per_question[qid]
        if category != 7:
            text += per_question[qid]
    return {
        "score": text / 10,
        "total": total / 10,
        **{f"c{c}": v / 10 for c, v in categories.items()},
    }
