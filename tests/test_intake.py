"""Intake: bad prediction files are rejected with line numbers and leave the database unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime._types import InvalidPredictions
from procbench.submissions import SubmissionRequest, submit

SAMPLE = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"


def _counts(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("submissions", "item_scores", "aggregates", "status_history", "tasks")
        }
    finally:
        con.close()


def _submit(path: Path, db: Path, team: str = "t"):
    spec, runner = load_task("openpi")
    return submit(
        SubmissionRequest(split="test", predictions=path, model="m", team=team),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )


def test_submission_is_stored_once(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    first = _submit(SAMPLE, db)
    second = _submit(SAMPLE, db)
    assert first.created and not second.created
    assert first.submission_id == second.submission_id
    counts = _counts(db)
    assert counts["submissions"] == 1
    assert counts["item_scores"] == first.evaluation.n_items * 9


BAD_LINES = {
    "not json": "{oops",
    "not an object": "[1, 2]",
    "missing answers": json.dumps({"id": "www.wikihow.com/Clean-a-Small-Cut||1"}),
    "answers not a list": json.dumps(
        {"id": "www.wikihow.com/Clean-a-Small-Cut||1", "answers": "text"}
    ),
    "unknown id": json.dumps({"id": "nope", "answers": []}),
    "id not a string": json.dumps({"id": 7, "answers": []}),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_each_bad_line_is_reported_with_its_number_and_nothing_stored(
    kind: str, tmp_path: Path
) -> None:
    db = tmp_path / "board.duckdb"
    _submit(SAMPLE, db, team="other")
    before = _counts(db)
    lines = SAMPLE.read_text().splitlines()
    lines.insert(3, BAD_LINES[kind])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidPredictions) as caught:
        _submit(bad, db)
    assert [p.line for p in caught.value.problems] == [4]
    assert _counts(db) == before


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    lines = SAMPLE.read_text().splitlines()
    bad = tmp_path / "dup.jsonl"
    bad.write_text("\n".join([*lines, lines[0]]) + "\n")
    with pytest.raises(InvalidPredictions) as caught:
        _submit(bad, tmp_path / "db.duckdb")
    (problem,) = caught.value.problems
    assert problem.line == len(lines) + 1 and "first on line 1" in problem.message
    assert (
        not (tmp_path / "db.duckdb").exists() or _counts(tmp_path / "db.duckdb")["submissions"] == 0
    )


def test_every_problem_is_listed_not_only_the_first(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{x\n" + json.dumps({"id": "nope", "answers": []}) + "\n\n[1]\n")
    with pytest.raises(InvalidPredictions) as caught:
        _submit(bad, tmp_path / "db.duckdb")
    assert [p.line for p in caught.value.problems] == [1, 2, 4]


def test_empty_file_is_rejected(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(InvalidPredictions, match="no records"):
        _submit(empty, tmp_path / "db.duckdb")


junk_line = st.one_of(
    st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t and t.strip() != ""),
    st.builds(lambda v: json.dumps({"id": v}), st.one_of(st.integers(), st.text(max_size=5))),
    st.builds(
        lambda a: json.dumps({"id": "nope", "answers": a}), st.lists(st.integers(), max_size=2)
    ),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(junk=junk_line, position=st.integers(min_value=0, max_value=21))
def test_generated_bad_lines_are_reported_at_their_position(
    junk: str, position: int, tmp_path: Path
) -> None:
    lines = SAMPLE.read_text().splitlines()
    lines.insert(position, junk)
    bad = tmp_path / "gen.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    spec, runner = load_task("openpi")
    gold, _ = runner.gold(SAMPLE_DATA_ROOT, "test")
    try:
        runner.validate(bad, gold)
    except InvalidPredictions as exc:
        assert position + 1 in [p.line for p in exc.problems]
    else:  # only acceptable if the junk happened to be a valid, new record, which it never is here
        pytest.fail(f"accepted a file with junk line {junk!r}")


def test_intake_reads_the_boards_fingerprint_with_the_row(tmp_path: Path) -> None:
    """Issue #31 (submit beyond score): the outcome carries the fingerprint the task's board showed where intake
    stored or found the row, so the console warns about a row off its board without opening the store again."""
    from procbench.submissions import boards, store
    from tests.test_submissions_support import STRONG, TEMPLATE, openpi_spec_variant, submit_openpi

    db = tmp_path / "board.duckdb"
    first = submit_openpi(db, STRONG, model="strong")
    assert first.created and first.board_fingerprint == first.evaluation.fingerprint
    changed = openpi_spec_variant(
        tmp_path / "specs", old="params { dedup = false", new="params { dedup = true", name="openpi"
    )
    for created in (
        True,
        False,
    ):  # a new row under the changed spec, then the same file again (a read)
        other = submit_openpi(db, TEMPLATE, model="template", spec_file=changed)
        assert other.created is created
        assert other.evaluation.fingerprint != first.evaluation.fingerprint
        with store.reader(db) as con:
            shown = boards.current(con, "openpi", "test")
        assert (
            other.board_fingerprint == shown == first.evaluation.fingerprint
        )  # registering never moves a board
