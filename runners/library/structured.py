"""Similarities of structured answers: phrases of AND-groups of OR-alternatives, and records.

``phrase_overlap`` is the pair similarity of the ProPara leaderboard evaluator (docs/metrics.md
§2A.5), written once as a library similarity with its quirks as named parameters; no library
computes it.  ``record_mean`` compares records (a conversion, a move) field by field: a pair whose
``same`` fields differ scores 0, any other the mean of its fields' similarities.  A spec writes it
as a ``similarity`` block::

    similarity move { same = [step]  mean { participant = participant  before = location  after = location } }
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

from procbench.runners.runtime._types import PredictionWarning
from procbench.runners.runtime.predictions import member_of
from procbench.runners.runtime.records import Record
from procbench.runners.runtime.registry import NormaliserName, SimilarityParts, component
from procbench.runners.library import protocols
from procbench.runners.library.protocols import Similarity  # noqa: TC001
from procbench.runners.library.text import IDENTITY, Pipeline

BlankAlternative = Literal["keep", "empties_group"]
Groups = Literal["all_pairs", "one_to_one"]


class PhraseOverlap(Record):
    """Overlap of two phrases ``a OR b AND c``: |intersecting group pairs| / (|A| + |P| - overlap).

    Equal raw phrases score 1 before anything else.  The value is not clamped: with ``groups =
    "all_pairs"`` (upstream) one group may meet several, so it can exceed 1 or be negative.  A zero
    denominator (every group meets every other) crashes upstream; it scores ``on_zero_denominator``
    here, with a warning.
    """

    __slots__ = (
        "alternatives",
        "blank_alternative",
        "groups",
        "on_zero_denominator",
        "and_separator",
        "or_separator",
        "name",
        "scores_empty_text",
        "_prepared",
    )
    _hidden = frozenset({"_prepared"})
    _not_init = frozenset({"scores_empty_text", "_prepared"})
    alternatives: Pipeline
    blank_alternative: BlankAlternative
    groups: Groups
    on_zero_denominator: float
    and_separator: str
    or_separator: str
    name: str
    # Empty text is scored by the phrase rules themselves, not by a matcher's empty-answer guard.
    scores_empty_text: bool
    # text -> its prepared form: a record's parts (a conversion's locations, a move's participant) are
    # prepared again for every record that holds them, and the form depends on the text alone
    _prepared: dict[str, tuple[str, tuple[frozenset[str], ...]]]

    def __init__(
        self,
        alternatives: Pipeline = IDENTITY,
        blank_alternative: BlankAlternative = "keep",
        groups: Groups = "all_pairs",
        on_zero_denominator: float = 1.0,
        and_separator: str = " AND ",
        or_separator: str = " OR ",
        name: str = "phrase_overlap",
    ) -> None:
        object.__setattr__(self, "alternatives", alternatives)
        object.__setattr__(self, "blank_alternative", blank_alternative)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "on_zero_denominator", on_zero_denominator)
        object.__setattr__(self, "and_separator", and_separator)
        object.__setattr__(self, "or_separator", or_separator)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "scores_empty_text", True)
        object.__setattr__(self, "_prepared", {})

    def prepare(self, text: str) -> tuple[str, tuple[frozenset[str], ...]]:
        prepared = self._prepared
        hit = prepared.get(text)
        if hit is None:
            if len(prepared) >= protocols.PREPARED_LIMIT:
                prepared.clear()
            hit = prepared[text] = self._prepare(text)
        return hit

    def _prepare(self, text: str) -> tuple[str, tuple[frozenset[str], ...]]:
        groups = []
        for group in text.split(self.and_separator):
            items = group.strip().split(self.or_separator)
            if self.blank_alternative == "empties_group" and any(
                not item.strip() for item in items
            ):
                groups.append(
                    frozenset({""})
                )  # upstream's location rule: a blank alternative empties its group
            else:
                groups.append(frozenset(self.alternatives(item) for item in items))
        return text, tuple(groups)

    def score(
        self,
        gold: tuple[str, tuple[frozenset[str], ...]],
        prediction: tuple[str, tuple[frozenset[str], ...]],
    ) -> float:
        if gold[0] == prediction[0]:
            return 1.0
        a, p = gold[1], prediction[1]
        overlap = (
            _one_to_one(a, p)
            if self.groups == "one_to_one"
            else sum(1 for ga in a for gp in p if ga & gp)
        )
        denominator = len(a) + len(p) - overlap
        if denominator == 0:
            warnings.warn(
                PredictionWarning(
                    f"similarity of {gold[0]!r} and {prediction[0]!r} has a zero denominator (upstream crashes); scored {self.on_zero_denominator}"
                ),
                stacklevel=2,
            )
            return self.on_zero_denominator
        return overlap / denominator


def _one_to_one(a: Sequence[frozenset[str]], p: Sequence[frozenset[str]]) -> int:
    """The most group pairs that intersect with each group used once: a maximum bipartite matching.

    Augmenting paths are searched with an explicit stack, so a phrase of thousands of groups (the
    text is the submitter's) cannot exhaust Python's recursion limit.
    """
    meets = [[j for j, gp in enumerate(p) if ga & gp] for ga in a]
    gold_of: dict[int, int] = {}  # prediction group -> its matched gold group
    prediction_of: dict[int, int] = {}
    for start in range(len(a)):
        reached_from: dict[
            int, int
        ] = {}  # prediction group -> the gold group the search reached it from
        stack = [(start, iter(meets[start]))]
        free = None
        while stack and free is None:
            _, candidates = stack[-1]
            for j in candidates:
                if j in reached_from:
                    continue
                reached_from[j] = stack[-1][0]
                if j in gold_of:
                    stack.append((gold_of[j], iter(meets[gold_of[j]])))
                else:
                    free = j
                break
            else:
                stack.pop()
        while (
            free is not None
        ):  # flip the path: each gold group on it takes the prediction group it reached
            i = reached_from[free]
            previous = prediction_of.get(i)
            gold_of[free], prediction_of[i] = i, free
            free = previous if i != start else None
    return len(prediction_of)


@component("similarity", "phrase_overlap", takes="str", gives="float")
def phrase_overlap(
    *,
    alternatives: NormaliserName | None = None,
    blank_alternative: BlankAlternative = "keep",
    groups: Groups = "all_pairs",
    on_zero_denominator: float = 1.0,
    and_separator: str = " AND ",
    or_separator: str = " OR ",
) -> Similarity:
    """Overlap of AND-groups of OR-alternatives (ProPara's pair similarity); 1 for equal raw phrases.

    ``alternatives``: a normaliser block applied to each alternative (none: compared as written).
    ``blank_alternative = "empties_group"``: a group with a blank alternative is the group {""}
    (upstream's rule for locations).  ``groups = "one_to_one"`` counts intersecting groups with each
    group used once, so the value stays within [0, 1]; ``"all_pairs"`` is upstream's count, which can
    exceed 1.  ``on_zero_denominator``: the value where upstream divides by zero (with a warning).
    """
    return PhraseOverlap(
        alternatives=alternatives if isinstance(alternatives, Pipeline) else IDENTITY,
        blank_alternative=blank_alternative,
        groups=groups,
        on_zero_denominator=on_zero_denominator,
        and_separator=and_separator,
        or_separator=or_separator,
    )


class RecordMean(Record):
    """Records compared field by field: 0 unless the ``same`` fields are equal, else the mean of the parts' scores.

    The parts are added in the order written, then divided by their number, as upstream does.
    """

    __slots__ = ("same", "parts", "name", "scores_empty_text")
    _not_init = frozenset({"scores_empty_text"})
    same: tuple[str, ...]
    parts: tuple[tuple[str, Similarity], ...]
    name: str
    scores_empty_text: bool  # records are not text: no empty-answer guard

    def __init__(
        self,
        same: tuple[str, ...],
        parts: tuple[tuple[str, Similarity], ...],
        name: str = "record_mean",
    ) -> None:
        object.__setattr__(self, "same", same)
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "scores_empty_text", True)

    def prepare(self, record: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        keys = tuple(member_of(record, name) for name in self.same)
        return keys, tuple(
            similarity.prepare(member_of(record, name)) for name, similarity in self.parts
        )

    def score(
        self,
        gold: tuple[tuple[Any, ...], tuple[Any, ...]],
        prediction: tuple[tuple[Any, ...], tuple[Any, ...]],
    ) -> float:
        if gold[0] != prediction[0]:
            return 0.0
        total = sum(
            similarity.score(g, p)
            for (_, similarity), g, p in zip(self.parts, gold[1], prediction[1])
        )
        return total / len(self.parts)


@component("similarity", "record_mean", takes="any", gives="float")
def record_mean(same: list[str], parts: SimilarityParts) -> Similarity:
    """Records: 0 unless the ``same`` fields are equal, else the mean of the fields' similarities (in order).

    Written as a ``similarity`` block, whose ``mean { field = similarity ... }`` gives the parts.
    """
    return RecordMean(tuple(same), tuple((name, sim) for name, sim in parts))
