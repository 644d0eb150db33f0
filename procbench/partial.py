"""Partial runs: score only the items a prediction file answers (a harness run with ``--limit``).

A partial score is computed over the scored items alone, reports its coverage, and is never a
board result: ``procbench submit`` refuses it, and its result says ``partial: true``.  The gold is
restricted to the ids the file names, so the task's own validator and scorer run unchanged (ids
that are not items of the split are still refused).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.runners.runtime._types import GoldSet

JSON_LINE_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class Coverage:
    """How much of the split a partial run scored."""

    scored: int
    total: int
    missing: tuple[str, ...] = ()  # the first unscored ids, in the split's order

    @property
    def fraction(self) -> float:
        return self.scored / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "scored": self.scored,
            "total": self.total,
            "fraction": self.fraction,
            "missing_first": list(self.missing),
        }


def prediction_ids(path: Path) -> list[str]:
    """The item ids a prediction file names (JSON lines with ``id``, or CSV with an ``id`` column); ValueError otherwise."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in JSON_LINE_SUFFIXES or text.lstrip().startswith("{"):
        ids = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue  # the validator reports the line with its number (a too-deep line too, never a RecursionError)
            if isinstance(record, dict) and "id" in record and record["id"] is not None:
                ids.append(str(record["id"]))
        return ids
    if path.suffix.lower() == ".csv":
        rows = csv.DictReader(text.splitlines())
        if rows.fieldnames and "id" in [f.strip() for f in rows.fieldnames]:
            return [str(row.get("id", "")).strip() for row in rows if row.get("id")]
    raise ValueError(
        f"--partial needs a prediction file that names its items (JSON lines with an 'id', or a CSV with an 'id' column); {path.name} does not"
    )


def restrict(gold: GoldSet, ids: list[str]) -> tuple[GoldSet, Coverage]:
    """The gold of the named items only (split order kept), and the coverage of the split."""
    wanted = set(ids)
    keep = [item_id for item_id in gold.items if item_id in wanted]
    if not keep:
        raise ValueError(
            "the prediction file names none of the split's items: nothing to score (another split or task?)"
        )
    kept = set(keep)
    subset = GoldSet(
        items={i: gold.items[i] for i in keep},
        labels={i: v for i, v in gold.labels.items() if i in kept},
        answer_views={
            dim: {
                value: {i: g for i, g in view.items() if i in kept}
                for value, view in values.items()
            }
            for dim, values in gold.answer_views.items()
        },
        origins={i: o for i, o in gold.origins.items() if i in kept},
    )
    missing = tuple(i for i in gold.items if i not in kept)
    return subset, Coverage(len(keep), len(gold.items), missing[:10])
