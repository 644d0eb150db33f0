"""From a judge's verdict text to a per-question score (docs/metrics.md §4.3 and 4.4).

Upstream's extraction is a regex heuristic with quirks (backtracking, floats beating ints, the
"number before 10.0" rule); no library does this, so it is reproduced here as described.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `\d` is Unicode-aware in Python `re`, like upstream; the third alternative never wins (4.3).
NUMBER = re.compile(r"([-+]?)(?:(\d+\.\d+)|(\d+)|(\d+)/(\d+))(?!\.)")
NO_GRADE = 1.0


@dataclass(frozen=True)
class Candidate:
    value: float
    is_float: bool


def candidates(verdict: str) -> list[Candidate]:
    """Every number of the verdict in [1, 10], left to right, tagged float (has a '.') or int."""
    found = []
    for match in NUMBER.finditer(verdict):
        text = match.group(0)
        value = float(text)
        if 1.0 <= value <= 10.0:
            found.append(Candidate(value, "." in text))
    return found


def extract_grade(verdict: str) -> float:
    """The grade upstream reads from a verdict; 1.0 when no number in [1, 10] is found."""
    found = candidates(verdict)
    floats = [c.value for c in found if c.is_float]
    if floats:
        # "10.0 at a position > 0" -> the float just before the first 10.0. Read literally, with
        # Python indexing: when the first 10.0 is at position 0 and another follows, that is
        # floats[-1] (docs/metrics.md §4.3, step 3: upstream's literal reading; none of the staged verdicts has it).
        if 10.0 in floats[1:]:
            return floats[floats.index(10.0) - 1]
        return floats[0]
    ints = [c.value for c in found if not c.is_float]
    return ints[0] if ints else NO_GRADE


def normalise(grade: float) -> float:
    """Piecewise-linear stretch of the top of the scale: 8 -> 7.5, 9 -> 8, 9.5 -> 9, 10 -> 10."""
    return min(7.0, grade) + 0.5 * max(min(grade, 9.0) - 7.0, 0.0) + 2.0 * max(grade - 9.0, 0.0)


def cot_penalty(score: float) -> float:
    """The chain-of-thought penalty: d = round((10 - s) * 1.11, 1), s <- max(1, 10 - d)."""
    deduction = round((10.0 - score) * 1.11, 1)
    return max(1.0, 10.0 - deduction)


def question_score(verdict: str, *, cot: bool = False) -> float:
    """Normalised (and, for CoT models, penalised) score of one verdict."""
    score = normalise(extract_grade(verdict))
    return cot_penalty(score) if cot else score
