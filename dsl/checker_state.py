"""What the checker knows while it binds one spec file: the blocks declared so far, what was used, where things were written.

The readers of each block (:mod:`procbench.dsl.checker_read_data`, ``_score``, ``_similarity``, ``_report``) share this state; the
checks after binding (:mod:`procbench.dsl.checker_resolve` and those it calls) read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import Binder, literal


def bare_names(items: Sequence[s.Expr]) -> tuple[str, ...] | None:
    """Each item's name when every item is a bare one-part name (``[a, b]``), else None."""
    names = [i.parts[0] for i in items if isinstance(i, s.Ref) and len(i.parts) == 1]
    return tuple(names) if len(names) == len(items) else None


def texts(pairs: Sequence[s.Pair]) -> dict[str, str] | None:
    """An object's ``key = "text"`` entries when every value is text, else None."""
    found = {p.key: p.value.value for p in pairs if isinstance(p.value, s.Str)}
    return found if len(found) == len(pairs) else None


class CheckerState(Binder):
    """A :class:`Binder` with what the language's readers (``parse_*``) and expansions (``after_*``) record."""

    def __init__(self, path: str, source: str, params: Mapping[str, Any]):
        super().__init__(path, source)
        self.params = dict(params)
        self.normalisers: dict[str, tuple[m.ComponentCall, ...]] = {}
        self.used_normalisers: set[str] = set()
        self.similarities: dict[
            str, m.ComponentCall
        ] = {}  # similarity block -> the call it stands for
        self.used_similarities: set[str] = set()
        self.similarity_blocks: set[str] = set()  # declared, resolved or not
        self.normaliser_blocks: set[str] = (
            set()
        )  # likewise: a use of one whose steps have an error stays silent (one mistake, one error)
        self.similarities_resolved = (
            False  # similarity blocks refer to each other by name until all are read
        )
        self.declared_outputs: list[tuple[str, s.Span]] = []
        self.splits: tuple[str, ...] = ()
        self.source_paths: tuple[
            str, ...
        ] = ()  # the data block's source paths, which a fetch block without files fetches
        self.row_spans: dict[tuple[str, str], s.Span] = {}
        self.note_spans: dict[str, s.Span] = {}
        self.flow_reported: set[tuple[str, str]] = set()
        # a similarity's type mismatch reported (a block is reached from many uses): one mistake, one error
        self.similarity_types_reported: set[tuple[str, s.Span, str]] = set()
        self.source_names: tuple[
            str, ...
        ] = ()  # data: the sources declared (known before explode and fields)
        self.explode_name: str | None = (
            None  # data: the explode block's name, a path root like a source
        )
        self.value_label_spans: list[
            tuple[s.Span, str]
        ] = []  # slices: where each `values { v = "label" }` entry is written

    def params_literal(self) -> dict[str, Any]:
        return {k: literal(v) for k, v in self.params.items() if not isinstance(v, (s.Ref, s.Call))}
