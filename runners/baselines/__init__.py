"""Reference baselines that write real prediction files, registered by name (``procbench baseline NAME``).

Each baseline reads only what a system is given (item ids, the document, the participants, the
number of sentences; PARADISE's majority also reads the dev labels) and writes a file in the task's
own prediction format, to be scored or submitted like any other.  Nothing heavy is imported here:
torch and transformers load only when an embedding baseline runs.

* ``openpi-no-change``: "There will be no change." for every step (OpenPI, both scorers);
* ``propara-all-none``: every participant NONE at every step, locations ``?`` (ProPara leaderboard);
* ``propara-naacl18-all-unknown``: every participant at an unknown location at every step (NAACL'18);
* ``paged-sentence-chain``: the document's sentences in order as one chain of activities, Start to End;
* ``paradise-random`` / ``paradise-majority`` / ``paradise-embedding``: see ``runners.baselines.paradise``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class BaselineInput:
    """What a baseline may read: the task's gold items as its reader gives them (the caller loads them; the
    baselines use only their inputs: ids, documents, participants, sentence counts), and the data root."""

    data_root: Path
    task: str
    split: str
    items: Mapping[str, Any]
    seed: int = 0


# (what it may read, the file to write) -> the file written
Writer = Callable[[BaselineInput, Path], Path]


@dataclass(frozen=True)
class Baseline:
    """A registered baseline: which tasks it predicts for, and how it writes its file."""

    name: str
    tasks: tuple[str, ...]
    description: str
    suffix: str  # the prediction file's extension
    write: Writer
    heavy: bool = False  # loads a neural model (slow on CPU); the demo runs it only on request


REGISTRY: dict[str, Baseline] = {}


def baseline(name: str, *, tasks: tuple[str, ...], suffix: str, heavy: bool = False) -> Callable[[Writer], Writer]:
    """Register a writer under ``name`` (its docstring's first line is the description)."""

    def register(write: Writer) -> Writer:
        if name in REGISTRY:
            raise ValueError(f"baseline {name!r} is registered twice")
        REGISTRY[name] = Baseline(name, tasks, (write.__doc__ or "").strip().splitlines()[0], suffix, write, heavy)
        return write

    return register


def get(name: str) -> Baseline:
    """The baseline registered under ``name``; KeyError with the known names otherwise."""
    _load()
    aliases = {"paradise-embed": "paradise-embedding"}
    found = REGISTRY.get(aliases.get(name, name))
    if found is None:
        raise KeyError(f"unknown baseline {name!r} (known: {', '.join(sorted(REGISTRY))})")
    return found


def for_task(task: str, *, heavy: bool = False) -> list[Baseline]:
    """The baselines that predict for ``task`` (neural ones only with ``heavy``), by name."""
    _load()
    return [b for _, b in sorted(REGISTRY.items()) if task in b.tasks and (heavy or not b.heavy)]


def _load() -> None:
    from runners.baselines import simple  # noqa: F401 - registers the baselines on import
