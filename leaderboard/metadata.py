"""Submission facets the board filters on: kind, open/closed, method family.

Newer stores carry a model card (``weights``, ``method_family`` columns); otherwise, and where the
card says ``unknown``, the facets come from ``metadata_json``, a JSON object whose keys may all be
absent (then ``unknown``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

UNKNOWN = "unknown"
ACCESS_KEYS = ("access", "open", "open_weights", "open_source")  # first present wins
FAMILY_KEYS = ("family", "method_family", "method")


@dataclass(frozen=True)
class Facets:
    kind: str  # "submitted" | "reported"
    access: str  # "open" | "closed" | "unknown"
    family: str  # free text, "unknown" when absent


def parse(metadata_json: str | None) -> dict[str, Any]:
    """The metadata object; anything that is not a JSON object reads as empty."""
    try:
        value = json.loads(metadata_json or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _access(metadata: dict[str, Any]) -> str:
    for key in ACCESS_KEYS:
        if key not in metadata:
            continue
        value = metadata[key]
        if isinstance(value, bool):
            return "open" if value else "closed"
        text = str(value).strip().lower()
        if text in ("open", "closed"):
            return text
        if text in ("true", "yes", "1"):
            return "open"
        if text in ("false", "no", "0"):
            return "closed"
    return UNKNOWN


def _family(metadata: dict[str, Any]) -> str:
    for key in FAMILY_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return UNKNOWN


def facets(metadata_json: str | None, is_reference: bool, *, weights: str = "", method_family: str = "") -> Facets:
    """The row's facets: the model card's ``weights``/``method_family`` when set, else metadata keys."""
    metadata = parse(metadata_json)
    access = weights if weights in ("open", "closed") else _access(metadata)
    family = method_family if method_family and method_family != UNKNOWN else _family(metadata)
    return Facets("reported" if is_reference else "submitted", access, family)
