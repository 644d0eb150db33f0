"""Similarities composed in a spec's ``similarity`` block, beyond ``use`` and ``same``/``mean``.

A block compiles to one tree of these components (docs/language.md, "Composed similarities"):

- ``use = X  on = text``: ``X`` applied to one member of two records (:class:`OnField`); a record without it
  (``None``, e.g. a flow without a head) scores 0;
- ``same = [kind]  cases = kind  when { StartNode = one() }  otherwise = X``: the similarity chosen by the
  value of one member of the first record (:class:`Cases`);
- ``same = [flow, head.kind]  all = [a, b]``: the product of several similarities, so 0/1 parts read as
  "all of" (:class:`AllOf`); with no parts, 1 where the ``same`` members are equal;
- ``use = X  at_least = 0.5``: 1 where ``X`` reaches the threshold, else 0 (:class:`AtLeast`);
- ``one()``: 1 for any pair.

Every ``same`` member may be a dotted path (``head.kind``); a path through a missing member gives None, and
two Nones are equal.  ``score(a, b)`` keeps its arguments' roles: the walks of :mod:`procbench.runners.library.alignment`
pass the side being walked first, which matters for asymmetric similarities such as BLEU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from procbench.runners.runtime.predictions import member_of
from procbench.runners.runtime.registry import SimilarityParts, component
from procbench.runners.library.similarity import Similarity  # noqa: TC001


def member_at(record: Any, path: str) -> Any:
    """``record``'s member at a dotted path; None where any step is missing or None."""
    if (
        type(record) is dict and "." not in path
    ):  # the common case (a deriver's records), without the general walk
        return record.get(path)
    value = record
    for name in _steps(path):
        if value is None:
            return None
        value = value.get(name) if type(value) is dict else member_of(value, name)
        if type(value) is object:  # member_of's sentinel for an absent member
            return None
    return value


@lru_cache(maxsize=1024)
def _steps(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _differ(a: Any, b: Any, same: Sequence[str]) -> bool:
    """Whether two records differ in any ``same`` member (looked up one at a time: most pairs differ in the first)."""
    for path in same:
        if member_at(a, path) != member_at(b, path):
            return True
    return False


def score_pair(similarity: Similarity, a: Any, b: Any) -> float:
    """``similarity`` of two values as they are (each prepared first, unless the similarity compares records as they are)."""
    if (
        type(similarity) in _RECORDS_AS_THEY_ARE
    ):  # their prepare keeps the record: not called (the walks call these millions of times)
        return similarity.score(a, b)
    return similarity.score(similarity.prepare(a), similarity.prepare(b))


@dataclass(frozen=True)
class One:
    """1 for every pair (a node kind that matches by its kind alone)."""

    name: str = "one"
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, value: Any) -> None:
        return None

    def score(self, a: Any, b: Any) -> float:
        return 1.0


@component("similarity", "one", takes="any", gives="float")
def one() -> Similarity:
    """1 for every pair: in ``cases``, a kind that matches by its kind alone (upstream's start and end nodes)."""
    return One()


@dataclass(frozen=True)
class OnField:
    """``similarity`` applied to one member of each record; 0 where either record lacks it (None).

    The composed similarities compare records as they are (``prepare`` keeps them), looking up only
    what a pair needs: a pair whose ``same`` members differ is not compared further.
    """

    path: str
    similarity: Similarity
    name: str = "on_field"
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, record: Any) -> Any:
        return record

    def score(self, a: Any, b: Any) -> float:
        x, y = member_at(a, self.path), member_at(b, self.path)
        if x is None or y is None:
            return 0.0
        return score_pair(self.similarity, x, y)


@component("similarity", "on_field", takes="any", gives="float")
def on_field(field: str, similarity: SimilarityParts) -> Similarity:
    """``use = X  on = field`` in a similarity block: ``X`` compares one member of two records (None: 0)."""
    return OnField(field, similarity)  # type: ignore[arg-type]  # a built similarity: the block's `use`


@dataclass(frozen=True)
class Cases:
    """0 unless the ``same`` members are equal; else the similarity named for the first record's ``field`` value."""

    same: tuple[str, ...]
    field_path: str
    when: tuple[tuple[str, Similarity], ...]
    otherwise: Similarity
    name: str = "cases"
    scores_empty_text: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_chosen", dict(self.when)
        )  # value -> similarity, looked up per record

    def _choose(self, key: Any) -> Similarity:
        return self._chosen.get(key, self.otherwise) if isinstance(key, str) else self.otherwise  # type: ignore[attr-defined]

    def prepare(self, record: Any) -> Any:
        return record

    def score(self, a: Any, b: Any) -> float:
        if _differ(a, b, self.same):
            return 0.0
        return score_pair(self._choose(member_at(a, self.field_path)), a, b)


@component("similarity", "cases", takes="any", gives="float")
def cases(
    same: list[str], field: str, when: SimilarityParts, otherwise: SimilarityParts
) -> Similarity:
    """``cases = kind  when { V = X ... }  otherwise = Y``: records compared by the similarity their ``kind`` names.

    ``same`` members must be equal first (else 0); the case is chosen by the first record's value.
    """
    return Cases(tuple(same), field, tuple((str(value), sim) for value, sim in when), otherwise)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AllOf:
    """0 unless the ``same`` members are equal; else the product of the parts (1 with no parts), multiplied in order."""

    same: tuple[str, ...]
    parts: tuple[Similarity, ...]
    name: str = "all_of"
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, record: Any) -> Any:
        return record

    def score(self, a: Any, b: Any) -> float:
        if _differ(a, b, self.same):
            return 0.0
        value = 1.0
        for part in self.parts:
            value *= score_pair(part, a, b)
            if not value:
                return 0.0  # later parts cannot raise it: not computed
        return value


@component("similarity", "all_of", takes="any", gives="float")
def all_of(same: list[str], parts: SimilarityParts) -> Similarity:
    """``same = [...]  all = [X, Y]``: 0 unless the ``same`` members are equal, else the product of the parts."""
    return AllOf(tuple(same), tuple(parts))


@dataclass(frozen=True)
class AtLeast:
    """1 where ``similarity`` reaches ``threshold``, else 0."""

    similarity: Similarity
    threshold: float
    name: str = "at_least"
    scores_empty_text: bool = field(default=True, init=False)

    def prepare(self, value: Any) -> Any:
        return self.similarity.prepare(value)

    def score(self, a: Any, b: Any) -> float:
        return 1.0 if self.similarity.score(a, b) >= self.threshold else 0.0


@component("similarity", "at_least", takes="any", gives="float")
def at_least(similarity: SimilarityParts, threshold: float) -> Similarity:
    """``use = X  at_least = 0.5``: 1 where ``X`` scores at least the threshold, else 0."""
    return AtLeast(similarity, threshold)  # type: ignore[arg-type]


_RECORDS_AS_THEY_ARE = frozenset({One, OnField, Cases, AllOf})
