"""Filters: transform a prediction's answer list before matching (composable, in spec order)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from procbench.runners.runtime.registry import component

AnswerFilter = Callable[[Sequence[str]], list[str]]


@component("filter", "empty_if_single_prefix", takes="list(str)", gives="list(str)")
def empty_if_single_prefix(prefix: str) -> AnswerFilter:
    """A list of exactly one answer that (lower-cased, stripped) starts with ``prefix`` becomes empty.

    OpenPI's driver does this with "there will be no change" before scoring.
    """
    needle = prefix.lower()

    def apply(answers: Sequence[str]) -> list[str]:
        if len(answers) == 1 and answers[0].lower().strip().startswith(needle):
            return []
        return list(answers)

    return apply


@component("filter", "drop_empty", takes="list(str)", gives="list(str)")
def drop_empty() -> AnswerFilter:
    """Remove answers that are empty after stripping whitespace."""
    return lambda answers: [a for a in answers if a.strip()]


@component("filter", "distinct", takes="list(str)", gives="list(str)")
def distinct() -> AnswerFilter:
    """Keep the first occurrence of each answer (raw string identity)."""
    return lambda answers: list(dict.fromkeys(answers))
