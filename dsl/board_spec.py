"""What intake needs of a checked spec to store a submission, carried by the task's cached plan (issue #31).

On its way to the store a submission needs few facts of its spec: the task's name, splits and
display fields, the spec as JSON (the ``tasks`` row keeps it) and whether a judge grades it.  Reading
them from the checked spec meant unpickling it, which imports its syntax tree
(``procbench.dsl.model``: a frozen dataclass per block, whose methods Python compiles at import,
about a sixth of a new submission's CPU beyond a score's).  So the compiler writes them into the plan
(:func:`plan_fields`, beside the name, splits and primary metric the plan has for the runner) and a
:class:`BoardSpec` made from the plan carries them.  Intake reads the whole spec from the spec cache
only where it needs more: a new fingerprint's provenance (its fetch entries), a refusal in
``check --data``'s words, the board's judge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from procbench.runners.runtime.judge_terms import JUDGE

if TYPE_CHECKING:
    from procbench.dsl.model import TaskSpec

PLAN_KEY = "board"  # the plan's entry holding :func:`plan_fields`


def plan_fields(spec: TaskSpec) -> dict[str, Any]:
    """What a plan adds for intake to what it holds for the runner (plain data, as ``procbench.dsl.plan.is_plain`` wants)."""
    return _display(spec) | {"spec_json": spec_json(spec)}


def _display(spec: TaskSpec) -> dict[str, Any]:
    return {
        "title": spec.title,
        "benchmark": spec.benchmark,
        "version": spec.version,
        "judged": spec.template(JUDGE) is not None,
    }


def spec_json(spec: TaskSpec) -> str:
    """The checked spec as the ``tasks`` row keeps it."""
    return json.dumps(spec.to_dict(), default=str)


def _names(value: Any) -> tuple[str, ...] | None:
    """A plan's tuple of names, or None when it is not one."""
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return value
    return None


def board_of(spec: TaskSpec | BoardSpec) -> BoardSpec:
    """The board fields of a checked spec, or the ones given."""
    return spec if isinstance(spec, BoardSpec) else BoardSpec.of(spec)


class BoardSpec:
    """A checked spec as intake stores it: its name, splits, display fields, JSON and whether a judge grades it.

    :meth:`whole` gives the checked spec itself (read once, when first asked for).
    """

    __slots__ = (
        "name",
        "title",
        "benchmark",
        "version",
        "primary",
        "splits",
        "hidden",
        "judged",
        "_json",
        "_whole",
        "_spec",
    )
    name: str
    title: str
    benchmark: str
    version: str
    primary: str
    splits: tuple[str, ...]
    hidden: tuple[str, ...]
    judged: bool

    def __init__(
        self,
        name: str,
        splits: tuple[str, ...],
        hidden: tuple[str, ...],
        primary: str,
        fields: Mapping[str, Any],
        whole: Callable[[], TaskSpec],
    ) -> None:
        self.name, self.splits, self.hidden, self.primary = name, splits, hidden, primary
        self.title, self.benchmark, self.version = (
            fields["title"],
            fields["benchmark"],
            fields["version"],
        )
        self.judged = fields["judged"]
        self._json: str | None = fields.get("spec_json")
        self._whole = whole
        self._spec: TaskSpec | None = None

    @property
    def spec_json(self) -> str:
        """The checked spec as JSON, as the ``tasks`` row keeps it (written from the whole spec when the plan did not carry it)."""
        if self._json is None:
            self._json = spec_json(self.whole())
        return self._json

    @classmethod
    def of(cls, spec: TaskSpec) -> BoardSpec:
        """The board fields of a checked spec at hand."""
        board = cls(
            spec.name,
            tuple(spec.data.splits),
            tuple(spec.data.hidden),
            spec.primary,
            _display(
                spec
            ),  # its JSON written when first asked for (a file stored already never needs it)
            lambda: spec,
        )
        board._spec = spec
        return board

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any], whole: Callable[[], TaskSpec]) -> BoardSpec | None:
        """The board fields a plan carries; None when it carries none or they are not what :func:`plan_fields` writes
        (an older plan, or a damaged one: the caller then reads the checked spec)."""
        fields = plan.get(PLAN_KEY)
        if not isinstance(fields, Mapping):
            return None
        texts = ("title", "benchmark", "version", "spec_json")
        if not all(isinstance(fields.get(k), str) for k in texts) or not isinstance(
            fields.get("judged"), bool
        ):
            return None
        name, primary = plan.get("name"), plan.get("primary")
        splits, hidden = _names(plan.get("splits")), _names(plan.get("hidden"))
        if (
            not (isinstance(name, str) and isinstance(primary, str))
            or splits is None
            or hidden is None
        ):
            return None
        return cls(name, splits, hidden, primary, fields, whole)

    def whole(self) -> TaskSpec:
        """The checked spec these fields were written from (ValueError when the spec changed since into another task's)."""
        if self._spec is None:
            spec = self._whole()
            if spec.name != self.name:
                raise ValueError(
                    f"the spec of task {self.name!r} changed while it was in use (it now names {spec.name!r}): try again"
                )
            self._spec = spec
        return self._spec
