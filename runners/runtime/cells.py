"""CSV/TSV cells read as the declared type: one rule for gold sources and prediction files alike.

A delimited file holds text only, so a cell is converted to the type the spec declares for it
(docs/language.md, "Typed cells"):

- ``str``, ``any``: the text as written;
- ``int``: what Python's ``int()`` reads (surrounding whitespace allowed, ``"1.0"`` refused);
- ``float``: what Python's ``float()`` reads, finite only (``nan`` and ``inf`` are refused: a
  gold number that is not a number makes every mean silently NaN);
- ``bool``: ``true``/``false``, ``yes``/``no``, ``1``/``0``, any case, surrounding whitespace allowed;
- ``enum(...)``: a text value matches the cell exactly; a number value matches a cell that reads
  as that number (``enum(0, 1, 2)`` takes ``"1"`` as the integer 1, and gives the integer);
- ``optional(T)``: an empty (or all-blank) cell is absent (``None``), anything else is read as ``T``;
- ``list(T)``, ``record(...)``: the cell is JSON text of such a value.

:func:`cast_cell` raises :class:`BadCell` saying why, which callers report at the cell's line.
"""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

TRUE_SPELLINGS = ("true", "yes", "1")
FALSE_SPELLINGS = ("false", "no", "0")


class CellType(Protocol):
    """What a cell is read as: :class:`procbench.runners.runtime.predictions.FieldType` (named by shape, as that module imports this one)."""

    @property
    def kind(self) -> str: ...
    @property
    def item(self) -> Any: ...
    @property
    def values(self) -> tuple[Any, ...]: ...
    def spelling(self) -> str: ...
    def from_text(self, text: str) -> Any: ...


class BadCell(ValueError):
    """A cell that does not read as its declared type; the message says what was expected."""


def _number(kind: str, text: str) -> int | float:
    if kind == "int":
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def cast_cell(ftype: CellType, text: str) -> Any:
    """``text`` (one cell) read as a value of ``ftype``; :class:`BadCell` when it does not fit."""
    kind = ftype.kind
    if kind in ("str", "any"):
        return text
    if kind == "optional":
        if not text.strip():
            return None
        return text if ftype.item is None else cast_cell(ftype.item, text)
    if not text.strip():
        raise BadCell(
            f"an empty cell, but {ftype.spelling()} needs a value (declare optional({ftype.spelling()}) where cells may be empty)"
        )
    if kind in ("int", "float"):
        try:
            return _number(kind, text)
        except (ValueError, OverflowError):
            wanted = "an integer" if kind == "int" else "a finite number"
            raise BadCell(f"{kind} needs {wanted}") from None
    if kind == "bool":
        spelled = text.strip().lower()
        if spelled in TRUE_SPELLINGS:
            return True
        if spelled in FALSE_SPELLINGS:
            return False
        raise BadCell("bool is true/false, yes/no or 1/0")
    if kind == "enum":
        for value in ftype.values:
            if isinstance(value, bool):
                if text.strip().lower() in (TRUE_SPELLINGS if value else FALSE_SPELLINGS):
                    return value
            elif isinstance(value, str):
                if text == value:
                    return value
            else:
                try:
                    read = _number("int" if isinstance(value, int) else "float", text)
                except (ValueError, OverflowError):
                    continue
                if read == value:
                    return value
        raise BadCell(f"not one of {', '.join(json.dumps(v) for v in ftype.values)}")
    try:  # JSON text of a list or record: the type's own depth- and shape-checked reading
        return ftype.from_text(text)
    except ValueError:
        raise BadCell(
            f"{ftype.spelling()} is written as JSON text of such a value in a cell"
        ) from None
