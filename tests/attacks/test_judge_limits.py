"""Issue #29, judge replies: a deeply nested reply is refused (never a RecursionError), and the board's judge
at intake stops at the first permanent failure.  Against a loopback fake judge (tests/attacks/fake_judge.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.pmllm.answers import Answer
from procbench.runners.pmllm.judge import JudgeError, JudgeSettings, judge_answers
from procbench.runners.pmllm.questions import load_questions
from procbench.submissions import SubmissionRequest, judging, submit
from procbench.submissions.errors import SubmissionRefused
from tests.attacks.fake_judge import Hostile, nested, serving, verdict
from tests.test_submissions_support import counts, failures

QUESTIONS = load_questions(SAMPLE_DATA_ROOT)
NESTED_400_KB = nested(200_000)  # the reply: about 400 KB, 200 000 levels


def _answers_file(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text(
        "".join(json.dumps({"id": q, "answer": f"my answer to {q}"}) + "\n" for q in QUESTIONS),
        encoding="utf-8",
    )
    return path


def _board_judge(url: str, tmp_path: Path, **options: object) -> judging.BoardJudge:
    return judging.BoardJudge(
        base_url=url,
        model="board-judge-x",
        cache_dir=tmp_path / "cache",
        backoff_s=0.001,
        **options,
    )  # type: ignore[arg-type]


def _submit(db: Path, predictions: Path, judge: judging.BoardJudge):  # type: ignore[no-untyped-def]
    spec, runner = load_task("pm-llm-benchmark")
    return submit(
        SubmissionRequest(split="main", predictions=predictions, model="m", team="t"),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
        judge=judge,
    )


def test_a_deeply_nested_reply_is_a_judge_error_not_a_recursion_error(tmp_path: Path) -> None:
    assert len(NESTED_400_KB) > 400_000
    judge = Hostile(lambda n: (200, NESTED_400_KB))
    with serving(judge) as url:
        settings = JudgeSettings(
            base_url=url, model="judge-x", backoff_s=0.001, max_retries=2, concurrency=1
        )
        qid = next(iter(QUESTIONS))
        with pytest.raises(JudgeError, match="nested more than 64 levels"):
            judge_answers(
                {qid: QUESTIONS[qid]}, {qid: Answer(qid, "an answer")}, settings, cache_dir=tmp_path
            )
    assert judge.requests == 1  # a malformed reply is not retried
    assert not any(tmp_path.rglob("*.json"))  # and nothing cached


def test_intake_refuses_a_deeply_nested_reply_with_a_receipt_and_stores_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "board.duckdb"
    with serving(Hostile(lambda n: (200, verdict("7.0")))) as url:
        _submit(db, _answers_file(tmp_path), _board_judge(url, tmp_path))  # a store with one row
    before = counts(db)
    other = tmp_path / "other.jsonl"
    other.write_text(
        _answers_file(tmp_path).read_text().replace("my answer", "another answer"), encoding="utf-8"
    )
    with (
        serving(Hostile(lambda n: (200, NESTED_400_KB))) as url,
        pytest.raises(SubmissionRefused) as refused,
    ):
        _submit(db, other, _board_judge(url, tmp_path))
    assert refused.value.stage == "judge" and "nested more than 64 levels" in refused.value.message
    assert "RecursionError" not in refused.value.message and len(refused.value.message) < 1500
    assert counts(db) == before
    rows = [r for r in failures(db) if r["receipt_id"] == refused.value.receipt]
    assert [r["stage"] for r in rows] == ["judge"]


@pytest.mark.parametrize("status", [500, 400])
def test_intake_stops_at_the_first_permanent_failure(status: int, tmp_path: Path) -> None:
    """A judge answering 500 (retried, then permanent) or 400 (permanent at once): one question's requests per worker, not every question's."""
    retries, workers = 3, 2
    judge = Hostile(lambda n: (status, b'{"error": "down"}'))
    db = tmp_path / "board.duckdb"
    with serving(judge) as url, pytest.raises(SubmissionRefused) as refused:
        _submit(
            db,
            _answers_file(tmp_path),
            _board_judge(url, tmp_path, max_retries=retries, concurrency=workers),
        )
    per_question = retries + 1 if status == 500 else 1
    assert refused.value.stage == "judge" and f"HTTP {status}" in refused.value.message
    # before the fix every one of the 9 questions was asked (9 x 4 = 36 requests for a 500)
    assert judge.requests <= workers * per_question + workers < len(QUESTIONS) * per_question
    assert not db.exists() or counts(db)["submissions"] == 0
