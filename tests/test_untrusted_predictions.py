"""Untrusted prediction files (issue 17): bounded problems and messages, sentence ranges, per-answer
limits, deep JSON, the intake's scoring time limit, and self-supplied PM-LLM verdicts.

Every case is a generated file; the assertions are on counts, lines and messages, never on timings.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import (
    MAX_PROBLEM_CHARS,
    GoldSet,
    InvalidPredictions,
    MoreProblems,
    Problem,
    ProblemList,
)
from procbench.runners.paged.predictions import read_graph_text
from procbench.runners.paradise.predictions import check_predictions
from procbench.runners.pmllm.answers import read_answers, read_submission
from procbench.runners.pmllm.questions import read_questions
from procbench.runners.pmllm.scoring import aggregate_sums, score_answers
from procbench.runners.runtime.predictions import (
    MAX_JSON_DEPTH,
    MAX_PROBLEMS,
    FieldType,
    SchemaReader,
)
from procbench.runners.propara.action_file import ParticipantTrack, ProcessTracks
from procbench.runners.propara.leaderboard import read_predictions as read_action_predictions
from procbench.runners.propara.naacl18 import read_naacl18_grid
from procbench.runners.propara.naacl18_gold import Label, Paragraph
from procbench.runners.runtime.runner import TaskRunner
from procbench.submissions.errors import RejectedPredictions, ScoringFailed
from procbench.submissions.intake import MAX_REASON_CHARS
from procbench.submissions.staging import IntakeLimits
from tests.test_submissions_support import NO_CHANGE, STRONG, counts, failures, submit_openpi

N_BAD = 20_000  # bad lines in a generated file: far more than MAX_PROBLEMS
# A rendered error: a head line and at most MAX_PROBLEMS + 1 entries of bounded length.
MESSAGE_BOUND = (MAX_PROBLEMS + 2) * (MAX_PROBLEM_CHARS + 200)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _bounded(caught: InvalidPredictions, at_least: int) -> None:
    assert len(caught.problems) == MAX_PROBLEMS + 1
    assert isinstance(caught.problems[-1], MoreProblems)
    assert caught.count >= at_least
    assert caught.problems[-1].message == f"... and {caught.count - MAX_PROBLEMS} more problems"
    assert all(len(p.message) <= MAX_PROBLEM_CHARS for p in caught.problems)
    assert len(caught.render()) < MESSAGE_BOUND


# -- 1. one problem cap for every reader -------------------------------------------------------------


def test_problem_list_keeps_the_first_and_counts_the_rest() -> None:
    problems = ProblemList(Problem(i, "x" * 5000) for i in range(1, 1001))
    error = InvalidPredictions(problems, "f.jsonl")
    assert [p.line for p in error.problems[:MAX_PROBLEMS]] == list(range(1, MAX_PROBLEMS + 1))
    assert error.count == 1000 and error.render().startswith("1000 problems in f.jsonl")
    again = InvalidPredictions(error.problems, "f.jsonl")  # re-raised by intake: the count survives
    assert again.count == 1000 and len(again.problems) == MAX_PROBLEMS + 1


def test_pmllm_reader_keeps_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "answers.jsonl", ["{}"] * N_BAD)
    with pytest.raises(InvalidPredictions) as caught:
        read_submission(path, ["cat01_01_a"])
    _bounded(caught.value, N_BAD * 2)  # each line lacks both an id and an answer


def test_paradise_reader_keeps_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "labels.jsonl", ["{}"] * N_BAD)
    with pytest.raises(InvalidPredictions) as caught:
        check_predictions(path, {"0", "1"})
    _bounded(caught.value, N_BAD)


def test_paradise_csv_reader_keeps_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "labels.csv", ["id,label", *(["1,2,3"] * N_BAD)])
    with pytest.raises(InvalidPredictions) as caught:
        check_predictions(path, {"0", "1"})
    _bounded(caught.value, N_BAD)


def test_paged_reader_keeps_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "graphs.jsonl", ["[]"] * N_BAD)
    with pytest.raises(InvalidPredictions) as caught:
        read_graph_text(path, GoldSet(items={"1": None}))
    _bounded(caught.value, N_BAD)


def test_propara_readers_keep_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "actions.tsv", ["no tab here"] * N_BAD)
    with pytest.raises(InvalidPredictions) as caught:
        read_action_predictions(path, _action_gold())
    _bounded(caught.value, N_BAD)
    grid = _write(tmp_path / "grid.tsv", ["x\ty"] * N_BAD)
    with pytest.raises(InvalidPredictions) as caught:
        read_naacl18_grid(grid, _naacl18_gold())
    _bounded(caught.value, N_BAD)


def test_long_quoted_values_are_cut_in_messages(tmp_path: Path) -> None:
    path = _write(tmp_path / "answers.jsonl", [json.dumps({"id": "q" * 200_000, "answer": "a"})])
    with pytest.raises(InvalidPredictions) as caught:
        read_submission(path, ["cat01_01_a"])
    (problem,) = caught.value.problems
    assert problem.line == 1 and problem.message.startswith("unknown question id 'qqq")
    assert len(problem.message) <= MAX_PROBLEM_CHARS and "more characters]" in problem.message


def test_intake_stores_a_bounded_failure_reason(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    submit_openpi(db, NO_CHANGE, team="earlier")
    before = counts(db)
    long_id = "z" * 20_000
    path = _write(
        tmp_path / "huge.jsonl",
        [json.dumps({"id": f"{long_id}{i}", "answers": []}) for i in range(2_000)],
    )
    with pytest.raises(RejectedPredictions) as caught:
        submit_openpi(db, path)
    assert caught.value.count == 2_000 and len(caught.value.problems) == MAX_PROBLEMS + 1
    assert counts(db) == before
    (row,) = [f for f in failures(db) if f["receipt_id"] == caught.value.receipt]
    assert row["stage"] == "validate" and len(str(row["reason"])) <= MAX_REASON_CHARS
    assert str(row["reason"]).startswith("2000 problems in huge.jsonl")


# -- 2. ProPara: sentence numbers outside the gold paragraph -----------------------------------------


def _action_gold() -> GoldSet:
    tracks = ProcessTracks(
        7, 2, (ParticipantTrack("water", ("unk", "unk", "unk"), ("NONE", "NONE")),)
    )
    return GoldSet(items={"7": tracks})


def _naacl18_gold() -> GoldSet:
    label = Label(1, "water", "move", "soil", "root")
    return GoldSet(items={"7": Paragraph(7, frozenset({"water"}), ((label,),), num_sentences=2)})


@pytest.mark.parametrize("sentence", [3, 10_000_000, 300_000_000])
def test_action_file_rows_beyond_the_gold_sentences_are_refused_at_their_line(
    tmp_path: Path, sentence: int
) -> None:
    rows = [
        "7\t1\twater\tNONE\t?\t?",
        "7\t2\twater\tNONE\t?\t?",
        f"7\t{sentence}\twater\tNONE\t?\t?",
    ]
    with pytest.raises(InvalidPredictions) as caught:
        read_action_predictions(_write(tmp_path / "p.tsv", rows), _action_gold())
    assert [(p.line, p.message) for p in caught.value.problems] == [
        (3, f"sentence number {sentence} is outside process 7's sentences 1-2")
    ]


def test_action_file_within_range_and_unknown_processes_are_accepted(tmp_path: Path) -> None:
    rows = ["7\t1\twater\tNONE\t?\t?", "7\t2\twater\tNONE\t?\t?", "8\t300000000\tfire\tNONE\t?\t?"]
    with pytest.warns(UserWarning, match="not in the gold are ignored"):
        predicted = read_action_predictions(_write(tmp_path / "p.tsv", rows), _action_gold())
    assert list(predicted) == ["7"] and predicted["7"].num_sentences == 2


@pytest.mark.parametrize("sid", [0, 3, 300_000_000])
def test_naacl18_grid_rows_outside_the_gold_sentences_are_refused_at_their_line(
    tmp_path: Path, sid: int
) -> None:
    rows = ["7\t1\twater\tsoil\troot", "7\t2\twater\troot\troot", f"7\t{sid}\twater\troot\tleaf"]
    with pytest.raises(InvalidPredictions) as caught:
        read_naacl18_grid(_write(tmp_path / "g.tsv", rows), _naacl18_gold())
    assert [(p.line, p.message) for p in caught.value.problems] == [
        (3, f"sentence id {sid} is outside paragraph 7's sentences 1-2")
    ]


# -- 3. per-answer limits and deep JSON --------------------------------------------------------------

SMALL = SchemaReader(
    "jsonl",
    "id",
    (("id", FieldType("str")), ("x", FieldType("any"))),
    max_text_chars=50,
    max_list_items=20,
)


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


@given(
    depth=st.integers(min_value=1, max_value=3 * MAX_JSON_DEPTH),
    text=st.integers(min_value=0, max_value=120),
    items=st.integers(min_value=0, max_value=60),
    position=st.integers(min_value=0, max_value=3),
)
def test_schema_reader_limits_accept_or_refuse_at_the_line(
    tmp_path_factory: pytest.TempPathFactory, depth: int, text: int, items: int, position: int
) -> None:
    ids = ["a", "b", "c", "d"]
    lines = [json.dumps({"id": i, "x": "ok"}) for i in ids]
    value = {"deep": _nested(depth), "text": "t" * text, "list": list(range(items))}
    lines[position] = json.dumps({"id": ids[position], "x": value})
    path = _write(tmp_path_factory.mktemp("limits") / "p.jsonl", lines)
    gold = GoldSet(items={i: None for i in ids})
    # The record itself is a level, and so is the "x" object holding the nested list.
    fits = depth + 2 <= MAX_JSON_DEPTH and text <= 50 and items <= 20
    try:
        records = SMALL(path, gold)
    except InvalidPredictions as exc:
        assert not fits
        assert [p.line for p in exc.problems] == [position + 1]
    else:
        assert fits and records[ids[position]]["x"]["text"] == "t" * text


def test_a_hundred_thousand_deep_line_is_refused_at_its_line(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "a", "x": 1}),
        '{"id": "b", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ]
    with pytest.raises(InvalidPredictions) as caught:
        SMALL(_write(tmp_path / "p.jsonl", lines), GoldSet(items={"a": None, "b": None}))
    assert [(p.line, p.message) for p in caught.value.problems] == [
        (2, f"not accepted: the JSON is nested more than {MAX_JSON_DEPTH} levels deep")
    ]


def test_a_deep_delimited_cell_is_refused_at_its_line(tmp_path: Path) -> None:
    reader = SchemaReader(
        "tsv", "id", (("id", FieldType("str")), ("x", FieldType("list", FieldType("any"))))
    )
    path = _write(tmp_path / "p.tsv", ["id\tx", "a\t[]", "b\t" + "[" * 100_000 + "]" * 100_000])
    with pytest.raises(InvalidPredictions) as caught:
        reader(path, GoldSet(items={"a": None, "b": None}))
    assert [p.line for p in caught.value.problems] == [3]


ANSWERS_JSON = {
    "deep": "[" * 100_000 + "]" * 100_000,  # json.dumps cannot even write this one
    "long-text": json.dumps(["s" * 200_000]),
    "long-list": json.dumps(["a"] * 20_000),
}


@pytest.mark.parametrize("case", sorted(ANSWERS_JSON))
def test_intake_refuses_oversized_or_deep_answers_at_their_line(tmp_path: Path, case: str) -> None:
    db = tmp_path / "board.duckdb"
    submit_openpi(db, NO_CHANGE, team="earlier")
    before = counts(db)
    lines = STRONG.read_text(encoding="utf-8").splitlines()
    item_id = json.loads(lines[1])["id"]
    lines[1] = '{"id": ' + json.dumps(item_id) + ', "answers": ' + ANSWERS_JSON[case] + "}"
    with pytest.raises(RejectedPredictions) as caught:
        submit_openpi(db, _write(tmp_path / "p.jsonl", lines))
    assert [p.line for p in caught.value.problems] == [2]
    assert counts(db) == before


# -- 4. the intake's scoring time limit --------------------------------------------------------------


@pytest.mark.parametrize("stage", ["validate", "evaluate_records"])
def test_scoring_past_the_time_limit_is_refused_and_nothing_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    db = tmp_path / "board.duckdb"
    submit_openpi(db, NO_CHANGE, team="earlier")
    before = counts(db)
    release = threading.Event()
    original = getattr(TaskRunner, stage)

    def slow(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        release.wait(60)  # held until the test has its answer; then it finishes and is dropped
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TaskRunner, stage, slow)
    try:
        with pytest.raises(
            ScoringFailed
        ) as caught:  # exit 6, as docs/submissions.md's table gives for stage validate/score
            submit_openpi(db, STRONG, limits=IntakeLimits(max_score_seconds=0.25))
    finally:
        release.set()
    assert "longer than 0.25 seconds" in str(caught.value) and "nothing was stored" in str(
        caught.value
    )
    assert caught.value.stage == ("validate" if stage == "validate" else "score")
    assert counts(db) == before
    (row,) = [f for f in failures(db) if f["receipt_id"] == caught.value.receipt]
    assert row["stage"] == caught.value.stage and "scoring time limit" in str(row["reason"])


def test_the_time_limit_is_on_by_default_and_set_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert IntakeLimits().max_score_seconds > 0
    monkeypatch.setenv("PROCBENCH_MAX_SCORE_SECONDS", "12.5")
    assert IntakeLimits.from_env().max_score_seconds == 12.5


def test_within_the_time_limit_scores_and_stores(tmp_path: Path) -> None:
    outcome = submit_openpi(
        tmp_path / "board.duckdb", STRONG, limits=IntakeLimits(max_score_seconds=600)
    )
    assert outcome.created and outcome.evaluation.n_items > 0


# -- 5. PM-LLM: self-supplied verdicts on empty answers ----------------------------------------------


def test_empty_answers_score_zero_whatever_the_verdict(tmp_path: Path) -> None:
    gold = read_questions(SAMPLE_DATA_ROOT, "main")
    path = _write(
        tmp_path / "empty.jsonl",
        [json.dumps({"id": qid, "answer": " \n", "verdict": "10.0"}) for qid in gold.items],
    )
    items = score_answers(gold, read_answers(path, gold))
    sums = aggregate_sums(items)
    assert sums["score"] == 0.0 and sums["total"] == 0.0 and sums["verdicts"] == 0.0
    assert all(item.values == {"grade": 0.0, "score": 0.0, "judged": 0.0} for item in items)


def test_a_non_empty_answer_still_scores_its_verdict(tmp_path: Path) -> None:
    gold = read_questions(SAMPLE_DATA_ROOT, "main")
    first, second = list(gold.items)[:2]
    path = _write(
        tmp_path / "two.jsonl",
        [
            json.dumps({"id": first, "answer": "a real answer", "verdict": "10.0"}),
            json.dumps({"id": second, "answer": "", "verdict": "10.0"}),
        ],
    )
    with pytest.warns(UserWarning):  # the other questions have no answer
        answers = read_answers(path, gold)
    scores = {item.item_id: item.values["score"] for item in score_answers(gold, answers)}
    assert scores[first] == 10.0 and scores[second] == 0.0
