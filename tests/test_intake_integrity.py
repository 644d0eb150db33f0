"""Issue #17, integrity of intake: one private staged copy is all that is read, and max_attempts holds under concurrency."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import threading
from datetime import datetime
from pathlib import Path

import pytest

from procbench.submissions import blobs, intake, quotas, store
from procbench.submissions.errors import SubmissionRefused
from tests.test_submissions_support import failures, query, submit_openpi, variant

T0 = datetime(2026, 11, 22, 9, 0, 0)


def _item_scores(db: Path) -> list[tuple[object, ...]]:
    return query(db, "SELECT item_id, metric, value FROM item_scores ORDER BY item_id, metric")


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_file_changed_after_staging_is_stored_as_staged(
    packed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The original is rewritten between staging and validation: scores, hash and blob are all of the staged content."""
    staged_content = variant(tmp_path / "a", 1).read_bytes()
    other_content = variant(tmp_path / "b", 2).read_bytes()
    assert staged_content != other_content
    upload = tmp_path / ("upload.jsonl.gz" if packed else "upload.jsonl")
    upload.write_bytes(gzip.compress(staged_content) if packed else staged_content)
    expected_db = tmp_path / "expected.duckdb"
    reference = tmp_path / "reference.jsonl"
    reference.write_bytes(staged_content)
    submit_openpi(
        expected_db, reference
    )  # what the staged content scores, stored from a file nobody changes

    real_precheck = intake._precheck
    calls = []

    def rewrite_then_precheck(*args, **kwargs):  # type: ignore[no-untyped-def]
        # between staging (hashed) and validation (read): the submitter swaps the file's content
        upload.write_bytes(gzip.compress(other_content) if packed else other_content)
        calls.append(1)
        return real_precheck(*args, **kwargs)

    monkeypatch.setattr(intake, "_precheck", rewrite_then_precheck)
    db = tmp_path / "board.duckdb"
    outcome = submit_openpi(db, upload)
    assert calls == [1]
    staged_sha = hashlib.sha256(staged_content).hexdigest()
    assert query(
        db,
        "SELECT content_sha256 FROM submissions WHERE submission_id = ?",
        [outcome.submission_id],
    ) == [(staged_sha,)]
    assert _item_scores(db) == _item_scores(expected_db)
    ((location,),) = query(
        db, "SELECT location FROM raw_files WHERE content_sha256 = ?", [staged_sha]
    )
    assert gzip.decompress(blobs.blob_path(db, location).read_bytes()) == staged_content


def test_the_original_file_is_opened_once_and_never_by_the_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader and the raw-file store see a private copy, not the upload's path."""
    upload = tmp_path / "upload.jsonl"
    shutil.copy(variant(tmp_path / "a", 1), upload)
    seen: list[Path] = []
    real_put = blobs.put

    def spy_put(db_path: Path, staged):  # type: ignore[no-untyped-def]
        seen.append(staged.path)
        return real_put(db_path, staged)

    monkeypatch.setattr(blobs, "put", spy_put)
    submit_openpi(tmp_path / "board.duckdb", upload)
    assert seen and len(set(seen)) == 1  # one staged copy, however often the store asks for it
    path = seen[0]
    assert (
        path.name == "upload.jsonl" and path.resolve() != upload.resolve() and not path.is_symlink()
    )


def test_concurrent_failing_uploads_never_reach_the_validator_more_than_max_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five threads submit files that fail validation with max_attempts = 3: exactly three reach the validator.

    Each thread waiting in the validator holds until every thread has either reached it or been refused,
    so on a store that checks the cap only before validating all five would be inside at once.
    """
    db = tmp_path / "board.duckdb"
    with store.writer(db) as con, store.transaction(con):
        quotas.set_quota(con, "openpi", per_day=None, max_attempts=3, now=T0)
    threads_n = 5
    state = {"validated": 0, "refused": 0}
    settled = threading.Condition()

    from procbench.runners.runtime.runner import TaskRunner

    def counting_validate(self, path, gold):  # type: ignore[no-untyped-def]
        with settled:
            state["validated"] += 1
            settled.notify_all()
            settled.wait_for(lambda: state["validated"] + state["refused"] >= threads_n, timeout=60)
        raise ValueError("validator says no")

    monkeypatch.setattr(TaskRunner, "validate", counting_validate)
    files = [variant(tmp_path / f"f{k}", k) for k in range(threads_n)]
    outcomes: list[str] = []

    def one(path: Path) -> None:
        try:
            submit_openpi(db, path, now=T0)
            outcomes.append("stored")
        except SubmissionRefused as exc:
            outcomes.append(exc.stage)
            with settled:
                state["refused"] += 1
                settled.notify_all()
        except Exception as exc:  # noqa: BLE001 - the validator's failure
            outcomes.append(type(exc).__name__)

    workers = [threading.Thread(target=one, args=(f,)) for f in files]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert state["validated"] == 3
    assert sorted(outcomes) == ["ScoringFailed"] * 3 + ["quota"] * 2
    stages = sorted(row["stage"] for row in failures(db))
    assert stages == [
        "quota",
        "quota",
        "validate",
        "validate",
        "validate",
    ]  # no reservation is left behind
    with pytest.raises(SubmissionRefused, match=r"used all 3 attempts .*\(0 scored, 3 failed\)"):
        submit_openpi(db, files[0], now=T0)
