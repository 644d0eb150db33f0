"""Generated metric names the checker refuses: two outputs of the spec's measures under one name.

Per-class and confusion measures name their outputs after the classes, through ``procbench.runners.runtime.names.name_part``
(docs/language.md, "Generated names"), so every generated name is one a spec can write in ``rank_by``, a
``metric`` block or a formula.  The substitution can make two classes one name (``"more likely"`` and
``"more_likely"``); a measure's output can also take another measure's name (``f1`` per class with a class
``p`` gives ``f1_p``, and a measure may be called ``f1_p``).  Either would store two numbers under one
name, so each is an error at the measure responsible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from procbench.dsl import model as m
from procbench.dsl.binding import Binder
from procbench.runners.runtime.names import name_part


def check_generated_names(ck: Binder, measured: Sequence[tuple[m.MeasureSpec, Any]]) -> None:
    """One error per measure whose outputs repeat a name (its own, or an earlier measure's)."""
    owner: dict[str, m.MeasureSpec] = {}
    for ms, metric in measured:
        labels = tuple(getattr(metric, "labels", ()) or ())
        seen: set[str] = set()
        for name in ms.outputs:
            if name in seen:
                ck.error(
                    m.span_of(ms, "metric"),
                    f"measure {ms.name!r}: {_classes_behind(labels, name)}",
                    _HINT,
                )
                break
            seen.add(name)
            first = owner.get(name)
            if first is not None and first.name != ms.name:
                ck.error(
                    m.span_of(ms, "metric") if ms.metric is not None else m.span_of(ms, "<label>"),
                    f"measure {ms.name!r} produces the metric {name!r}, which measure {first.name!r} (line {m.span_of(first, '<label>').line}) produces too",
                    "rename one of the two measures",
                )
                break
        for name in ms.outputs:
            owner.setdefault(name, ms)


_HINT = "in a generated name each run of characters other than letters, digits, '_' and '-' becomes '_'; rename a class or pick other labels"


def _classes_behind(labels: Sequence[str], name: str) -> str:
    """Why ``name`` is generated twice: two classes that become one name part, when that is it."""
    parts: dict[str, str] = {}
    for label in map(str, labels):
        part = name_part(label)
        if part in parts and part in name:
            return f"classes {parts[part]!r} and {label!r} both become {part!r} in a generated name, so {name!r} would name two numbers"
        parts.setdefault(part, label)
    return f"the metric name {name!r} is generated twice from its classes, so it would name two numbers"
