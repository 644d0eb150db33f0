"""Generated metric names: a class's text inside a name a spec can write (docs/language.md, "Generated names").

A measure over a class set names one output per class (``f1_<class>``, ``confusion_<gold>_<predicted>``),
and the class text comes from the data or the spec's ``labels = [...]``: ``"more likely"``, ``"42"``,
``"café"``.  A spec refers to metrics by bare name (``rank_by``, ``metric`` blocks, formulas), so every
generated name must be one the grammar reads as a name.  The rule is one substitution: each run of
characters a name cannot hold (anything but ASCII letters, digits, ``_`` and ``-``) becomes one
``_``.  Names that are already names are unchanged, so no shipped metric name moves.  Two classes
that become the same name are refused by ``check`` (``dsl/names.py``).
"""

from __future__ import annotations

import re

_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_\-]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")  # the grammar's NAME (dsl/procbench.lark)


def name_part(text: str) -> str:
    """``text`` as it appears inside a generated name (``"more likely"`` -> ``"more_likely"``)."""
    return _NOT_IN_A_NAME.sub("_", text)


def is_name(text: str) -> bool:
    """True when ``text`` is a name a spec can write bare (the grammar's NAME)."""
    return _NAME.fullmatch(text) is not None
