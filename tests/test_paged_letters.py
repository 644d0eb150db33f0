"""``may_match_letters`` never says "no match" for a pattern that matches some text of ASCII letters."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from procbench.runners.paged import tokens
from procbench.runners.paged.letters import may_match_letters

ATOMS = [
    "a",
    "Z",
    "q",
    "7",
    r"\.",
    "-",
    "'",
    "[a-c]",
    "[A-Z]",
    "[0-9]",
    "[^a-z]",
    "[^0-9]",
    r"[^\W\d]",
    r"\d",
    r"\w",
    r"\W",
    r"\s",
    r"\S",
    ".",
    "(?<=[0-9])",
    "(?<=a)",
    "(?<![a-z])",
    "(?!x)",
    "(?=b)",
    "^",
    "$",
    r"\b",
    r"[\u212a]",
    "[ſ]",
    "é",
]

regexes = st.recursive(
    st.sampled_from(ATOMS),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map("".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda parts: "(?:" + "|".join(parts) + ")"),
        st.tuples(inner, st.sampled_from(["?", "*", "+", "{2}", "{0,1}"])).map(
            lambda p: "(?:" + p[0] + ")" + p[1]
        ),
        inner.map(lambda p: "(?i:" + p + ")"),
    ),
    max_leaves=6,
)
letter_texts = st.text(alphabet=string.ascii_letters, max_size=12)


@given(regexes, st.lists(letter_texts, min_size=1, max_size=8))
def test_no_match_on_letters_when_it_says_so(pattern: str, texts: list[str]) -> None:
    try:
        compiled = re.compile(pattern)
    except re.error:
        assume(False)
        return
    if not may_match_letters(compiled):
        for text in texts:
            assert compiled.search(text) is None, (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "may"),
    [
        ("abc", True),
        (r"\d+", False),
        (r"\d*", True),
        (r"(?:\.)?", True),
        (r"(?:a|\.)", True),
        (r"(?:1|\.)", False),
        (r"[^\W\d]", True),
        ("(?<=[0-9])km", False),
        (r"[A-Z]\.", False),
        ("[^a-z]", True),
        ("x?", True),
        (r"(?i)\u212a", True),
        (r"[^\d]", True),
        ("(?!a)b", True),
    ],
)
def test_examples(pattern: str, may: bool) -> None:
    assert may_match_letters(re.compile(pattern)) is may


def test_spacy_english_keeps_letters_whole() -> None:
    """The fast path is on for English: none of its prefix, suffix, infix or URL expressions can match letters."""
    definition = tokens._spacy_tokenizer()
    for splitter in (
        definition.prefix_search,
        definition.suffix_search,
        definition.infix_finditer,
        definition.url_match,
    ):
        assert may_match_letters(splitter.__self__) is False
    assert tokens._chunk_tokenizer().letters_alone


@given(letter_texts.filter(bool))
def test_spacy_splitters_find_nothing_in_letters(text: str) -> None:
    definition = tokens._spacy_tokenizer()
    assert definition.prefix_search(text) is None and definition.suffix_search(text) is None
    assert list(definition.infix_finditer(text)) == [] and definition.url_match(text) is None
    assert tokens._chunk_tokenizer()(text) == tuple(t.lower_ for t in definition(text))
