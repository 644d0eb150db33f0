"""The shapes a pair similarity and its batch kernel have (procbench.runners.library.similarity re-exports them).

Apart from the similarities themselves, so that a task whose similarities live elsewhere (ProPara's
phrase overlap in procbench.runners.library.structured) builds its matcher without importing the
BLEU, ROUGE and token-F1 ones (issue #31: start-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np


# How many prepared forms a similarity or matcher keeps per raw text: a long-lived runner (the site's) scores file
# after file, so the memo is cleared when full instead of growing with every distinct text ever scored.
PREPARED_LIMIT = 1 << 16


class Similarity(Protocol):
    @property
    def name(self) -> str: ...  # read-only: the similarities are frozen dataclasses

    def prepare(self, text: str) -> Any: ...

    def score(self, gold: Any, prediction: Any) -> float: ...


class PairKernel(Protocol):
    """Scores pairs of strings by index: string ``i`` is the ``i``-th text passed to ``extend``."""

    def extend(self, texts: Sequence[str]) -> None: ...

    def score_pairs(self, gold: np.ndarray, prediction: np.ndarray) -> np.ndarray: ...
