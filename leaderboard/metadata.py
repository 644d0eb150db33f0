"""A submission's model card as the site shows it: one reading for the board, the Submission page and the model page.

Newer stores carry the card in columns (``size_class``, ``weights``, ``method_family``, ``paper_url``,
``code_url``, ``description``; migration 002); a field the card leaves at ``unknown`` / empty is read
from ``metadata_json`` instead, a JSON object whose keys may all be absent (then ``unknown``), so a
file submitted with ``{"weights": "open", "size_class": "small (<=8 GB)"}`` as metadata (the PM-LLM
samples) shows the same card as one submitted with a card.  The parameter count has no card column
yet: it is read from metadata (``parameters``, ``params``, ``n_params``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

UNKNOWN = "unknown"
ACCESS_KEYS = ("weights", "access", "open", "open_weights", "open_source")  # first present wins
FAMILY_KEYS = ("method_family", "family", "method")
SIZE_KEYS = ("size_class", "size")
PARAMETER_KEYS = ("parameters", "params", "n_params", "num_parameters")
PAPER_KEYS = ("paper_url", "paper")
CODE_KEYS = ("code_url", "code")

# How each stored size class reads on the site (procbench.submissions.details.SIZE_CLASSES; stored lower-cased).
SIZE_LABELS = {
    "commercial": "commercial",
    "big open-source": "big open-source",
    "small (<=8 gb)": "small (≤ 8 GB)",
    "tiny (<=4 gb)": "tiny (≤ 4 GB)",
    "none": "no learned weights",
    "small": "< 1B parameters",
    "medium": "1–10B parameters",
    "large": "10–100B parameters",
    "xlarge": "> 100B parameters",
    UNKNOWN: UNKNOWN,
}


@dataclass(frozen=True)
class Card:
    """The facets the board filters on and the card every page shows."""

    kind: str  # "submitted" | "reported"
    access: str  # "open" | "closed" | "unknown"
    family: str  # lower-cased free text, "unknown" when absent
    size_class: str  # a SIZE_LABELS value, or the stored text
    parameters: str  # as given ("7B", "1.3e9"), '' when absent
    paper_url: str
    code_url: str
    description: str = ""
    contamination: str = UNKNOWN  # issue #34: unknown (not stated) | none | suspected | confirmed
    contamination_source: str = (
        ""  # where the exposure is stated (a link or a citation), shown as text
    )
    run_by: str = (
        UNKNOWN  # who ran the model: submitter | operator | paper | unknown (migration 009)
    )

    @property
    def contamination_mark(self) -> str:
        """The board's word for the card's contamination: 'confirmed: <source>', 'suspected', 'none known', 'not stated'."""
        word = CONTAMINATION_WORDS.get(self.contamination, self.contamination)
        return (
            f"{word} ({self.contamination_source})"
            if self.contamination_source and self.contamination in ("suspected", "confirmed")
            else word
        )

    def rows(self) -> list[tuple[str, str]]:
        """(field, value) pairs in the order every page shows them."""
        return [
            ("Kind", self.kind),
            ("Size class", self.size_class),
            ("Parameters", self.parameters or "–"),
            ("Weights", self.access),
            ("Method family", self.family),
            ("Paper", self.paper_url or "–"),
            ("Code", self.code_url or "–"),
            ("Contamination", self.contamination_mark),
            ("Run by", RUN_BY_WORDS.get(self.run_by, self.run_by)),
        ]


# issue #34: how the stored contamination and run_by values read on the site (procbench.submissions.details.CONTAMINATION, RUN_BY)
CONTAMINATION_WORDS = {
    UNKNOWN: "not stated",
    "none": "none known",
    "suspected": "suspected",
    "confirmed": "confirmed",
}
RUN_BY_WORDS = {
    "submitter": "the submitter",
    "operator": "the board's operator",
    "paper": "a paper (reported)",
    UNKNOWN: UNKNOWN,
}


# kept for callers of the first version of this module
Facets = Card


def parse(metadata_json: str | None) -> dict[str, Any]:
    """The metadata object; anything that is not a JSON object reads as empty."""
    try:
        value = json.loads(metadata_json or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _access_value(value: Any) -> str:
    if isinstance(value, bool):
        return "open" if value else "closed"
    text = str(value).strip().lower()
    if text in ("open", "closed"):
        return text
    if text in ("true", "yes", "1", "open weights", "open-weights", "open source", "open-source"):
        return "open"
    if text in ("false", "no", "0", "closed weights", "proprietary", "api"):
        return "closed"
    return UNKNOWN


def _first(metadata: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = metadata.get(key)
        if value is not None and not isinstance(value, (dict, list)) and str(value).strip():
            return str(value).strip()
    return ""


def _access(metadata: Mapping[str, Any]) -> str:
    for key in ACCESS_KEYS:
        if key in metadata:
            found = _access_value(metadata[key])
            if found != UNKNOWN:
                return found
    return UNKNOWN


def size_label(value: str) -> str:
    """The site's wording of a size class (stored ``small (<=8 gb)`` reads ``small (≤ 8 GB)``)."""
    normal = re.sub(r"\s+", " ", value.strip().lower())
    return SIZE_LABELS.get(normal, value.strip() or UNKNOWN)


def _url(value: str) -> str:
    """Only plain http(s) links are ever shown as links (a ``javascript:`` URL would run in the visitor's browser)."""
    return value if re.match(r"^https?://[^\s]+$", value or "") else ""


def card(row: Mapping[str, Any]) -> Card:
    """The card of a submission row (store columns, any subset; missing ones read as unknown / empty)."""
    metadata = parse(row.get("metadata_json"))
    weights = str(row.get("weights") or "")
    access = weights if weights in ("open", "closed") else _access(metadata)
    family = str(row.get("method_family") or "")
    family = family if family and family != UNKNOWN else (_first(metadata, FAMILY_KEYS) or UNKNOWN)
    size = str(row.get("size_class") or "")
    size = size if size and size != UNKNOWN else (_first(metadata, SIZE_KEYS) or UNKNOWN)
    return Card(
        kind="reported" if row.get("is_reference") else "submitted",
        access=access,
        family=family.lower(),
        size_class=size_label(size),
        parameters=_first(metadata, PARAMETER_KEYS),
        paper_url=_url(str(row.get("paper_url") or "") or _first(metadata, PAPER_KEYS)),
        code_url=_url(str(row.get("code_url") or "") or _first(metadata, CODE_KEYS)),
        description=str(row.get("description") or "") or _first(metadata, ("description",)),
        contamination=str(row.get("contamination") or UNKNOWN),
        contamination_source=str(row.get("contamination_source") or ""),
        run_by="paper" if row.get("is_reference") else str(row.get("run_by") or UNKNOWN),
    )


def facets(
    metadata_json: str | None,
    is_reference: bool,
    *,
    weights: str = "",
    method_family: str = "",
    size_class: str = "",
) -> Card:
    """The card from the three facet columns and the metadata (the first version's signature)."""
    return card(
        {
            "metadata_json": metadata_json,
            "is_reference": is_reference,
            "weights": weights,
            "method_family": method_family,
            "size_class": size_class,
        }
    )
