"""issue #17: the board's own judge at intake (a local OpenAI-compatible server on 127.0.0.1; never the network).

With ``PROCBENCH_BOARD_JUDGE_URL`` / ``_MODEL`` set, a PM-LLM submission's own verdicts are discarded,
its answers graded by the board's judge with the spec's prompts, and the row stored as judged by that
model; without them the row is self-judged as before; a failing judge stores nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import duckdb
import polars as pl
import pytest

from procbench.leaderboard import boardview
from procbench.leaderboard.model import TaskInfo
from procbench.leaderboard.queries import tasks
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.pmllm.judge import COT_SENTENCE
from procbench.runners.pmllm.questions import load_questions
from procbench.submissions import SubmissionRefused, SubmissionRequest, judging, submit
from tests.test_pmllm_judge import FakeJudge, _server, _started, _stop, always

QUESTIONS = load_questions(SAMPLE_DATA_ROOT)
TEXT_IDS = sorted(q for q, item in QUESTIONS.items() if item.image is None)[:3]
EMPTY_ID = sorted(q for q, item in QUESTIONS.items() if item.image is None)[3]
JUDGE_MODEL = "board-judge-x"


def _self_graded(tmp_path: Path) -> Path:
    """Three answers the submitter graded 10.0 themselves, and one empty answer also 'graded' 10.0."""
    path = tmp_path / "self-graded.jsonl"
    lines = [{"id": q, "answer": f"my answer to {q}", "verdict": "10.0"} for q in TEXT_IDS]
    lines.append({"id": EMPTY_ID, "answer": "", "verdict": "10.0"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _configure(monkeypatch: pytest.MonkeyPatch, url: str, tmp_path: Path) -> None:
    monkeypatch.setenv(judging.ENV_URL, url)
    monkeypatch.setenv(judging.ENV_MODEL, JUDGE_MODEL)
    monkeypatch.setenv(judging.ENV_KEY, "board-secret")
    monkeypatch.setenv(judging.ENV_CACHE, str(tmp_path / "judge-cache"))


@pytest.fixture
def serve() -> Iterator[Callable[[FakeJudge], str]]:
    """Start fake judges (tests/test_pmllm_judge.py's server); each is stopped after the test."""
    servers: list[ThreadingHTTPServer] = []
    yield lambda judge: _started(_server(judge), servers)
    _stop(servers)


@pytest.fixture(autouse=True)
def _unconfigured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        judging.ENV_URL,
        judging.ENV_MODEL,
        judging.ENV_KEY,
        judging.ENV_CACHE,
        judging.ENV_TIMEOUT,
    ):
        monkeypatch.delenv(name, raising=False)


def _submit(
    predictions: Path,
    db: Path,
    model: str,
    team: str,
    *,
    metadata: dict[str, object] | None = None,
    judge: judging.BoardJudge | None = None,
):
    spec, runner = load_task("pm-llm-benchmark")
    request = SubmissionRequest(
        split="main", predictions=predictions, model=model, team=team, metadata=metadata or {}
    )
    return submit(request, spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db, judge=judge)


def _stored(db: Path) -> list[tuple[str, dict[str, object]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [
            (model, json.loads(meta))
            for model, meta in con.execute(
                "SELECT model, metadata_json FROM submissions ORDER BY model"
            ).fetchall()
        ]


def _grades(outcome) -> dict[str, float]:
    return {
        item.item_id: item.values["grade"]
        for item in outcome.evaluation.items
        if item.item_id in {*TEXT_IDS, EMPTY_ID}
    }


def test_configured_judge_discards_the_submitters_verdicts_and_grades_the_answers(
    serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = FakeJudge(always("3.0/10\n\nWeak."))
    _configure(monkeypatch, serve(fake), tmp_path)
    db = tmp_path / "board.duckdb"
    outcome = _submit(_self_graded(tmp_path), db, "m", "t", metadata={"judge": "self-claimed"})

    # one request per non-empty answer, with the spec's prompt and the board's key; the empty answer is not asked about
    assert len(fake.bodies) == len(TEXT_IDS)
    prompts = sorted(body["messages"][0]["content"] for body in fake.bodies)
    assert all(p.startswith("Given the following question:") for p in prompts)
    assert [any(f"my answer to {q}" in p for p in prompts) for q in TEXT_IDS] == [True] * len(
        TEXT_IDS
    )
    assert {body["model"] for body in fake.bodies} == {JUDGE_MODEL}
    assert {h.get("Authorization") for h in fake.headers} == {"Bearer board-secret"}
    assert not any(COT_SENTENCE in p for p in prompts)

    # stored with the judge's grades (3.0, not the submitter's 10.0), the empty answer at 0, and the judge's name
    assert _grades(outcome) == {**dict.fromkeys(TEXT_IDS, 3.0), EMPTY_ID: 0.0}
    assert outcome.evaluation.metrics["verdicts"] == len(TEXT_IDS)
    assert _stored(db) == [("m", {"judge": JUDGE_MODEL})]

    # the same file without a board judge keeps the submitter's word, marked self-judged
    monkeypatch.delenv(judging.ENV_URL)
    monkeypatch.delenv(judging.ENV_MODEL)
    own = _submit(_self_graded(tmp_path), tmp_path / "plain.duckdb", "m", "t")
    assert _grades(own) == {**dict.fromkeys(TEXT_IDS, 10.0), EMPTY_ID: 0.0}
    assert _stored(tmp_path / "plain.duckdb") == [("m", {"judge": "self"})]
    assert len(fake.bodies) == len(TEXT_IDS)  # no judge asked


def test_cot_metadata_reaches_the_judges_prompt(
    serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = FakeJudge(always("5.0"))
    _configure(monkeypatch, serve(fake), tmp_path)
    _submit(_self_graded(tmp_path), tmp_path / "board.duckdb", "m", "t", metadata={"cot": True})
    assert fake.bodies and all(
        COT_SENTENCE in body["messages"][0]["content"] for body in fake.bodies
    )
    assert _stored(tmp_path / "board.duckdb") == [("m", {"cot": True, "judge": JUDGE_MODEL})]


def test_board_ranks_board_judged_rows_apart_from_self_judged_ones(
    serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if not (SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl").is_file():
        pytest.skip("the PM-LLM sample submissions are not shipped here")
    monkeypatch.setenv(
        "PROCBENCH_MIN_INTERVAL_ITEMS", "5"
    )  # the samples have 9 items: the leader is what is tested here, not the floor
    db = tmp_path / "board.duckdb"
    _submit(
        SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl", db, "own-verdicts", "t1"
    )  # no judge configured: self-judged
    fake = FakeJudge(always("3.0/10"))
    _configure(monkeypatch, serve(fake), tmp_path)
    # an answer to every question: a partial file's row is listed unranked (issue #33.5), and the ranks are what is tested here
    every = tmp_path / "every.jsonl"
    every.write_text(
        "".join(
            json.dumps({"id": q, "answer": f"my answer to {q}", "verdict": "10.0"}) + "\n"
            for q in sorted(QUESTIONS)
        ),
        encoding="utf-8",
    )
    _submit(every, db, "board-judged", "t2")

    info = TaskInfo.from_row(
        tasks(db).filter(pl.col("task") == "pm-llm-benchmark").row(0, named=True)
    )
    view = boardview.build(db, info, interval_rows=2)
    table = view.table.filter(pl.col("Model").is_in(["own-verdicts", "board-judged"]))
    # the self-judged row scores far higher, yet the board-judged row leads its own group
    assert table["Model"].to_list() == ["board-judged", "own-verdicts"]
    assert table["Rank"].to_list() == [1, 1]
    assert table["Judged by"].to_list() == [f"judge: {JUDGE_MODEL}", "self-judged"]
    export = view.export.filter(pl.col("model").is_in(["own-verdicts", "board-judged"]))
    assert export["judge"].to_list() == [JUDGE_MODEL, "self"]
    assert export["score"][1] > export["score"][0]
    assert view.leader == export["submission_id"][0]


@pytest.mark.parametrize("status", [400, 503])
def test_a_failing_judge_refuses_the_submission_and_stores_nothing(
    status: int, serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = FakeJudge(always("server trouble", status=status))
    url = serve(fake)
    db = tmp_path / "board.duckdb"
    board = judging.BoardJudge(
        base_url=url,
        model=JUDGE_MODEL,
        cache_dir=tmp_path / "cache",
        max_retries=1,
        backoff_s=0.001,
    )
    with pytest.raises(SubmissionRefused) as refused:
        _submit(_self_graded(tmp_path), db, "m", "t", judge=board)
    assert refused.value.stage == "judge"
    assert f"the board's judge ({JUDGE_MODEL}) could not grade this file" in str(refused.value)
    assert "nothing was stored" in str(refused.value)
    assert fake.bodies  # the judge was asked
    if db.exists():
        with duckdb.connect(str(db), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM submissions").fetchone()[0] == 0
    assert not list((tmp_path / "cache").rglob("*.json"))  # nothing cached from a failure


def test_a_failing_judge_logs_its_failure_in_an_existing_store(
    serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = tmp_path / "board.duckdb"
    _submit(_self_graded(tmp_path), db, "earlier", "t0")  # a store with one (self-judged) row
    fake = FakeJudge(always("no", status=401))
    _configure(monkeypatch, serve(fake), tmp_path)
    with pytest.raises(SubmissionRefused) as refused:
        _submit(_self_graded(tmp_path), db, "m", "t")
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT model FROM submissions").fetchall() == [("earlier",)]
        assert con.execute(
            "SELECT stage FROM failures WHERE receipt_id = ?", [refused.value.receipt]
        ).fetchall() == [("judge",)]


def test_half_configured_judge_is_refused_not_ignored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(judging.ENV_URL, "http://127.0.0.1:9/v1")
    with pytest.raises(SubmissionRefused, match="half configured") as refused:
        _submit(_self_graded(tmp_path), tmp_path / "board.duckdb", "m", "t")
    assert refused.value.stage == "judge"
    assert not (tmp_path / "board.duckdb").exists()


def test_from_env() -> None:
    assert judging.BoardJudge.from_env() is None


def test_from_env_reads_every_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _configure(monkeypatch, "http://judge.example/v1", tmp_path)
    monkeypatch.setenv(judging.ENV_TIMEOUT, "30")
    board = judging.BoardJudge.from_env()
    assert board == judging.BoardJudge(
        base_url="http://judge.example/v1",
        model=JUDGE_MODEL,
        api_key="board-secret",
        cache_dir=tmp_path / "judge-cache",
        timeout_s=30.0,
    )
    monkeypatch.setenv(judging.ENV_MODEL, "self")
    with pytest.raises(judging.JudgeError, match="may not be 'self'"):
        judging.BoardJudge.from_env()


def _rescore_job(tmp_path: Path, judge: str):
    import gzip
    import hashlib

    from procbench.api import spec_path
    from procbench.submissions.engines import RescoreJob

    raw = _self_graded(tmp_path).read_bytes()
    return RescoreJob(
        job_id="s1",
        task="pm-llm-benchmark",
        spec_path=str(spec_path("pm-llm-benchmark")),
        split="main",
        data_root=str(SAMPLE_DATA_ROOT),
        filename="self-graded.jsonl",
        content_sha256=hashlib.sha256(raw).hexdigest(),
        raw_gzip=gzip.compress(raw),
        metadata_json=json.dumps({"judge": judge}),
    )


def test_rescoring_a_board_judged_row_asks_the_judge_again_or_fails(
    serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from procbench.submissions.engines import run_job

    # without the board's judge, the row fails rather than being scored with the file's own 10.0 verdicts
    failed = run_job(_rescore_job(tmp_path, JUDGE_MODEL))
    assert (
        not failed.ok
        and f"re-scoring needs that judge ({judging.ENV_URL} and {judging.ENV_MODEL}={JUDGE_MODEL})"
        in failed.reason
    )
    fake = FakeJudge(always("4.0"))
    _configure(monkeypatch, serve(fake), tmp_path)
    redone = run_job(_rescore_job(tmp_path, JUDGE_MODEL))
    assert redone.ok, redone.reason
    grades = {
        item: value
        for item, metric, value in redone.items
        if metric == "grade" and item in {*TEXT_IDS, EMPTY_ID}
    }
    assert grades == {**dict.fromkeys(TEXT_IDS, 4.0), EMPTY_ID: 0.0}
    # a self-judged row is re-scored from its file, as before, without asking the judge
    asked = len(fake.bodies)
    own = run_job(_rescore_job(tmp_path, "self"))
    assert own.ok and {
        i: v for i, m, v in own.items if m == "grade" and i in TEXT_IDS
    } == dict.fromkeys(TEXT_IDS, 10.0)
    assert len(fake.bodies) == asked
