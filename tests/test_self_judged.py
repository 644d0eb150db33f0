"""issue #17: PM-LLM verdicts supplied by the submitter are marked self-judged and ranked apart."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest

from procbench.leaderboard import boardview, intake_form
from procbench.leaderboard.model import TaskInfo
from procbench.leaderboard.queries import tasks
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.pmllm.answers import Answer
from procbench.submissions import SubmissionRequest, judging, submit

SAMPLES = SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark"


def test_mark_sets_self_only_when_the_file_carried_verdicts_and_drops_a_claimed_judge() -> None:
    judged = {"q1": Answer("q1", "an answer", "8.0"), "q2": Answer("q2", "", None)}
    unjudged = {"q1": Answer("q1", "", None)}
    claimed = {
        "cot": True,
        "judge": "gpt-5.4",
    }  # a submitter claiming the board's judge graded the file
    assert judging.mark(claimed, judged) == {"cot": True, "judge": "self"}
    assert judging.mark(claimed, unjudged) == {"cot": True}
    assert judging.mark({}, unjudged, board_judge="gpt-5.4") == {"judge": "gpt-5.4"}
    assert judging.mark({}, {"a": {"verdict": "3"}}) == {"judge": "self"}  # plain-dict records too
    assert judging.judged_by({"judge": "self"}) == "self" and judging.judged_by({"judge": 3}) == ""


def _stored_metadata(db: Path, model: str) -> dict[str, object]:
    with duckdb.connect(str(db), read_only=True) as con:
        return json.loads(
            con.execute(
                "SELECT metadata_json FROM submissions WHERE model = ?", [model]
            ).fetchone()[0]
        )


@pytest.fixture
def board_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(
        "PROCBENCH_MIN_INTERVAL_ITEMS", "5"
    )  # the samples have 9 items: the tie group is what is tested here, not the floor
    """A store with one PM-LLM row carrying its own verdicts and one without verdicts (only an empty answer)."""
    if not (SAMPLES / "acme-large.jsonl").is_file():
        pytest.skip("the PM-LLM sample submissions are not shipped here")
    db = tmp_path / "judged.duckdb"
    spec, runner = load_task("pm-llm-benchmark")
    unjudged = tmp_path / "unjudged.jsonl"
    # an empty answer to every question (needs no judge): a whole file, so the row is ranked (a partial file is listed unranked)
    ids = [
        json.loads(line)["id"]
        for line in (SAMPLES / "acme-large.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    unjudged.write_text("".join(json.dumps({"id": i, "answer": ""}) + "\n" for i in ids))
    submit(
        SubmissionRequest(
            split="main",
            predictions=SAMPLES / "acme-large.jsonl",
            model="own-verdicts",
            team="t1",
            metadata={"judge": "gpt-5.4"},
        ),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )
    submit(
        SubmissionRequest(split="main", predictions=unjudged, model="no-verdicts", team="t2"),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )
    return db


def test_intake_records_self_judged_whatever_the_submitter_claims(board_db: Path) -> None:
    assert _stored_metadata(board_db, "own-verdicts") == {"judge": "self"}
    assert "judge" not in _stored_metadata(board_db, "no-verdicts")


def test_board_ranks_self_judged_rows_apart_and_marks_them(board_db: Path) -> None:
    info = TaskInfo.from_row(
        tasks(board_db).filter(pl.col("task") == "pm-llm-benchmark").row(0, named=True)
    )
    view = boardview.build(board_db, info, interval_rows=2)
    table = view.table.filter(pl.col("Model").is_in(["own-verdicts", "no-verdicts"]))
    # the self-judged row scores far higher, yet is not ranked above the other: it has its own rank group
    assert table["Model"].to_list() == ["no-verdicts", "own-verdicts"]
    assert table["Rank"].to_list() == [1, 1]
    assert table["Judged by"].to_list() == ["", "self-judged"]
    export = view.export.filter(pl.col("model").is_in(["own-verdicts", "no-verdicts"]))
    assert export["judge"].to_list() == ["", "self"]
    assert (
        export.filter(pl.col("model") == "own-verdicts")["score"].item()
        > export.filter(pl.col("model") == "no-verdicts")["score"].item()
    )
    # the leader's tie group never mixes the two groups
    assert view.leader == export["submission_id"][0] and export["submission_id"][1] not in view.tied
    placed = intake_form.place(board_db, "pm-llm-benchmark", "main", export["submission_id"][1])
    assert (placed.rank, placed.n_rows, placed.extra) == (1, 1, {"judge": "self"})


def test_board_without_judged_rows_has_no_judge_column(board_db: Path, tmp_path: Path) -> None:
    spec, runner = load_task("pm-llm-benchmark")
    db = tmp_path / "plain.duckdb"
    unjudged = tmp_path / "u.jsonl"
    unjudged.write_text(json.dumps({"id": "cat01_01_case_grouping", "answer": ""}) + "\n")
    submit(
        SubmissionRequest(split="main", predictions=unjudged, model="m", team="t"),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )
    info = TaskInfo.from_row(
        tasks(db).filter(pl.col("task") == "pm-llm-benchmark").row(0, named=True)
    )
    view = boardview.build(db, info, interval_rows=0)
    assert "Judged by" not in view.table.columns and "judge" not in view.export.columns


def test_board_page_shows_the_self_judged_marker(
    board_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from procbench.paths import PROJECT_ROOT

    monkeypatch.setenv("PROCBENCH_DB", str(board_db))
    at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=120)
    at.query_params["task"] = "pm-llm-benchmark"
    at.query_params["split"] = "main"
    at.run()
    at.switch_page("site_pages/board.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = at.dataframe[0].value
    assert dict(zip(shown["Model"], shown["Judged by"])) == {
        "no-verdicts": "",
        "own-verdicts": "self-judged",
    }


def test_home_leader_is_the_boards_first_row_and_says_self_judged(
    board_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from procbench.paths import PROJECT_ROOT

    monkeypatch.setenv("PROCBENCH_DB", str(board_db))
    at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert (
        table[[u.startswith("board?task=pm-llm-benchmark&") for u in table["Board"]]].iloc[0][
            "Leader"
        ]
        == "no-verdicts"
    )
