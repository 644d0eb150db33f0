"""Importing per-item outputs logged by other harnesses as procbench prediction files.

    >>> from procbench.imports import import_log
    >>> imported = import_log("lm-eval", "samples_paradise_tip_2026-01-01.jsonl", "paradise-tip", split="test")
    >>> imported.write_jsonl("preds.jsonl")

Formats: ``lm-eval`` (lm-evaluation-harness ``--log_samples`` JSONL) and ``inspect`` (Inspect
``.eval`` / ``.json`` logs).  Which field an output fills, and where an item's id is, comes from the
per-task table in :mod:`procbench.imports.mapping`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from procbench.imports.convert import Imported, ImportOptions, to_records
from procbench.imports.logged import ImportFailed, ImportProblem, LoggedOutput
from procbench.imports.mapping import MAPPINGS, ImportMapping, mapping_for

Format = Literal["lm-eval", "inspect"]
FORMATS: tuple[str, ...] = ("lm-eval", "inspect")


def read_outputs(
    fmt: Format,
    path: str | Path,
    *,
    filter_name: str | None = None,
    raw: bool = False,
    epoch: int = 1,
) -> list[LoggedOutput]:
    """The per-item outputs of one log file of format ``fmt``; raises ImportFailed."""
    if fmt == "lm-eval":
        from procbench.imports.lm_eval import read_samples

        return read_samples(Path(path), filter_name=filter_name, raw=raw)
    if fmt == "inspect":
        from procbench.imports.inspect_log import read_log

        return read_log(Path(path), epoch=epoch)
    raise ValueError(f"unknown log format {fmt!r}; expected one of {', '.join(FORMATS)}")


def import_log(
    fmt: Format,
    path: str | Path,
    task: str,
    *,
    split: str | None = None,
    data_dir: str | Path | None = None,
    options: ImportOptions = ImportOptions(),
    filter_name: str | None = None,
    raw: bool = False,
    epoch: int = 1,
) -> Imported:
    """Read a foreign log and map it onto ``task``; with ``split``, check ids and items against the gold.

    Raises ImportFailed (every problem listed), KeyError (no mapping for the task), FileNotFoundError
    (gold data missing for ``split``).
    """
    mapping = mapping_for(task)
    outputs = read_outputs(fmt, path, filter_name=filter_name, raw=raw, epoch=epoch)
    counts = None
    if fmt == "inspect" and any(
        o.error is not None for o in outputs
    ):  # the run's own count, quoted beside its errored samples
        from procbench.imports.inspect_log import run_counts

        counts = run_counts(Path(path))
    gold = None
    if split is not None:
        from procbench.api import load_task
        from procbench.paths import resolve_data_root

        _, runner = load_task(task)
        gold, _ = runner.gold(resolve_data_root(data_dir), split)
    return to_records(
        outputs, mapping, gold=gold, options=options, source=str(path), run_counts=counts
    )


__all__ = [
    "FORMATS",
    "MAPPINGS",
    "ImportFailed",
    "ImportMapping",
    "ImportOptions",
    "ImportProblem",
    "Imported",
    "LoggedOutput",
    "import_log",
    "mapping_for",
    "read_outputs",
]
