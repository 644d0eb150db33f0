"""Text normalisers: small steps that specs compose into pipelines.

Each step is a registered ``normaliser`` component: a factory whose keyword arguments come from the
spec and which returns a ``str -> str`` function.  A :class:`Pipeline` applies its steps in order and
memoises results, because benchmark answers repeat a lot (the same gold string is compared with
every prediction of its item).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Literal

from procbench.runners.runtime.records import Record
from procbench.runners.runtime.registry import component

Step = Callable[[str], str]

# string.punctuation, written out: the string module (a regular expression compiled for its Template) is not
# imported by a score for one constant (issue #31); tests/test_propara_start_up.py keeps the two equal
ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


@component("normaliser", "strip", takes="str", gives="str")
def strip() -> Step:
    """Remove leading and trailing (Unicode) whitespace."""
    return str.strip


@component("normaliser", "lowercase", takes="str", gives="str")
def lowercase() -> Step:
    """Python's full Unicode lower-casing."""
    return str.lower


@component("normaliser", "delete_chars", takes="str", gives="str")
def delete_chars(chars: str) -> Step:
    """Delete every character of ``chars`` (an explicit set: no hidden notion of punctuation)."""
    table = str.maketrans("", "", chars)
    return lambda text: text.translate(table)


@component(
    "normaliser",
    "delete_punctuation",
    takes="str",
    gives="str",
    preset_of=("delete_chars", {"chars": ASCII_PUNCTUATION}),
)
def delete_punctuation() -> Step:
    """``delete_chars`` of the 32 ASCII punctuation characters, Python's ``string.punctuation``; other characters stay.

    A preset: a spec naming it is checked as the spelled-out ``delete_chars(...)`` call, so the two
    spellings give one fingerprint.
    """
    return delete_chars(ASCII_PUNCTUATION)


@component("normaliser", "squeeze_whitespace", takes="str", gives="str")
def squeeze_whitespace() -> Step:
    """Split on any whitespace run and re-join with single spaces (also strips the ends)."""
    return lambda text: " ".join(text.split())


@component("normaliser", "drop_words", takes="str", gives="str")
def drop_words(words: list[str], *, case_insensitive: bool = True) -> Step:
    """Split on single spaces and drop the listed words."""
    stop = frozenset(w.lower() for w in words) if case_insensitive else frozenset(words)
    key = str.lower if case_insensitive else (lambda w: w)
    return lambda text: " ".join(t for t in text.split(" ") if key(t) not in stop)


@component("normaliser", "remove_leading_article", takes="str", gives="str")
def remove_leading_article(articles: list[str]) -> Step:
    """Delete the first listed article (with its trailing space) that the text starts with."""
    prefixes = tuple(a if a.endswith(" ") else a + " " for a in articles)

    def step(text: str) -> str:
        for prefix in prefixes:
            if text.startswith(prefix):
                return text.replace(prefix, "", 1)
        return text

    return step


@component("normaliser", "delete_whole_words", takes="str", gives="str")
def delete_whole_words(words: list[str]) -> Step:
    """Replace each listed word standing as a whole word (regex ``\\b`` boundaries) by a space: SQuAD's article removal.

    Unlike ``drop_words`` (which splits on single spaces), a word next to any non-word character goes
    too ("the-end" loses "the"), exactly as ``re.sub(r"\\b(a|an|the)\\b", " ", text)`` in SQuAD's script.
    """
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b") if words else None
    return (lambda text: pattern.sub(" ", text)) if pattern is not None else (lambda text: text)


@component("normaliser", "split_on", takes="str", gives="str")
def split_on(separator: str, *, joiner: str = " ") -> Step:
    """Split on a literal separator, strip each part and re-join (e.g. ``;`` alternatives)."""
    return lambda text: joiner.join(part.strip() for part in text.split(separator))


StemAlgorithm = Literal["porter", "porter2", "snowball_english"]
# distinct words whose stems a process keeps: a language's working vocabulary, bounded so that a long-lived
# site or rescoring process does not grow with every new token it is ever given (least recently used dropped)
STEM_MEMO_SIZE = 1 << 17
PorterMode = Literal["nltk_extensions", "martin_extensions", "original_algorithm"]


@functools.cache
def _stemmer(algorithm: str, mode: str) -> Callable[[str], str]:
    # NLTK's Porter in NLTK_EXTENSIONS mode is the stemmer the OpenPI and ProPara scorers use: procbench.runners.library.porter
    # computes it without importing NLTK (whose package init pulls SciPy, scikit-learn and pandas).
    if algorithm == "porter":
        from procbench.runners.library.porter import PorterStemmer

        return functools.lru_cache(maxsize=STEM_MEMO_SIZE)(PorterStemmer(mode.upper()).stem)
    if algorithm == "porter2":
        # Porter2 of PyPI ``stemming`` 1.0.1, the stemmer the NAACL'18 ProPara evaluator imports; close to NLTK's
        # English Snowball but not equal on tokens with non-letters ("g-rated": "g-rate" vs "g-rat")
        from stemming.porter2 import stem as porter2

        return functools.lru_cache(maxsize=STEM_MEMO_SIZE)(porter2)
    from nltk.stem.snowball import (
        SnowballStemmer,
    )  # no shipped spec uses Snowball: NLTK's own, imported here

    return functools.lru_cache(maxsize=STEM_MEMO_SIZE)(SnowballStemmer("english").stem)


@component("normaliser", "stem", takes="str", gives="str")
def stem(
    algorithm: StemAlgorithm = "porter",
    *,
    mode: PorterMode = "nltk_extensions",
    unit: Literal["token", "whole"] = "token",
    keep_empty: bool = False,
) -> Step:
    """Stem each whitespace token (dropping tokens whose stem is empty, unless ``keep_empty``), or the whole string as one word.

    ``porter`` is NLTK's Porter (``mode`` its variant), ``porter2`` PyPI ``stemming``'s Porter2, ``snowball_english`` NLTK's Snowball.
    ``keep_empty`` keeps an empty stem as an empty word between spaces (Porter2 stems "''s" to nothing), as the
    NAACL'18 evaluator joins its stems: its location check then sees the same string.
    """
    stemmer = _stemmer(algorithm, mode)
    if unit == "whole":
        return lambda text: stemmer(text).strip()

    stems: dict[str, str] = {}  # raw token -> its stripped stem (answers share most tokens)

    def per_token(text: str) -> str:
        out = []
        for token in text.split():
            stemmed = stems.get(token)
            if stemmed is None:
                stemmed = stems[token] = stemmer(token.lower()).strip()
            if stemmed or keep_empty:
                out.append(stemmed)
        return " ".join(out)

    return per_token


class Pipeline(Record):
    """Normaliser steps applied left to right, memoised per input string."""

    __slots__ = ("steps", "names", "_cache")
    _hidden = frozenset({"_cache"})
    _not_init = frozenset({"_cache"})
    steps: tuple[Step, ...]
    names: tuple[str, ...]
    _cache: dict[str, str]  # input -> output, this pipeline's own (not compared, not shown)

    def __init__(self, steps: tuple[Step, ...], names: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "_cache", {})

    def __call__(self, text: str) -> str:
        cache = self._cache
        out = cache.get(text)
        if out is None:
            out = text
            for step in self.steps:
                out = step(out)
            cache[text] = out
        return out

    @classmethod
    def of(cls, steps: Sequence[Step], names: Sequence[str] = ()) -> Pipeline:
        return cls(tuple(steps), tuple(names))


IDENTITY = Pipeline(())
