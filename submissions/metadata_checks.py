"""Limits on a submission's free-form metadata (issue #29), checked at intake before anything is staged.

Metadata is whatever the submitter typed (``--metadata k=v``, the site's JSON box, the API's
mapping): it is stored as one JSON text per row and read back by every board page, so an unbounded
value costs every visitor (a 50 MB row made the board page take 26 s and 5.5 GB).  Refused, with one
line and nothing stored (no raw file either): more than ``MAX_METADATA_BYTES`` of JSON, nesting
deeper than ``MAX_METADATA_DEPTH``, and non-finite numbers (NaN and infinities have no JSON form:
stored they made the row's JSON invalid).  The walk is iterative, so no depth can raise RecursionError.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from procbench.submissions.details import DetailError

MAX_METADATA_BYTES = (
    64 * 1024
)  # of the stored JSON text; a model's settings and a few links take a few hundred bytes
MAX_METADATA_DEPTH = 16  # levels of objects and lists, the metadata object itself being the first


def _scalar_bytes(value: Any) -> int:
    if isinstance(value, str):
        return (
            len(value) * 4 // 3 + 2
            if len(value) > MAX_METADATA_BYTES
            else len(value.encode("utf-8", "surrogatepass")) + 2
        )
    if isinstance(value, int) and not isinstance(value, bool):
        return (
            value.bit_length() // 3 + 2
        )  # about its decimal digits, without converting a huge number
    return 8


def _path(parts: tuple[Any, ...]) -> str:
    return ("metadata" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts))[:200]


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """A plain copy of ``metadata`` within the limits, or DetailError saying which limit it breaks."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise DetailError(
            f"the metadata must be an object of names and values, not a {type(metadata).__name__}"
        )
    too_large = f"the metadata is larger than {MAX_METADATA_BYTES // 1024} KiB of JSON (the metadata limit); nothing was stored"
    size = 0
    stack: list[tuple[Any, tuple[Any, ...]]] = [(metadata, ())]
    while stack:
        value, parts = stack.pop()
        if isinstance(value, (Mapping, list, tuple)):
            if len(parts) >= MAX_METADATA_DEPTH:
                raise DetailError(
                    f"the metadata is nested more than {MAX_METADATA_DEPTH} levels deep (at {_path(parts)}); nothing was stored"
                )
            size += 2 + len(value)
            if size > MAX_METADATA_BYTES:
                raise DetailError(too_large)
            if isinstance(value, Mapping):
                for key, child in value.items():
                    size += _scalar_bytes(key if isinstance(key, str) else str(key))
                    stack.append((child, (*parts, key)))
            else:
                stack.extend((child, (*parts, i)) for i, child in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            raise DetailError(
                f"the metadata value at {_path(parts)} is {value}, which is not a number JSON can hold; nothing was stored"
            )
        else:
            size += _scalar_bytes(value)
        if size > MAX_METADATA_BYTES:
            raise DetailError(too_large)
    try:
        text = json.dumps(
            dict(metadata), sort_keys=True, default=str, allow_nan=False
        )  # exactly as the store writes it
    except (ValueError, TypeError) as exc:
        raise DetailError(
            f"the metadata cannot be stored as JSON ({exc}); nothing was stored"
        ) from None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_METADATA_BYTES:
        raise DetailError(too_large)
    return dict(metadata)
