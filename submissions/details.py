"""A submission's model card (size class, weights, method family, links, description) and names.

Everything here is stored verbatim and only ever passed to SQL as a parameter; the checks are
about what the board can show safely: no control characters in names, and links that are plain
http(s) URLs (a ``javascript:`` link rendered by the site would run in a visitor's browser).
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


def check_name(kind: str, value: str) -> str:
    """A model or team name: 1-200 characters, no control characters; anything else verbatim."""
    if not value or not value.strip():
        raise DetailError(f"the {kind} name is empty")
    if len(value) > MAX_NAME_CHARS:
        raise DetailError(f"the {kind} name is longer than {MAX_NAME_CHARS} characters")
    if _has_control(value):
        raise DetailError(f"the {kind} name {value!r} contains control characters")
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
