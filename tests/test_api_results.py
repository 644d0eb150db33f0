"""Results of the Python API as data (issue #18): JSON, polars/pandas frames with typed columns, and the resubmission rule."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import procbench
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from submissions.errors import SubmissionRefused

STRONG = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl"
OPENPI = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"


def test_score_results_are_json_and_typed_frames() -> None:
    result = procbench.score("paradise-tip", STRONG, split="test", data_dir=SAMPLE_DATA_ROOT)
    data = json.loads(json.dumps(result.to_dict()))
    assert data == json.loads(result.to_json()) and data["metrics"] == result.metrics and data["partial"] is False
    frame = result.to_polars()
    assert frame.height == result.n_items and frame.schema["id"] == pl.Int64
    assert frame.schema["weighted:gold"] == pl.Int64 and frame.schema["accuracy"] == pl.Float64
    # the frame's labels are the file's and the gold's own labels, as ints
    submitted = {r["id"]: r["label"] for r in map(json.loads, STRONG.read_text().splitlines()) if r}
    assert dict(zip(frame["id"].to_list(), frame["weighted:prediction"].to_list())) == submitted
    assert frame["accuracy"].mean() == pytest.approx(result.metrics["accuracy"])
    pandas_frame = result.to_pandas()
    assert list(pandas_frame.columns) == frame.columns and len(pandas_frame) == frame.height


def test_text_tasks_keep_string_ids() -> None:
    result = procbench.score("openpi", OPENPI, split="test", data_dir=SAMPLE_DATA_ROOT)
    frame = result.to_polars()
    ids = [json.loads(line)["id"] for line in OPENPI.read_text().splitlines() if line.strip()]
    assert frame.schema["id"] == pl.String and sorted(frame["id"].to_list()) == sorted(ids)
    json.dumps(result.to_dict())


def test_partial_scores_only_the_named_items_and_reports_coverage(tmp_path: Path) -> None:
    records = [json.loads(line) for line in STRONG.read_text().splitlines() if line.strip()]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps(r) + "\n" for r in records[:3]))
    result = procbench.score("paradise-tip", part, split="test", data_dir=SAMPLE_DATA_ROOT, partial=True)
    assert result.partial and result.coverage is not None and (result.coverage.scored, result.coverage.total) == (3, len(records))
    assert result.n_items == 3 and result.to_dict()["coverage"]["fraction"] == pytest.approx(3 / len(records))
    with pytest.raises(Exception, match="no prediction for"):
        procbench.score("paradise-tip", part, split="test", data_dir=SAMPLE_DATA_ROOT)


def test_submit_results_serialise_and_a_renamed_resubmission_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    first = procbench.submit("paradise-tip", STRONG, split="test", model="strong", team="api", db=db, data_dir=SAMPLE_DATA_ROOT)
    assert json.loads(first.to_json())["submission_id"] == first.submission_id and first.to_polars().height == first.evaluation.n_items
    again = procbench.submit("paradise-tip", STRONG, split="test", model="strong", team="api", db=db, data_dir=SAMPLE_DATA_ROOT)
    assert not again.created and again.submission_id == first.submission_id
    with pytest.raises(SubmissionRefused, match="already stored .* as model 'strong'"):
        procbench.submit("paradise-tip", STRONG, split="test", model="renamed", team="api", db=db, data_dir=SAMPLE_DATA_ROOT)
