"""Whether ``procbench score`` streams a run (runners/runtime/streaming.py), decided without importing the streamed path.

A 1x score asks only this: its input is far below :data:`STREAM_BYTES`, and the streamed path (its
flat arrays, spill and fingerprint writer) is not imported (issue #31).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from procbench.runners.runtime.predictions import SchemaReader
from procbench.runners.runtime.runner import TaskRunner

STREAM_BYTES = int(
    os.environ.get("PROCBENCH_STREAM_BYTES", 64 * 1024 * 1024)
)  # gold + predictions above this: streamed


def applies(runner: TaskRunner, split: str, metadata: Mapping[str, Any] | None = None) -> bool:
    """Whether ``streaming.evaluate`` gives this task's ``evaluate`` result (every stage item-wise, JSON-lines files)."""
    from procbench.runners.runtime.tables import TableReader

    reader, predictions = runner.read_gold, runner.read_predictions
    return (
        isinstance(reader, TableReader)
        and reader.streamable(split)
        and isinstance(predictions, SchemaReader)
        and predictions.format == "jsonl"
        and getattr(runner.make_scorer(metadata or {}), "ITEM_WISE", False) is True
    )


def input_bytes(runner: TaskRunner, data_root: Path, split: str, predictions: Path) -> int:
    """The size of the files a score reads (gold sources of the split and the prediction file); 0 where unknown."""
    total = 0
    for source in getattr(runner.read_gold, "sources", ()):
        if source.splits and split not in source.splits:
            continue
        try:
            total += (Path(data_root) / source.path.format(split=split)).stat().st_size
        except OSError:
            pass
    try:
        total += predictions.stat().st_size
    except OSError:
        pass
    return total


def chosen(
    runner: TaskRunner,
    data_root: Path,
    split: str,
    predictions: Path,
    metadata: Mapping[str, Any] | None = None,
) -> bool:
    """Whether ``procbench score`` streams this run: the task allows it and its input is over STREAM_BYTES."""
    return input_bytes(runner, data_root, split, predictions) >= STREAM_BYTES and applies(
        runner, split, metadata
    )
