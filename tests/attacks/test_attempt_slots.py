"""Issue #29, attempt slots: with ``max_attempts``, an intake that crashes (a deeply nested judge reply, a bug,
Ctrl-C) gives its reserved slot back on the way out, and a slot a killed process left stops counting after
``quotas.STALE_ATTEMPT``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.pmllm.questions import load_questions
from procbench.submissions import SubmissionRequest, judging, quotas, store, submit
from procbench.submissions.errors import ScoringFailed, SubmissionRefused
from tests.attacks.fake_judge import Hostile, nested, serving, verdict
from tests.test_submissions_support import counts, failures, query, submit_openpi, variant

QUESTIONS = load_questions(SAMPLE_DATA_ROOT)


def _cap(db: Path, task: str, attempts: int) -> None:
    with store.writer(db) as con, store.transaction(con):
        quotas.set_quota(con, task, per_day=None, max_attempts=attempts, now=store.now())


def _reserved(db: Path) -> int:
    return len(query(db, "SELECT 1 FROM failures WHERE stage = ?", [quotas.RESERVED_STAGE]))


def _answers(tmp_path: Path, k: int) -> Path:
    path = tmp_path / f"answers-{k}.jsonl"
    path.write_text(
        "".join(json.dumps({"id": q, "answer": f"answer {k} to {q}"}) + "\n" for q in QUESTIONS),
        encoding="utf-8",
    )
    return path


def _pmllm(db: Path, predictions: Path, judge: Any):  # type: ignore[no-untyped-def]
    spec, runner = load_task("pm-llm-benchmark")
    return submit(
        SubmissionRequest(split="main", predictions=predictions, model="m", team="t"),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
        judge=judge,
    )


def test_two_crashed_judge_replies_leave_the_slots_free(tmp_path: Path) -> None:
    """The issue's case: --max-attempts 2, two submissions whose judge replies are nested 5 000 deep, then a good one."""
    db = tmp_path / "board.duckdb"
    _cap(db, "pm-llm-benchmark", 2)
    with serving(Hostile(lambda n: (200, nested(5_000)))) as url:
        hostile = judging.BoardJudge(
            base_url=url,
            model="board-judge-x",
            cache_dir=tmp_path / "cache",
            backoff_s=0.001,
            max_retries=1,
        )
        for k in (1, 2):
            with pytest.raises(SubmissionRefused) as refused:
                _pmllm(db, _answers(tmp_path, k), hostile)
            assert refused.value.stage == "judge"
    assert _reserved(db) == 0
    with serving(Hostile(lambda n: (200, verdict("6.0")))) as url:
        good = judging.BoardJudge(
            base_url=url, model="board-judge-x", cache_dir=tmp_path / "cache", backoff_s=0.001
        )
        assert _pmllm(db, _answers(tmp_path, 3), good).created
    assert _reserved(db) == 0


class _CrashingJudge:
    """A board judge whose client has a bug: it raises something intake does not expect."""

    model = "board-judge-x"

    def grade(self, *args: Any, **kwargs: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")


def test_an_unexpected_crash_is_one_line_with_a_receipt_and_frees_the_slot(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    _cap(db, "pm-llm-benchmark", 2)
    receipts = []
    for k in (1, 2):
        with pytest.raises(ScoringFailed) as failed:
            _pmllm(db, _answers(tmp_path, k), _CrashingJudge())
        assert (
            failed.value.stage == "internal"
            and failed.value.receipt
            and "\n" not in str(failed.value)
        )
        receipts.append(failed.value.receipt)
    assert _reserved(db) == 0
    logged = {r["receipt_id"]: r["stage"] for r in failures(db)}
    assert [logged.get(r) for r in receipts] == ["internal", "internal"]
    with serving(Hostile(lambda n: (200, verdict("6.0")))) as url:
        good = judging.BoardJudge(
            base_url=url, model="board-judge-x", cache_dir=tmp_path / "cache", backoff_s=0.001
        )
        assert _pmllm(db, _answers(tmp_path, 3), good).created


def test_an_interrupted_intake_frees_its_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "board.duckdb"
    _cap(db, "openpi", 1)
    from procbench.runners.runtime.runner import TaskRunner

    def interrupted(self: TaskRunner, path: Path, gold: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(TaskRunner, "validate", interrupted)
        with pytest.raises(KeyboardInterrupt):
            submit_openpi(db, variant(tmp_path, 1))
    assert _reserved(db) == 0
    assert submit_openpi(db, variant(tmp_path, 2)).created


CRASHING_SUBMIT = """
import sys
from pathlib import Path
from tests.test_submissions_support import submit_openpi
submit_openpi(Path(sys.argv[1]), Path(sys.argv[2]))
"""


def test_a_slot_left_by_a_killed_process_expires(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    _cap(db, "openpi", 1)
    env = {
        **os.environ,
        store.CRASH_ENV: "intake.before_blob",
    }  # killed after reserving, while storing
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_SUBMIT, str(db), str(variant(tmp_path, 1))],
        env=env,
        cwd=Path.cwd(),
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL
    assert _reserved(db) == 1
    before = counts(db)
    with pytest.raises(SubmissionRefused, match="1 in progress"):
        submit_openpi(db, variant(tmp_path, 2), now=store.now())
    assert counts(db) == before
    later = store.now() + quotas.STALE_ATTEMPT + timedelta(minutes=1)
    assert submit_openpi(db, variant(tmp_path, 2), now=later).created
