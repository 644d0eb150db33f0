"""The runtime: metric library, matchers, aggregators and per-benchmark readers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procbench.runners._types import (
        GoldSet,
        InvalidPredictions,
        ItemScore,
        PredictionWarning,
        Problem,
    )
    from procbench.runners.registry import Component, Param, component

__all__ = [
    "Component",
    "GoldSet",
    "InvalidPredictions",
    "ItemScore",
    "Param",
    "PredictionWarning",
    "Problem",
    "component",
]

# Imported on first use (PEP 562): ``procbench.runners.paths``, which every command reads, should not pull in the
# registry; and ``python -m procbench.runners.registry`` then runs without importing itself twice.
_HOMES = {
    "Component": "procbench.runners.registry",
    "Param": "procbench.runners.registry",
    "component": "procbench.runners.registry",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'runners' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES.get(name, "procbench.runners._types")), name)
