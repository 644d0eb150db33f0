"""Issue #29, messages name the user's file: a refused PM-LLM or PARADISE file is named by the name the user
gave it (the CLI's file, the site's upload name, ``.gz`` included) in the message and in ``failures.reason``,
never by the private staging copy intake actually read."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.api import load_task
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.submissions import SubmissionRequest, submit
from procbench.submissions.errors import RejectedPredictions
from tests.test_submissions_support import NO_CHANGE, failures, submit_openpi

cli = CliRunner()
TASKS = {"pm-llm-benchmark": "main", "paradise-tip": "test"}
BAD = '{"id": "no-such-item", "answer": 5}\nnot json\n'


def _no_staging_path(text: str, tmp_path: Path) -> None:
    assert "procbench-intake-" not in text and "/upload/" not in text and ".raw/tmp" not in text, (
        text
    )


@pytest.mark.parametrize("task", list(TASKS))
def test_refusals_name_the_file_as_given(task: str, tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    submit_openpi(
        db, NO_CHANGE, team="earlier"
    )  # a store exists, so intake stages under <db>.raw/tmp
    spec, runner = load_task(task)
    predictions = tmp_path / "my answers.jsonl"
    predictions.write_text(BAD, encoding="utf-8")
    for _ in range(2):  # the same file twice: the second refusal is named as the first
        with pytest.raises(RejectedPredictions) as rejected:
            submit(
                SubmissionRequest(split=TASKS[task], predictions=predictions, model="m", team="t"),
                spec,
                runner,
                data_root=SAMPLE_DATA_ROOT,
                db_path=db,
            )
        text = rejected.value.render()
        assert (
            text.splitlines()[0].endswith("in my answers.jsonl")
            and "\n  my answers.jsonl:2:" in text
        )
        _no_staging_path(text, tmp_path)
    # an upload through the site is named by its upload name
    with pytest.raises(RejectedPredictions) as rejected:
        submit(
            SubmissionRequest(
                split=TASKS[task],
                predictions=predictions,
                model="m",
                team="t",
                filename="from-the-browser.jsonl",
            ),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
    assert rejected.value.render().splitlines()[0].endswith("in from-the-browser.jsonl")
    for row in failures(db):
        _no_staging_path(str(row["reason"]), tmp_path)


def test_the_cli_names_a_relative_path_and_a_gzip_upload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("uploads").mkdir()
    Path("uploads/answers.jsonl.gz").write_bytes(gzip.compress(BAD.encode()))
    submit_openpi(Path("board.duckdb"), NO_CHANGE, team="earlier")
    data = str(SAMPLE_DATA_ROOT)
    for _ in range(2):
        result = cli.invoke(
            app,
            [
                "submit",
                "pm-llm-benchmark",
                "--split",
                "main",
                "--predictions",
                "uploads/answers.jsonl.gz",
                "--model",
                "m",
                "--team",
                "t",
                "--db",
                "board.duckdb",
                "--data-dir",
                data,
            ],
        )
        assert result.exit_code == 8, result.output
        assert (
            "problems in answers.jsonl.gz" in result.output
            and "  answers.jsonl.gz:2:" in result.output
        )
        _no_staging_path(result.output, tmp_path)
    for row in failures(Path("board.duckdb")):
        _no_staging_path(json.dumps(row, default=str), tmp_path)
