"""A submission's model card (size class, weights, method family, links, description) and names.

Everything here is stored verbatim and only ever passed to SQL as a parameter; the checks are
about what the board can show safely: no control or invisible characters in names, and links that
are plain http(s) URLs (a ``javascript:`` link rendered by the site would run in a visitor's browser).

Names are compared through one normaliser, :func:`name_key` (issue #17): two team names that differ
only by case, width, spacing, accents or look-alike letters are the same team for uniqueness and for
the token check, so ``Acme``, ``ACME``, ``a c m e`` and ``аcme`` (Cyrillic а) cannot pass for ``acme``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

# Parameter-count classes (none: no learned weights; <1B, 1-10B, 10-100B, >100B), plus the classes
# the PM-LLM-Benchmark paper groups models by (commercial, big open-source, small <= 8 GB, tiny <= 4 GB).
SIZE_CLASSES = ("unknown", "none", "small", "medium", "large", "xlarge", "commercial", "big open-source", "small (<=8 gb)", "tiny (<=4 gb)")
WEIGHTS = ("unknown", "open", "closed")
METHOD_FAMILIES = ("unknown", "heuristic", "neural", "llm")
MAX_NAME_CHARS = 200
MAX_URL_CHARS = 2000
MAX_DESCRIPTION_CHARS = 10_000


class DetailError(ValueError):
    """A model card field or a name that cannot be stored as given."""


def _has_control(text: str, *, allow_newlines: bool = False) -> bool:
    for c in text:
        if allow_newlines and c in "\n\t":
            continue
        if unicodedata.category(c) in ("Cc", "Cs"):
            return True
    return False


# Characters refused in a name, by Unicode category: they are invisible, reorder the text around them
# (bidi controls such as U+202E), or drive a terminal (ESC): a name must look like what it is.
_REFUSED_IN_NAMES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character (zero-width or text-direction)",
    "Cs": "a lone surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
REFERENCE_TEAM = "reference"  # the team of the rows reported in the literature (``reported`` blocks)
RESERVED_TEAMS = (REFERENCE_TEAM,)
# the team of a submission with neither a token nor a team: anyone may submit under it, so no team of that
# name (in any form name_key folds to it) may be created with a token, which would lock everyone out of it
ANONYMOUS_TEAM = "anonymous"

# Letters that look like Latin ones (UTS #39 confusables, the common part), applied after casefolding,
# so capitals are covered by their lower-case forms (Cyrillic В -> в -> b, Greek Η -> η -> h).
_LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "з": "3", "і": "i", "ј": "j", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
        "т": "t", "у": "y", "х": "x", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ѵ": "v", "ӏ": "i", "ү": "y", "ь": "b",
        # Greek
        "α": "a", "β": "b", "ε": "e", "ζ": "z", "η": "h", "ι": "i", "κ": "k", "μ": "m", "ν": "n", "ο": "o", "ρ": "p", "τ": "t",
        "υ": "y", "χ": "x", "ϲ": "c", "ϳ": "j",
        # Armenian, Latin variants, digits and strokes
        "օ": "o", "ս": "u", "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ɩ": "i", "0": "o", "1": "i", "l": "i", "|": "i",
    }
)


def name_key(value: str) -> str:
    """The form names are compared in (uniqueness, token checks, reserved names); never shown or stored.

    NFKC (width and compatibility forms: ``Ａｃｍｅ``, ``𝐚𝐜𝐦𝐞``), casefold, accents and other combining
    marks dropped, look-alike letters mapped to the Latin letter they imitate (and ``rn`` to ``m``),
    every space and invisible character removed.  Deliberately coarse: a false match only means a
    name needs the matching team's token, or another name.
    """
    text = unicodedata.normalize("NFKC", value).casefold()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    text = unicodedata.normalize("NFKC", text).translate(_LOOKALIKES).replace("rn", "m")
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c) not in _REFUSED_IN_NAMES)


def check_name(kind: str, value: str) -> str:
    """A model or team name: 1-200 characters, no control or invisible characters, no space at either
    end; a team name must not be (or look like) a reserved one.  Returned verbatim."""
    if not value or not value.strip():
        raise DetailError(f"the {kind} name is empty")
    if len(value) > MAX_NAME_CHARS:
        raise DetailError(f"the {kind} name is longer than {MAX_NAME_CHARS} characters")
    for c in value:
        what = _REFUSED_IN_NAMES.get(unicodedata.category(c))
        if what:
            raise DetailError(f"the {kind} name contains {what} (U+{ord(c):04X}); names must be visible text")
    if value != value.strip():
        raise DetailError(f"the {kind} name starts or ends with a space")
    if kind == "team" and name_key(value) in {name_key(r) for r in RESERVED_TEAMS}:
        raise DetailError(f"the team name {value!r} is reserved (it is the team of results reported in the literature)")
    return value


def check_url(kind: str, value: str) -> str:
    if not value:
        return ""
    if len(value) > MAX_URL_CHARS or _has_control(value) or " " in value:
        raise DetailError(f"the {kind} URL is not a plain URL")
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise DetailError(f"the {kind} URL must start with http:// or https:// (got {value[:60]!r})")
    return value


def _choice(kind: str, value: str, allowed: tuple[str, ...]) -> str:
    normal = value.strip().lower()
    if normal not in allowed:
        raise DetailError(f"{kind} must be one of {', '.join(allowed)} (got {value!r})")
    return normal


@dataclass(frozen=True)
class ModelCard:
    """What a submitter says about the system; shown on the board beside the scores."""

    size_class: str = "unknown"
    weights: str = "unknown"
    method_family: str = "unknown"
    paper_url: str = ""
    code_url: str = ""
    description: str = ""

    def checked(self) -> ModelCard:
        """A normalised copy (choices lower-cased), or DetailError naming the bad field."""
        if len(self.description) > MAX_DESCRIPTION_CHARS:
            raise DetailError(f"the description is longer than {MAX_DESCRIPTION_CHARS} characters")
        if _has_control(self.description, allow_newlines=True):
            raise DetailError("the description contains control characters")
        return ModelCard(
            size_class=_choice("size class", self.size_class, SIZE_CLASSES),
            weights=_choice("weights", self.weights, WEIGHTS),
            method_family=_choice("method family", self.method_family, METHOD_FAMILIES),
            paper_url=check_url("paper", self.paper_url),
            code_url=check_url("code", self.code_url),
            description=self.description,
        )
