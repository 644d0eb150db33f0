"""The runtime: metric library, matchers, aggregators and per-benchmark readers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procbench.runners.runtime._types import (
        GoldSet,
        InvalidPredictions,
        ItemScore,
        PredictionWarning,
        Problem,
    )
    from procbench.runners.runtime.registry import Component, Param, component

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

# Imported on first use (PEP 562): ``procbench.runners.runtime.paths``, which every command reads, should not pull in the
# registry; and ``python -m procbench.runners.runtime.registry`` then runs without importing itself twice.
_HOMES = {
    "Component": "procbench.runners.runtime.registry",
    "Param": "procbench.runners.runtime.registry",
    "component": "procbench.runners.runtime.registry",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'runners' has no attribute {name!r}")
    import importlib

    return getattr(
        importlib.import_module(_HOMES.get(name, "procbench.runners.runtime._types")), name
    )
