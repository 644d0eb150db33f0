"""Per-task mapping from a foreign log's per-item output to a procbench prediction record.

Each task declares its mapping in its spec, as an ``import`` block: which kind of output the task
takes (an option index, or a list of texts split from one generation), which prediction field it
fills, where the item id is in the logged item, and (optionally) a registered ``import_check``
component that tells whether a logged item is the gold item it claims to be.  A task whose spec has
no ``import`` block cannot be imported.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from procbench.imports.logged import LoggedOutput

Kind = Literal["choice", "text_list"]
Checker = Callable[[LoggedOutput, Any], str | None]
_KINDS: dict[str, Kind] = {"choice": "choice", "text_list": "text_list"}


def _kind(spelled: str) -> Kind:
    """An ``import`` block's kind, which the checker has limited to the two above."""
    if spelled not in _KINDS:
        raise ValueError(f"not an import kind: {spelled!r} (choice or text_list)")
    return _KINDS[spelled]


@dataclass(frozen=True)
class ImportMapping:
    """How one task's prediction records are made from logged outputs."""

    task: str
    kind: Kind
    prediction_field: str  # the prediction record's value field ("label", "answers")
    id_fields: tuple[
        str, ...
    ]  # paths into LoggedOutput.fields tried in order; then the log's own sample id
    id_type: type = str  # int for row-indexed tasks
    n_choices: int = 0  # choice: options per item (letters A.. map to 0..)
    separator: str = ""  # text_list: the generation is split on this
    check: Checker | None = (
        None  # None when the logged item agrees with the gold item, else why not
    )
    notes: str = ""

    @property
    def letters(self) -> str:
        return string.ascii_uppercase[: self.n_choices]


def _from_spec(task: str) -> ImportMapping | None:
    """The task's ``import`` block (the first one) as an ImportMapping; None when it declares none."""
    from procbench.api import load_task
    from procbench.runners.runtime import registry

    spec, _ = load_task(task)
    if not spec.imports:
        return None
    block = spec.imports[0]
    check: Checker | None = None
    if block.check is not None:
        bound = registry.get("import_check", block.check.name).bind(**block.check.kwargs_dict())

        def check(output: LoggedOutput, gold: Any) -> str | None:
            return bound(output.fields, output.choice_texts, gold)

    return ImportMapping(
        task=spec.name,
        kind=_kind(block.kind),
        prediction_field=block.field,
        id_fields=block.id_fields,
        id_type=int if block.id_type == "int" else str,
        n_choices=block.choices,
        separator=block.separator,
        check=check,
        notes=block.notes,
    )


class _SpecMappings(Mapping[str, ImportMapping]):
    """Task name -> mapping, read from the shipped specs' ``import`` blocks (on first use)."""

    def _all(self) -> dict[str, ImportMapping]:
        from procbench.api import all_spec_paths

        if not hasattr(self, "_cache"):
            found = {}
            for path in all_spec_paths():
                mapping = _from_spec(path.stem)
                if mapping is not None:
                    found[path.stem] = mapping
            self._cache = found
        return self._cache

    def __getitem__(self, task: str) -> ImportMapping:
        return self._all()[task]

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


MAPPINGS: Mapping[str, ImportMapping] = _SpecMappings()


def mapping_for(task: str) -> ImportMapping:
    """The mapping of a task; KeyError naming the tasks that have one."""
    try:
        return MAPPINGS[task]
    except KeyError:
        raise KeyError(
            f"no import mapping for task {task!r} (tasks with one: {', '.join(sorted(MAPPINGS))})"
        ) from None
