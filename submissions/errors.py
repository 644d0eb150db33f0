"""What intake raises when it stores nothing; every one carries the receipt of its ``failures`` row.

``RejectedPredictions`` is an ``InvalidPredictions`` (the file: every problem with its line), and
``SubmissionRefused`` a ``ValueError`` (the request: auth, quota, names, split), so callers written
against those base classes keep working.  Import them from ``procbench`` (``procbench.SubmissionRefused``):
the same classes in a checkout and in an installed wheel, whose build moves this module to
``procbench.submissions.errors``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from procbench.runners.runtime._types import InvalidPredictions, Problem

STAGES = ("request", "auth", "quota", "data", "file", "validate", "score", "store")


class RejectedPredictions(InvalidPredictions):
    """The prediction file was refused (limits, encoding, schema, ids); nothing stored."""

    def __init__(
        self,
        problems: Sequence[Problem],
        source: str = "",
        *,
        receipt: str,
        stage: str = "validate",
    ):
        self.receipt = receipt
        self.stage = stage
        super().__init__(problems, source)


class SubmissionRefused(ValueError):
    """The request was refused before or instead of storing (auth, quota, bad name, unknown split)."""

    def __init__(
        self, message: str, *, receipt: str, stage: str, next_slot: datetime | None = None
    ):
        self.message = message
        self.receipt = receipt
        self.stage = stage
        self.next_slot = next_slot  # quotas: when the next submission will be accepted (UTC)
        super().__init__(message)


class MissingData(FileNotFoundError):
    """The gold data of the split is not under the data root."""

    def __init__(self, message: str, *, receipt: str):
        self.receipt = receipt
        self.stage = "data"
        super().__init__(message)


class ScoringFailed(RuntimeError):
    """The scorer or the store failed on a file that validated; nothing stored."""

    def __init__(self, message: str, *, receipt: str, stage: str = "score"):
        self.receipt = receipt
        self.stage = stage
        super().__init__(message)
