"""PARADISE baselines that write real prediction files (JSON lines ``{"id": int, "label": int}``).

* ``random``: a seeded uniform draw of one of the 4 endings per item.
* ``majority``: the most frequent gold label of the task's **dev** split, for every item. PARADISE
  ships no train split (shared/data/paradise/SOURCE.md), so dev is the only labelled data available
  that is not the evaluated split; the reverse tasks have no dev split of their own and use the dev
  labels of the forward task (warning or tip). Ties go to the smallest label.
* ``embedding``: the ending whose all-MiniLM-L6-v2 embedding has the highest cosine similarity with
  the prompt (the goal; the tip/warning for reverse tasks); ties go to the first ending.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from procbench.runners.paradise.data import ParadiseItem, Task, load_split

BaselineName = Literal["random", "majority", "embedding"]
BASELINES: tuple[str, ...] = ("random", "majority", "embedding")


def random_labels(items: Mapping[str, ParadiseItem], seed: int = 0) -> dict[str, int]:
    rng = random.Random(seed)
    return {item_id: rng.randrange(4) for item_id in items}


def majority_label(data_root: Path, task: Task) -> int:
    """The most frequent label of the forward task's dev split (smallest label on ties)."""
    forward = task.removeprefix("reverse_")
    counts = Counter(item.label for item in load_split(data_root, forward, "dev").values())  # type: ignore[arg-type]
    return min(counts, key=lambda label: (-counts[label], label))


def embedding_labels(items: Mapping[str, ParadiseItem]) -> dict[str, int]:
    """Argmax over endings of cosine(prompt, ending) with the bundled MiniLM encoder."""
    from procbench.runners.baselines.embedding import load_encoder

    ids = list(items)
    if not ids:
        return {}
    encoder = load_encoder()
    prompts = encoder.encode([items[i].goal for i in ids])
    endings = encoder.encode([ending for i in ids for ending in items[i].endings]).reshape(
        len(ids), 4, -1
    )
    similarity = (endings * prompts.unsqueeze(1)).sum(dim=-1)
    # torch.argmax returns the first maximal index, which makes ties go to the first ending.
    return {item_id: int(label) for item_id, label in zip(ids, similarity.argmax(dim=1).tolist())}


def predict(
    name: BaselineName,
    task: Task,
    split: str,
    data_root: Path,
    seed: int = 0,
    limit: int | None = None,
) -> dict[str, int]:
    """Row index -> predicted ending for the first ``limit`` items (all when None) of (task, split)."""
    items = load_split(Path(data_root), task, split)
    if limit is not None:
        items = dict(list(items.items())[:limit])
    if name == "random":
        return random_labels(items, seed)
    if name == "majority":
        label = majority_label(Path(data_root), task)
        return {item_id: label for item_id in items}
    if name == "embedding":
        return embedding_labels(items)
    raise ValueError(f"unknown PARADISE baseline {name!r}; expected one of {', '.join(BASELINES)}")


def write_predictions(predictions: Mapping[str, int], out_path: Path) -> Path:
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    lines = (
        json.dumps({"id": int(item_id), "label": label}) for item_id, label in predictions.items()
    )
    out_path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out_path


def run_baseline(
    name: BaselineName,
    task: Task,
    split: str,
    data_root: Path,
    out_path: Path,
    seed: int = 0,
    *,
    limit: int | None = None,
) -> Path:
    """Run one baseline on (task, split) and write its JSON-lines prediction file; returns the path."""
    return write_predictions(predict(name, task, split, Path(data_root), seed, limit), out_path)
