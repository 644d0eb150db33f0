"""Checks that an item logged by another harness is the PARADISE gold item it claims to be."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from procbench.runners.paradise.data import ParadiseItem
from procbench.runners.runtime.registry import component


@component("import_check", "paradise.same_item")
def same_item(
    fields: Mapping[str, Any], choice_texts: Sequence[str], gold: ParadiseItem
) -> str | None:
    """The logged goal, endings and shown options, where the log has them, must be the gold item's."""
    goal = fields.get("sent2")
    if isinstance(goal, str) and goal.strip() != gold.goal.strip():
        return f"its goal {goal[:60]!r} is not the gold item's {gold.goal[:60]!r} (another split or task?)"
    endings = [fields.get(f"ending{k}") for k in range(4)]
    if all(isinstance(e, str) for e in endings) and [e.strip() for e in endings] != [  # type: ignore[union-attr]
        e.strip() for e in gold.endings
    ]:
        return "its four endings are not the gold item's (another split or task?)"
    shown = [c.strip() for c in choice_texts]
    if len(shown) == 4 and shown != [e.strip() for e in gold.endings]:
        return "its options are not the gold item's endings in the gold order"
    return None
