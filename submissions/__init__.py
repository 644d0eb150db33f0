"""Intake (validate → score → store) and the DuckDB store."""

from submissions.intake import SubmissionOutcome, load_reported, submit

__all__ = ["SubmissionOutcome", "load_reported", "submit"]
