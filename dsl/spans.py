"""Where a spec's parts were written: :class:`Span` (re-exported by ``procbench.dsl.syntax``).

Apart from the syntax tree so that what only locates (the checked model, its errors) loads no tree
classes: ``procbench submit`` reads a checked spec from the spec cache, whose spans are these (issue #31).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int


NOWHERE = Span(0, 0, 0, 0)
