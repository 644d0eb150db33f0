"""NumPy, imported when first used rather than when a module that may use it is imported.

The declarative matcher and the similarity kernels use NumPy only on their batch paths; the tasks
that never take those paths (ProPara, PARADISE, PM-LLM) score without importing it, which saves
about 40 ms of every such ``procbench`` process (docs/performance.md).  Modules write::

    if TYPE_CHECKING:
        import numpy as np
    else:
        from procbench.runners.runtime.lazy_numpy import np
"""

from __future__ import annotations

import importlib
from typing import Any


class _LazyNumpy:
    """Forwards attribute access to the ``numpy`` module, importing it on the first access."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("numpy"), name)

    def __repr__(self) -> str:
        return "<numpy, imported on first use>"


np = _LazyNumpy()
