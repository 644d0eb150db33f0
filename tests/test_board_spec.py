"""A submit reads its spec's board fields from the cached plan (dsl/board_spec.py, issue #31): the same fields, the same
``tasks`` row as intake given the checked spec, and the whole spec only where intake needs more."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl.board_spec import PLAN_KEY, BoardSpec
from procbench.dsl.compiler import plan_of
from procbench.dsl.tasks import all_spec_paths, load_board, load_task
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, submit

SHIPPED = [path.stem for path in all_spec_paths()]
TASK_COLUMNS = "title, benchmark, version, primary_metric, hidden, spec_json"


@pytest.mark.parametrize("task", SHIPPED)
def test_the_plan_carries_the_fields_intake_reads_of_the_spec(task: str) -> None:
    spec, runner = load_task(task)
    board = BoardSpec.from_plan(plan_of(spec, runner.spec_digest), lambda: spec)
    assert board is not None
    assert (board.name, board.title, board.benchmark, board.version, board.primary) == (
        spec.name,
        spec.title,
        spec.benchmark,
        spec.version,
        spec.primary,
    )
    assert (board.splits, board.hidden) == (tuple(spec.data.splits), tuple(spec.data.hidden))
    assert board.judged == any(t.name == "judge" for t in spec.templates)
    assert json.loads(board.spec_json) == json.loads(json.dumps(spec.to_dict(), default=str))


def test_only_the_judged_task_says_so() -> None:
    judged = {task for task in SHIPPED if load_board(task)[0].judged}
    assert judged == {"pm-llm-benchmark"}


def _cli_submit(task: str, split: str, predictions: Path, db: Path, cache: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PROCBENCH_CACHE_DIR": str(cache)}
    args = ["submit", task, "--split", split, "--predictions", str(predictions)]
    args += ["--model", predictions.stem, "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT)]
    done = subprocess.run(
        [sys.executable, "-m", "procbench.console", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _tasks_row(db: Path) -> tuple[Any, ...]:
    """The task's row, and the submission's judge fields (a judged task's digest needs the whole spec's templates)."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(f"SELECT {TASK_COLUMNS} FROM tasks").fetchall()
        judged = con.execute(
            "SELECT judge_prompt_digest, metadata_json FROM submissions"
        ).fetchall()
    assert len(rows) == 1 and len(judged) == 1
    return tuple(rows[0]) + tuple(judged[0])


@pytest.mark.parametrize(
    ("task", "split", "sample"),
    [
        ("paradise-tip", "test", "sample-strong.jsonl"),
        ("openpi", "test", "strong-model.jsonl"),
        ("pm-llm-benchmark", "main", "acme-tiny.jsonl"),
    ],
)
def test_the_console_stores_the_task_row_intake_stores_from_the_checked_spec(
    tmp_path: Path, task: str, split: str, sample: str
) -> None:
    predictions = SAMPLE_SUBMISSIONS_DIR / task / sample
    cli_db, cache = tmp_path / "cli" / "board.duckdb", tmp_path / "cache"
    _cli_submit(
        task, split, predictions, tmp_path / "first" / "board.duckdb", cache
    )  # fills the spec cache
    _cli_submit(task, split, predictions, cli_db, cache)  # the board fields from the cached plan
    spec, runner = load_task(task)
    api_db = tmp_path / "api" / "board.duckdb"
    submit(
        SubmissionRequest(split=split, predictions=predictions, model=predictions.stem),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=api_db,
    )
    cli, api = _tasks_row(cli_db), _tasks_row(api_db)
    assert cli == api
    assert cli[:4] == (spec.title, spec.benchmark or spec.name, spec.version, spec.primary)


def test_an_older_plan_without_the_fields_falls_back_to_the_checked_spec() -> None:
    spec, runner = load_task("paradise-tip")
    plan = plan_of(spec, runner.spec_digest)
    del plan[PLAN_KEY]
    assert BoardSpec.from_plan(plan, lambda: spec) is None


def test_the_whole_spec_is_read_once_and_must_be_the_same_task() -> None:
    spec, runner = load_task("paradise-tip")
    other, _ = load_task("openpi")
    plan = plan_of(spec, runner.spec_digest)
    reads: list[int] = []

    def whole() -> Any:
        reads.append(1)
        return spec

    board = BoardSpec.from_plan(plan, whole)
    assert board is not None and not reads  # nothing read to make it
    assert board.whole() is spec and board.whole() is spec and len(reads) == 1
    changed = BoardSpec.from_plan(plan, lambda: other)
    assert changed is not None
    with pytest.raises(ValueError, match="changed while it was in use"):
        changed.whole()


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.tuples(st.text(max_size=3))
)


@settings(max_examples=200, deadline=None)
@given(
    fields=st.one_of(
        _SCALARS,
        st.dictionaries(
            st.sampled_from(["title", "benchmark", "version", "spec_json", "judged", "x"]),
            _SCALARS,
        ),
    ),
    name=_SCALARS,
    splits=_SCALARS,
    hidden=_SCALARS,
)
def test_a_damaged_plan_gives_no_board_fields_rather_than_wrong_ones(
    fields: Any, name: Any, splits: Any, hidden: Any
) -> None:
    plan = {
        "name": name,
        "splits": splits,
        "hidden": hidden,
        "primary": "accuracy",
        PLAN_KEY: fields,
    }
    board = BoardSpec.from_plan(plan, lambda: pytest.fail("nothing whole is read"))
    sound = (
        isinstance(fields, dict)
        and all(
            isinstance(fields.get(k), str) for k in ("title", "benchmark", "version", "spec_json")
        )
        and isinstance(fields.get("judged"), bool)
        and isinstance(name, str)
        and all(
            isinstance(g, tuple) and all(isinstance(s, str) for s in g) for g in (splits, hidden)
        )
    )
    assert (board is not None) == sound
    if board is not None:
        assert (board.name, board.splits, board.hidden, board.judged) == (
            name,
            splits,
            hidden,
            fields["judged"],
        )
        assert board.spec_json == fields["spec_json"]
