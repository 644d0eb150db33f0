"""The Porter stemmer as NLTK's ``PorterStemmer`` computes it, in its three modes, without importing NLTK.

Why a small implementation and not NLTK's module: NLTK's package init (which ``nltk.stem.porter``
cannot be imported without) pulls SciPy, scikit-learn and pandas, about 1.5 s of start-up for every
ProPara and OpenPI run, and the module itself imports ``nltk.redos`` (the ``regex`` package) and
``nltk.termsec``; loading it without its package would mean faking NLTK's package in ``sys.modules``.
So this is written from Porter's paper (``Program`` 14.3, 1980) with NLTK's documented departures
(``NLTK_EXTENSIONS``, the default, which the OpenPI and ProPara scorers use; ``MARTIN_EXTENSIONS``;
``ORIGINAL_ALGORITHM``), and tests/test_porter_oracle.py checks it against NLTK as the oracle on
every word of the ProPara and OpenPI vocabularies and on generated words (hypothesis).

A letter is a consonant unless it is a, e, i, o, u, or a y that follows a consonant; any other
character (digits, punctuation, accented letters) counts as a consonant, as in NLTK.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

NLTK_EXTENSIONS = "NLTK_EXTENSIONS"
MARTIN_EXTENSIONS = "MARTIN_EXTENSIONS"
ORIGINAL_ALGORITHM = "ORIGINAL_ALGORITHM"
MODES = (NLTK_EXTENSIONS, MARTIN_EXTENSIONS, ORIGINAL_ALGORITHM)

_VOWELS = frozenset("aeiou")

# NLTK_EXTENSIONS: words stemmed by a table before the rules (NLTK's "pool")
_IRREGULAR = {
    "sky": ("sky", "skies"),
    "die": ("dying",),
    "lie": ("lying",),
    "tie": ("tying",),
    "news": ("news",),
    "inning": ("innings", "inning"),
    "outing": ("outings", "outing"),
    "canning": ("cannings", "canning"),
    "howe": ("howe",),
    "proceed": ("proceed",),
    "exceed": ("exceed",),
    "succeed": ("succeed",),
}
_POOL = {form: stem for stem, forms in _IRREGULAR.items() for form in forms}

Condition = Callable[[str], bool] | None


def _consonants(word: str) -> list[bool]:
    """Consonant flags left to right: a y is a consonant at the start or after a vowel."""
    flags: list[bool] = []
    for i, ch in enumerate(word):
        if ch in _VOWELS:
            flags.append(False)
        elif ch == "y":
            flags.append(True if i == 0 else not flags[i - 1])
        else:
            flags.append(True)
    return flags


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant transitions in ``[C](VC){m}[V]``."""
    flags = _consonants(stem)
    return sum(1 for before, after in zip(flags, flags[1:]) if not before and after)


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


class PorterStemmer:
    """``stem(word)`` lower-cases the word and stems it as NLTK's PorterStemmer(mode) does."""

    def __init__(self, mode: str = NLTK_EXTENSIONS) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown Porter mode {mode!r}\n  hint: one of {', '.join(MODES)}")
        self.mode = mode
        self._nltk = mode == NLTK_EXTENSIONS
        positive = self._positive
        step2 = [
            ("ational", "ate", positive),
            ("tional", "tion", positive),
            ("enci", "ence", positive),
            ("anci", "ance", positive),
            ("izer", "ize", positive),
            ("abli", "able", positive) if mode == ORIGINAL_ALGORITHM else ("bli", "ble", positive),
            ("alli", "al", positive),
            ("entli", "ent", positive),
            ("eli", "e", positive),
            ("ousli", "ous", positive),
            ("ization", "ize", positive),
            ("ation", "ate", positive),
            ("ator", "ate", positive),
            ("alism", "al", positive),
            ("iveness", "ive", positive),
            ("fulness", "ful", positive),
            ("ousness", "ous", positive),
            ("aliti", "al", positive),
            ("iviti", "ive", positive),
            ("biliti", "ble", positive),
        ]
        if mode == NLTK_EXTENSIONS:
            step2.append(
                ("fulli", "ful", positive)
            )  # and -logi, whose condition is not on the stem: see _step2
        elif mode == MARTIN_EXTENSIONS:
            step2.append(("logi", "log", positive))
        self._step2_rules = step2
        self._step3_rules = [
            ("icate", "ic", positive),
            ("ative", "", positive),
            ("alize", "al", positive),
            ("iciti", "ic", positive),
            ("ical", "ic", positive),
            ("ful", "", positive),
            ("ness", "", positive),
        ]
        more_than_one = self._more_than_one
        self._step4_rules = (
            [
                (suffix, "", more_than_one)
                for suffix in (
                    "al",
                    "ance",
                    "ence",
                    "er",
                    "ic",
                    "able",
                    "ible",
                    "ant",
                    "ement",
                    "ment",
                    "ent",
                )
            ]
            + [("ion", "", lambda stem: _measure(stem) > 1 and stem[-1] in "st")]
            + [
                (suffix, "", more_than_one)
                for suffix in ("ou", "ism", "ate", "iti", "ous", "ive", "ize")
            ]
        )

    def __repr__(self) -> str:
        return f"PorterStemmer({self.mode!r})"

    # -- conditions ------------------------------------------------------------------------------
    @staticmethod
    def _positive(stem: str) -> bool:
        return _measure(stem) > 0

    @staticmethod
    def _more_than_one(stem: str) -> bool:
        return _measure(stem) > 1

    def _ends_cvc(self, word: str) -> bool:
        """Porter's *o (consonant-vowel-consonant, the last not w, x or y); NLTK also takes a two-letter vowel-consonant word."""
        if len(word) >= 3:
            flags = _consonants(word)
            if flags[-3] and not flags[-2] and flags[-1] and word[-1] not in "wxy":
                return True
        if self._nltk and len(word) == 2:
            flags = _consonants(word)
            return not flags[0] and flags[1]
        return False

    # -- the rules -------------------------------------------------------------------------------
    @staticmethod
    def _first_rule(word: str, rules: Sequence[tuple[str, str, Condition]]) -> str:
        """The first rule whose suffix ends the word decides: replaced if its condition holds, else unchanged."""
        for suffix, replacement, condition in rules:
            if word.endswith(suffix):
                stem = word[: len(word) - len(suffix)]
                return stem + replacement if condition is None or condition(stem) else word
        return word

    def _step1a(self, word: str) -> str:
        if self._nltk and len(word) == 4 and word.endswith("ies"):
            return word[:-3] + "ie"
        for suffix, replacement in (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")):
            if word.endswith(suffix):
                return word[: len(word) - len(suffix)] + replacement
        return word

    def _step1b(self, word: str) -> str:
        if self._nltk and word.endswith("ied"):
            return word[:-3] + ("ie" if len(word) == 4 else "i")
        if word.endswith("eed"):
            stem = word[:-3]
            return stem + "ee" if _measure(stem) > 0 else word
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                stem = word[: -len(suffix)]
                break
        else:
            return word
        for suffix, replacement in (("at", "ate"), ("bl", "ble"), ("iz", "ize")):
            if stem.endswith(suffix):
                return stem[: -len(suffix)] + replacement
        if _ends_double_consonant(stem):
            return stem[:-1] if stem[-1] not in "lsz" else stem
        if _measure(stem) == 1 and self._ends_cvc(stem):
            return stem + "e"
        return stem

    def _step1c(self, word: str) -> str:
        if not word.endswith("y"):
            return word
        stem = word[:-1]
        if self._nltk:  # y -> i after a consonant that is not the whole stem ("happy" -> "happi", "enjoy", "by" stay)
            applies = len(stem) > 1 and _consonants(stem)[-1]
        else:
            applies = _has_vowel(stem)
        return stem + "i" if applies else word

    def _step2(self, word: str) -> str:
        if self._nltk:
            if word.endswith("alli") and _measure(word[:-4]) > 0:
                return self._step2(word[:-4] + "al")
            if word.endswith(
                "logi"
            ):  # NLTK's last rule, tested first here: no other suffix of step 2 ends in "gi"
                return (
                    word[:-1] if _measure(word[:-3]) > 0 else word
                )  # its condition keeps the "l" of "logi"
        return self._first_rule(word, self._step2_rules)

    def stem(self, word: str) -> str:
        stem = word.lower()
        if self._nltk and stem in _POOL:
            return _POOL[stem]
        if (
            self.mode != ORIGINAL_ALGORITHM and len(word) <= 2
        ):  # the length of the word as given, as NLTK checks it
            return stem
        stem = self._step1a(stem)
        stem = self._step1b(stem)
        stem = self._step1c(stem)
        stem = self._step2(stem)
        stem = self._first_rule(stem, self._step3_rules)
        stem = self._first_rule(stem, self._step4_rules)
        if stem.endswith("e"):  # step 5a
            base = stem[:-1]
            m = _measure(base)
            if m > 1 or (m == 1 and not self._ends_cvc(base)):
                stem = base
        if stem.endswith("ll") and _measure(stem[:-1]) > 1:  # step 5b
            stem = stem[:-1]
        return stem
