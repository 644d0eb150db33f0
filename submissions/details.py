"""A submission's model card (size class, weights, method family, links, description) and names.

Everything here is stored verbatim and only ever passed to SQL as a parameter; the checks are
about what the board can show safely: no control or invisible characters in names, and links that
are plain http(s) URLs (a ``javascript:`` link rendered by the site would run in a visitor's browser).

Names are compared through one normaliser, :func:`same_name` (issues #17, #29): two team names that differ
only by case, width, spacing, accents or look-alike letters (Unicode's confusables skeleton) are the same
team for uniqueness and for the token check, so ``Acme``, ``ACME``, ``a c m e``, ``аcme`` (Cyrillic а) and
``ᴀcme`` (small capital) cannot pass for ``acme``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from procbench.submissions import confusables

# Parameter-count classes (none: no learned weights; <1B, 1-10B, 10-100B, >100B), plus the classes
# the PM-LLM-Benchmark paper groups models by (commercial, big open-source, small <= 8 GB, tiny <= 4 GB).
SIZE_CLASSES = (
    "unknown",
    "none",
    "small",
    "medium",
    "large",
    "xlarge",
    "commercial",
    "big open-source",
    "small (<=8 gb)",
    "tiny (<=4 gb)",
)
WEIGHTS = ("unknown", "open", "closed")
METHOD_FAMILIES = ("unknown", "heuristic", "neural", "llm")
# Known exposure of the model to the benchmark's data (issue #34): not stated, none known, suspected, confirmed.
CONTAMINATION = ("unknown", "none", "suspected", "confirmed")
# Who ran the model to produce a row's predictions (not part of the card: intake sets it, never the submitter's word).
RUN_BY = ("submitter", "operator", "paper", "unknown")
MAX_SOURCE_CHARS = 500
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
REFERENCE_TEAM = (
    "reference"  # the team of the rows reported in the literature (``reported`` blocks)
)
RESERVED_TEAMS = (REFERENCE_TEAM,)
# the team of a submission with neither a token nor a team: anyone may submit under it, so no team of that
# name (in any form name_key folds to it) may be created with a token, which would lock everyone out of it
ANONYMOUS_TEAM = "anonymous"


@lru_cache(maxsize=8192)  # every team name is compared on each submission that names a team
def name_keys(value: str) -> frozenset[str]:
    """The forms names are compared in (uniqueness, token checks, reserved names); never shown or stored.

    Every space and invisible character removed, then NFKC (width and compatibility forms: ``Ａｃｍｅ``,
    ``𝐚𝐜𝐦𝐞``), Unicode's confusables skeleton (UTS #39, ``procbench.submissions.confusables``: ``ϲ``, ``Ꮪ``, ``г``,
    ``ᴏ``, ``m`` as ``rn``), casefolded with accents and other combining marks dropped, as written and in
    upper case.  Deliberately coarse: a false match only means a name needs the matching team's token,
    or another name.
    """
    visible = "".join(
        c for c in value if not c.isspace() and unicodedata.category(c) not in _REFUSED_IN_NAMES
    )
    return frozenset(
        "".join(c for c in key if not c.isspace()) for key in confusables.keys(visible)
    )


def name_key(value: str) -> str:
    """One of :func:`name_keys` (the form as written), for a stable sort or a display; compare with :func:`same_name`."""
    visible = "".join(
        c for c in value if not c.isspace() and unicodedata.category(c) not in _REFUSED_IN_NAMES
    )
    return "".join(c for c in confusables.key_as_written(visible) if not c.isspace())


def same_name(first: str, second: str) -> bool:
    """Whether two names are one name to the board: any of their :func:`name_keys` agree."""
    return not name_keys(first).isdisjoint(name_keys(second))


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
            raise DetailError(
                f"the {kind} name contains {what} (U+{ord(c):04X}); names must be visible text"
            )
    if value != value.strip():
        raise DetailError(f"the {kind} name starts or ends with a space")
    if kind == "team" and any(same_name(value, r) for r in RESERVED_TEAMS):
        raise DetailError(
            f"the team name {value!r} is reserved (it is the team of results reported in the literature)"
        )
    return value


def check_url(kind: str, value: str) -> str:
    if not value:
        return ""
    if len(value) > MAX_URL_CHARS or _has_control(value) or " " in value:
        raise DetailError(f"the {kind} URL is not a plain URL")
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise DetailError(
            f"the {kind} URL must start with http:// or https:// (got {value[:60]!r})"
        )
    return value


def _choice(kind: str, value: str, allowed: tuple[str, ...]) -> str:
    normal = value.strip().lower()
    if normal not in allowed:
        raise DetailError(f"{kind} must be one of {', '.join(allowed)} (got {value!r})")
    return normal


def _source(value: str) -> str:
    """A contamination source: one line of visible text (a URL or a citation), at most 500 characters."""
    if len(value) > MAX_SOURCE_CHARS:
        raise DetailError(f"the contamination source is longer than {MAX_SOURCE_CHARS} characters")
    if _has_control(value) or any(unicodedata.category(c) in _REFUSED_IN_NAMES for c in value):
        raise DetailError(
            "the contamination source must be one line of visible text (a link or a citation)"
        )
    return value.strip()


@dataclass(frozen=True)
class ModelCard:
    """What a submitter says about the system; shown on the board beside the scores."""

    size_class: str = "unknown"
    weights: str = "unknown"
    method_family: str = "unknown"
    paper_url: str = ""
    code_url: str = ""
    description: str = ""
    contamination: str = "unknown"  # CONTAMINATION
    contamination_source: str = ""  # where the exposure is stated: a link or a citation, one line

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
            contamination=_choice("contamination", self.contamination, CONTAMINATION),
            contamination_source=_source(self.contamination_source),
        )
