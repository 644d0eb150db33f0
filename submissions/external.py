"""External rows: figures another evaluator published (an Every Eval Ever record), shown on a board unranked.

They are stored as reported (paper) rows are (``procbench.submissions.intake.load_reported``): a reference row of
the team ``reference`` (reserved: no submitter can use it), aggregates only, no items and no raw file,
``reported_on`` the data digest of the split the figures were computed on (the board shows it only over
that data).  What marks them external is ``metadata.external`` (:data:`EXTERNAL`), which only this
writer sets on a reference row (a submitter cannot make a reference row), and the board leaves such
rows unranked (``procbench.leaderboard.boardview``).  They are stored under the fingerprint the board shows now.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.submissions import boards, store
from procbench.submissions.details import REFERENCE_TEAM, check_name
from procbench.submissions.metadata_checks import check_metadata
from procbench.submissions.rows import aggregate_frame, item_frame

EXTERNAL = "every-eval-ever"  # metadata "external" of such a row


def is_external(is_reference: bool, metadata: Mapping[str, Any]) -> bool:
    """Whether a board row is an external (unranked) row: a reference row whose metadata says so."""
    return bool(is_reference) and metadata.get("external") == EXTERNAL


@dataclass(frozen=True)
class ExternalOutcome:
    submission_id: str
    created: bool
    fingerprint: str


def store_external(
    db_path: Path,
    *,
    task: str,
    split: str,
    model: str,
    values: Sequence[tuple[str, str, str, float]],
    metadata: Mapping[str, Any],
    reported_on: str,
    content: str,
) -> ExternalOutcome:
    """Store one external row under the fingerprint the board of ``task`` / ``split`` shows now.

    ``values``: (slice, slice value, metric, value); ``content``: what identifies the record (its sha256 is the
    row's content hash: the same record is stored once).  LookupError when the store has no such board,
    ValueError for a bad model name or metadata; nothing is stored then.
    """
    check_name("model", model)
    meta = {**dict(metadata), "external": EXTERNAL}
    check_metadata(meta)
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    with store.writer(db_path) as con, store.transaction(con):
        fingerprint = boards.current(con, task, split)
        if fingerprint is None:
            raise LookupError(f"the store has no board of {task} / {split}")
        sid = store.submission_id(task, split, REFERENCE_TEAM, digest, fingerprint)
        if store.exists(con, sid):
            return ExternalOutcome(sid, False, fingerprint)
        stamp = store.now()
        row = store.SubmissionRow(
            submission_id=sid,
            task=task,
            split=split,
            fingerprint=fingerprint,
            team=REFERENCE_TEAM,
            model=model,
            content_sha256=digest,
            n_items=0,
            created_at=stamp,
            metadata=meta,
            is_reference=True,
            reported_on=reported_on,
            run_by="unknown",
        )
        history = [
            store.StatusEvent(
                "scored",
                stamp,
                f"imported from an Every Eval Ever record ({json.dumps(meta.get('evaluation_id', ''))})",
            )
        ]
        aggregates = aggregate_frame(sid, [(s, v, m, float(x), 0) for s, v, m, x in values])
        store.insert_submission(
            con, row, items=item_frame(sid, []), aggregates=aggregates, history=history
        )
    return ExternalOutcome(sid, True, fingerprint)
