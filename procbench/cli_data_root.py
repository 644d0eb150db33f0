"""What ``procbench score`` and ``submit`` say about the data root they read (issue #29: no silent sample data).

Both print one line to stderr (so ``--json`` on stdout stays one JSON object): the data root and its
kind (``procbench.runners.runtime.data_kind``), saying so when it is the bundled samples and how to point at the real
data.  A file refused against the samples because its ids are not sample ids gets one message naming
``PROCBENCH_DATA`` instead of a problem per line.  Kept light: the lean ``score`` imports it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from procbench.runners.runtime import data_kind


def announce(spec: str, task: str, split: str, root: Path) -> str:
    """Print the data-root line to stderr; returns the data kind (``real``, ``sample``, ``unverified``, ``unlocked``)."""
    from procbench.dsl.tasks import spec_path

    try:
        kind = data_kind.kind_of(spec_path(spec), split, root)
    except (
        FileNotFoundError,
        ValueError,
    ):  # the spec was loaded by name or path already; a vanished file is only a note lost
        kind = data_kind.SAMPLE if data_kind.is_sample_root(root) else data_kind.UNVERIFIED
    sys.stderr.write(data_kind.describe(root, kind, task, split) + "\n")
    sys.stderr.flush()
    return kind


def refusal(exc: Any, runner: Any, root: Path, split: str, kind: str) -> str:
    """What to print for a refused file (``procbench.runners.runtime._types.InvalidPredictions``): its problems,
    or one message when its ids are not sample ids."""
    if kind != data_kind.SAMPLE:
        return str(exc.render())
    try:
        gold, _ = runner.gold(root, split)
        items: int | None = len(gold.items)
    except (FileNotFoundError, ValueError):
        items = None
    single = data_kind.sample_mismatch(
        exc.problems, exc.count, items=items, task=runner.name, split=split, source=exc.source
    )
    if not single:
        return f"{exc.render()}\n  note: {data_kind.describe(root, kind, runner.name, split)}"
    shown = [p.render(exc.source) for p in exc.problems[:3]]
    return "\n".join([single, "  the first problems:", *(f"    {line}" for line in shown)])
