"""Whether a regular expression can match anything in a text made only of ASCII letters.

spaCy decides how to split a chunk with four regular expressions (prefix, suffix, infix, URL).
When none of them can match anywhere in a letters-only chunk, such a chunk that is not an
exception is exactly one token, and spaCy need not be asked (:mod:`procbench.runners.paged.tokenizer`).

:func:`may_match_letters` reads the parsed pattern (``re._parser``) and answers False only when
every way through it must consume a character that is not a letter, or look around for one.
Anything it does not fully understand counts as a possible match (flags that fold case, negative
look-arounds, back-references, unknown opcodes and classes, a parser it cannot import): an
error can only make it answer True, which costs speed, never a token.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import Any

LETTERS = frozenset(string.ascii_letters)

try:  # the stdlib's own regex parser (Python 3.11+; opcodes print as their names)
    from re import _parser
except ImportError:  # pragma: no cover - other Pythons: no shortcut
    _parser = None

# classes that never contain an ASCII letter / always contain every one, in str patterns (ASCII or Unicode mode)
_NO_LETTER = {
    "CATEGORY_DIGIT",
    "CATEGORY_SPACE",
    "CATEGORY_LINEBREAK",
    "CATEGORY_UNI_DIGIT",
    "CATEGORY_UNI_SPACE",
    "CATEGORY_UNI_LINEBREAK",
}
_EVERY_LETTER = {
    "CATEGORY_WORD",
    "CATEGORY_NOT_DIGIT",
    "CATEGORY_NOT_SPACE",
    "CATEGORY_NOT_LINEBREAK",
    "CATEGORY_UNI_WORD",
    "CATEGORY_UNI_NOT_DIGIT",
    "CATEGORY_UNI_NOT_SPACE",
    "CATEGORY_UNI_NOT_LINEBREAK",
}


def may_match_letters(pattern: Any) -> bool:
    """False only if ``pattern`` (a compiled ``re`` pattern) can match nowhere in any string of ASCII letters."""
    if (
        _parser is None
        or not isinstance(pattern, re.Pattern)
        or not isinstance(pattern.pattern, str)
    ):
        return True
    if pattern.flags & re.IGNORECASE:  # case folding maps some non-ASCII characters onto letters
        return True
    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - anything unexpected: assume it may match
        return True
    return _sequence(tree)


def _sequence(items: Iterable[tuple[Any, Any]]) -> bool:
    """A sequence can match only if each of its items can."""
    return all(_item(op, argument) for op, argument in items)


def _item(op: Any, argument: Any) -> bool:
    name = str(op)
    if name == "LITERAL":
        return chr(argument) in LETTERS
    if name == "IN":
        return _class_has_letter(argument)
    if name == "BRANCH":
        return any(_sequence(branch) for branch in argument[1])
    if name == "SUBPATTERN":
        _, add_flags, _, body = argument
        return bool(add_flags & re.IGNORECASE) or _sequence(body)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _, body = argument
        return low == 0 or _sequence(body)
    if name == "ATOMIC_GROUP":
        return _sequence(argument)
    if name == "ASSERT":  # a look-around sees only letters of the same text (or nothing)
        return _sequence(argument[1])
    return True  # ANY, NOT_LITERAL, AT (anchors), ASSERT_NOT, GROUPREF, ...: may match


def _class_has_letter(items: list[tuple[Any, Any]]) -> bool:
    """Whether a character class contains some ASCII letter (True whenever unsure)."""
    negated = bool(items) and str(items[0][0]) == "NEGATE"
    members = items[1:] if negated else items
    inside = set()  # letters certainly in the class
    for op, argument in members:
        name = str(op)
        if name == "LITERAL":
            inside.update({chr(argument)} & LETTERS)
        elif name == "RANGE":
            low, high = argument
            inside.update(c for c in LETTERS if low <= ord(c) <= high)
        elif name == "CATEGORY" and str(argument) in _NO_LETTER:
            continue
        elif name == "CATEGORY" and str(argument) in _EVERY_LETTER:
            inside.update(LETTERS)
        else:
            return True
    return len(inside) < len(LETTERS) if negated else bool(inside)
