"""Intake (check → stage → validate → score → store) and the DuckDB store.

``submit`` (of a ``SubmissionRequest``) and ``load_reported`` are the entry points; ``queries`` holds the read helpers that
enforce hidden splits and hidden submissions; ``engines`` re-score stored files, driven by the
application layer (``procbench.rescore``; the demo board: ``procbench.demo``).
"""

from procbench.submissions.details import ModelCard
from procbench.submissions.errors import (
    MissingData,
    RejectedPredictions,
    ScoringFailed,
    SubmissionRefused,
)
from procbench.submissions.intake import (
    SubmissionOutcome,
    SubmissionRequest,
    load_reported,
    submit,
)
from procbench.submissions.staging import IntakeLimits

__all__ = [
    "IntakeLimits",
    "MissingData",
    "ModelCard",
    "RejectedPredictions",
    "ScoringFailed",
    "SubmissionOutcome",
    "SubmissionRefused",
    "SubmissionRequest",
    "load_reported",
    "submit",
]
