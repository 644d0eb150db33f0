"""Who judged a submission's verdicts (issue #17): the submitter ("self") or the board's own judge.

A task graded by an LLM judge (PM-LLM) reads verdicts from the prediction file when the file carries
them.  Those verdicts are the submitter's word, so intake records ``judge = "self"`` in the
submission's metadata, and the board ranks such rows apart from rows judged by the board's own
judge (``leaderboard.boardview``).  The ``judge`` key is intake's alone: whatever a submitter puts
under it in their metadata is dropped, so nobody can claim the board's judge graded their file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JUDGE_KEY = "judge"
SELF = "self"  # the verdicts came with the prediction file


def carries_verdicts(records: Mapping[str, Any]) -> bool:
    """Whether a reader's records hold verdicts read from the file (a ``verdict`` that is not None)."""
    for record in records.values():
        verdict = record.get("verdict") if isinstance(record, Mapping) else getattr(record, "verdict", None)
        if verdict is not None:
            return True
    return False


def mark(metadata: Mapping[str, Any], records: Mapping[str, Any], *, board_judge: str = "") -> dict[str, Any]:
    """``metadata`` with ``judge`` set by intake: ``"self"`` when the file carried verdicts, else
    ``board_judge`` when the board's own judge produced them (no intake path does yet), else absent."""
    marked = {k: v for k, v in metadata.items() if k != JUDGE_KEY}
    if carries_verdicts(records):
        marked[JUDGE_KEY] = SELF
    elif board_judge:
        marked[JUDGE_KEY] = board_judge
    return marked


def judged_by(metadata: Mapping[str, Any]) -> str:
    """The stored mark: ``"self"``, the board judge's name, or ``""`` (no verdicts involved)."""
    value = metadata.get(JUDGE_KEY)
    return value if isinstance(value, str) else ""
