"""Reference baselines that write real prediction files, registered by name (``procbench baseline NAME``).

Each baseline reads only what a system is given (item ids, the document, the participants, the
number of sentences; PARADISE's majority also reads the dev labels) and writes a file in the task's
own prediction format, to be scored or submitted like any other.  Nothing heavy is imported here:
torch and transformers load only when an embedding baseline runs.  Each baseline also says what the
board's model card shows for it (``BaselineCard``) and, for a neural one, which distributions it
needs (``installed_versions``): their versions key the reused prediction files of ``procbench.runners.baselines.cache``.

* ``openpi-no-change``: "There will be no change." for every step (OpenPI, both scorers);
* ``openpi-copy-step``: the step's own sentence as its one state change (OpenPI, both scorers);
* ``propara-all-none``: every participant NONE at every step, locations ``?`` (ProPara leaderboard);
* ``propara-most-frequent-action``: the train split's most frequent change at the first sentence naming the participant;
* ``propara-naacl18-all-unknown``: every participant at an unknown location at every step (NAACL'18);
* ``paged-sentence-chain``: the document's sentences in order as one chain of activities, Start to End;
* ``paged-clause-chain``: the document's clauses as a chain, "If C, A" as an exclusive gateway with condition C;
* ``paradise-random`` / ``paradise-majority`` / ``paradise-embedding``: see ``procbench.runners.baselines.paradise``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
class BaselineCard:
    """What the board's model card says about a baseline (the values intake's ``ModelCard`` accepts)."""

    method_family: str = "heuristic"  # a rule, no training
    size_class: str = "none"  # no learned weights
    weights: str = "open"  # nothing is withheld: the rule is this repository's code
    parameters: str = ""
    paper_url: str = ""
    code_url: str = ""


@dataclass(frozen=True)
class Baseline:
    """A registered baseline: which tasks it predicts for, and how it writes its file."""

    name: str
    tasks: tuple[str, ...]
    description: str
    suffix: str  # the prediction file's extension
    write: Writer
    heavy: bool = False  # loads a neural model (slow on CPU); the demo runs it only when that model is installed
    card: BaselineCard = field(default_factory=BaselineCard)
    version: int = 1  # raise it when the same inputs would give other predictions (a reused file is keyed by it)
    requires: tuple[
        str, ...
    ] = ()  # the distributions (PyPI names) it imports, whose versions its predictions depend on


REGISTRY: dict[str, Baseline] = {}


def baseline(
    name: str,
    *,
    tasks: tuple[str, ...],
    suffix: str,
    heavy: bool = False,
    card: BaselineCard | None = None,
    version: int = 1,
    requires: tuple[str, ...] = (),
) -> Callable[[Writer], Writer]:
    """Register a writer under ``name`` (its docstring's first line is the description)."""

    def register(write: Writer) -> Writer:
        if name in REGISTRY:
            raise ValueError(f"baseline {name!r} is registered twice")
        description = (write.__doc__ or "").strip().splitlines()[0]
        REGISTRY[name] = Baseline(
            name,
            tasks,
            description,
            suffix,
            write,
            heavy,
            card or BaselineCard(),
            version,
            requires,
        )
        return write

    return register


def installed_versions(chosen: Baseline) -> dict[str, str] | None:
    """The installed version of each distribution ``chosen`` requires; None when one is missing (nothing is imported)."""
    versions = {}
    for distribution in chosen.requires:
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            return None
    return versions


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
    from procbench.runners.baselines import simple  # noqa: F401 - registers the baselines on import
