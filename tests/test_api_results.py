"""Results of the Python API as data (issue #18): JSON, polars/pandas frames with typed columns, and the resubmission rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import procbench
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions.errors import SubmissionRefused

STRONG = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl"
OPENPI = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"


def test_score_results_are_json_and_typed_frames() -> None:
    result = procbench.score("paradise-tip", STRONG, split="test", data_dir=SAMPLE_DATA_ROOT)
    data = json.loads(json.dumps(result.to_dict()))
    assert (
        data == json.loads(result.to_json())
        and data["metrics"] == result.metrics
        and data["partial"] is False
    )
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
    result = procbench.score(
        "paradise-tip", part, split="test", data_dir=SAMPLE_DATA_ROOT, partial=True
    )
    assert (
        result.partial
        and result.coverage is not None
        and (result.coverage.scored, result.coverage.total) == (3, len(records))
    )
    assert result.n_items == 3 and result.to_dict()["coverage"]["fraction"] == pytest.approx(
        3 / len(records)
    )
    with pytest.raises(Exception, match="no prediction for"):
        procbench.score("paradise-tip", part, split="test", data_dir=SAMPLE_DATA_ROOT)


def test_submit_results_serialise_and_a_renamed_resubmission_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    first = procbench.submit(
        "paradise-tip",
        STRONG,
        split="test",
        model="strong",
        team="api",
        db=db,
        data_dir=SAMPLE_DATA_ROOT,
    )
    assert (
        json.loads(first.to_json())["submission_id"] == first.submission_id
        and first.to_polars().height == first.evaluation.n_items
    )
    again = procbench.submit(
        "paradise-tip",
        STRONG,
        split="test",
        model="strong",
        team="api",
        db=db,
        data_dir=SAMPLE_DATA_ROOT,
    )
    assert not again.created and again.submission_id == first.submission_id
    with pytest.raises(SubmissionRefused, match="already stored .* as model 'strong'"):
        procbench.submit(
            "paradise-tip",
            STRONG,
            split="test",
            model="renamed",
            team="api",
            db=db,
            data_dir=SAMPLE_DATA_ROOT,
        )


# -- records and data frames score as the file they stand for (issue #33) ------------------------------

TIP_IDS = list(range(8))  # the bundled PARADISE tip test sample: items 0-7
TIP_GOLD = [
    2,
    0,
    3,
    1,
    1,
    3,
    0,
    2,
]  # their labels, read by hand from samples/data/paradise/src/data/tip_test.csv
OPENPI_IDS = [json.loads(line)["id"] for line in OPENPI.read_text().splitlines() if line.strip()]
WORDS = ["water", "is", "wet", "dry", "the pan", "hot", "cold", "moved", "There will be no change."]


def _written(folder: Path, records: list[dict[str, Any]], name: str = "preds.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _same(a: procbench.ScoreResult, b: procbench.ScoreResult) -> None:
    assert (
        a.metrics == b.metrics
        and a.slices == b.slices
        and a.fingerprint == b.fingerprint
        and a.n_items == b.n_items
    )
    assert [(i.item_id, i.values) for i in a.items] == [(i.item_id, i.values) for i in b.items]


@given(
    labels=st.lists(st.integers(0, 3), min_size=8, max_size=8),
    order=st.permutations(TIP_IDS),
    keep=st.integers(1, 8),
)
def test_records_and_frames_give_the_files_numbers(
    tmp_path_factory: pytest.TempPathFactory, labels: list[int], order: list[int], keep: int
) -> None:
    import pandas as pd

    records = [{"id": i, "label": labels[i]} for i in order]
    path = _written(tmp_path_factory.mktemp("records"), records)
    kwargs: dict[str, Any] = {"split": "test", "data_dir": SAMPLE_DATA_ROOT}
    from_file = procbench.score("paradise-tip", path, **kwargs)
    assert (
        from_file.metrics["accuracy"] == sum(labels[i] == TIP_GOLD[i] for i in TIP_IDS) / 8
    )  # hand-checkable anchor
    for given_as in (
        records,
        iter(records),
        pl.DataFrame(records),
        pd.DataFrame(records),
        pl.DataFrame(records).lazy(),
    ):
        _same(procbench.score("paradise-tip", given_as, **kwargs), from_file)
    part = _written(tmp_path_factory.mktemp("part"), records[:keep])
    _same(
        procbench.score("paradise-tip", records[:keep], partial=True, **kwargs),
        procbench.score("paradise-tip", part, partial=True, **kwargs),
    )


@given(
    answers=st.lists(
        st.lists(st.sampled_from(WORDS), max_size=3),
        min_size=len(OPENPI_IDS),
        max_size=len(OPENPI_IDS),
    )
)
def test_text_records_and_frames_give_the_files_numbers(
    tmp_path_factory: pytest.TempPathFactory, answers: list[list[str]]
) -> None:
    records = [{"id": item, "answers": texts} for item, texts in zip(OPENPI_IDS, answers)]
    path = _written(tmp_path_factory.mktemp("openpi"), records)
    from_file = procbench.score("openpi", path, split="test", data_dir=SAMPLE_DATA_ROOT)
    _same(procbench.score("openpi", records, split="test", data_dir=SAMPLE_DATA_ROOT), from_file)
    _same(
        procbench.score("openpi", pl.DataFrame(records), split="test", data_dir=SAMPLE_DATA_ROOT),
        from_file,
    )


def test_tab_separated_tasks_take_rows_in_column_order() -> None:
    import csv

    tsv = SAMPLE_SUBMISSIONS_DIR / "propara" / "noisy-tracker.tsv"
    rows = list(csv.reader(tsv.read_text(encoding="utf-8").splitlines(), delimiter="\t"))
    frame = pl.DataFrame(rows, schema=[f"c{i}" for i in range(len(rows[0]))], orient="row")
    from_file = procbench.score("propara", tsv, split="test", data_dir=SAMPLE_DATA_ROOT)
    _same(procbench.score("propara", frame, split="test", data_dir=SAMPLE_DATA_ROOT), from_file)
    _same(
        procbench.score(
            "propara", [dict(enumerate(r)) for r in rows], split="test", data_dir=SAMPLE_DATA_ROOT
        ),
        from_file,
    )


def test_bad_records_are_refused_by_record_number() -> None:
    records: list[dict[str, Any]] = [{"id": i, "label": 0} for i in TIP_IDS]
    records[2] = {"id": 2, "label": "zero"}
    with pytest.raises(procbench.InvalidPredictions) as caught:
        procbench.score("paradise-tip", records, split="test", data_dir=SAMPLE_DATA_ROOT)
    assert caught.value.source == "records" and "records:3: " in str(caught.value)
    with pytest.raises(TypeError, match="record 1: not JSON"):
        procbench.score(
            "paradise-tip", [{"id": 0, "label": object()}], split="test", data_dir=SAMPLE_DATA_ROOT
        )
    with pytest.raises(TypeError, match="not a single dict"):
        procbench.score(
            "paradise-tip", {"id": 0, "label": 1}, split="test", data_dir=SAMPLE_DATA_ROOT
        )


# -- coverage, provenance and intervals -------------------------------------------------------------------


def test_results_carry_coverage_and_provenance() -> None:
    result = procbench.score("paradise-tip", STRONG, split="test", data_dir=SAMPLE_DATA_ROOT)
    assert (result.coverage.scored, result.coverage.total, result.answered) == (8, 8, 8)  # type: ignore[union-attr]
    assert (
        result.data_kind == "sample" and result.data_digest == "" and result.provenance is not None
    )
    data = result.to_dict()
    assert (data["data_kind"], data["data_digest"], data["fingerprint"]) == (
        "sample",
        "",
        result.fingerprint,
    )
    assert data["scorer_digest"] == procbench.load_task("paradise-tip")[1].spec_digest


def test_results_on_the_real_split_carry_its_data_digest() -> None:
    import hashlib

    from procbench.paths import default_data_root

    root = default_data_root()
    if root is None or not (root / "paradise").is_dir():
        pytest.skip("real benchmark data absent: set PROCBENCH_DATA")
    records = [
        {"id": i, "label": 0}
        for i in range(len(procbench.load_task("paradise-tip")[1].gold(root, "test")[0].items))
    ]
    result = procbench.score("paradise-tip", records, split="test", data_dir=root)
    lock = json.loads((Path(procbench.spec_path("paradise-tip")).with_suffix(".lock")).read_text())
    lines = sorted(
        f"{f['path']} {f['sha256']}"
        for f in lock["files"]
        if not f.get("splits") or "test" in f["splits"]
    )
    assert (
        result.data_kind == "real"
        and result.data_digest == hashlib.sha256("\n".join(lines).encode()).hexdigest()
    )
    assert "accuracy" in result.intervals  # the real split: enough items for the board's interval
    interval = result.intervals["accuracy"]
    assert (
        interval.low < result.metrics["accuracy"] < interval.high
        and interval.n_items == result.n_items
    )


def test_intervals_are_the_boards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from procbench.leaderboard import analysis
    from tests.site_app import info_of

    monkeypatch.setenv(
        analysis.MIN_INTERVAL_ENV, "5"
    )  # the samples' 22 OpenPI test items: above this floor
    result = procbench.score("openpi", OPENPI, split="test", data_dir=SAMPLE_DATA_ROOT)
    db = tmp_path / "board.duckdb"
    stored = procbench.submit(
        "openpi",
        OPENPI,
        split="test",
        model="guesser",
        team="api",
        db=db,
        data_dir=SAMPLE_DATA_ROOT,
    )
    info = info_of(db, "openpi", "test")
    assert result.intervals, result.interval_reasons
    for metric, mine in result.intervals.items():
        site = analysis.interval(
            analysis.bootstrap_of(db, info, stored.submission_id, metric=metric), metric
        )
        assert site is not None and (site.low, site.high) == pytest.approx(
            (mine.low, mine.high), abs=1e-12
        ), metric
    assert set(result.intervals) | set(result.interval_reasons) == set(result.metrics)
    assert (
        json.loads(json.dumps(result.to_dict(intervals=True)))["intervals"].keys()
        == result.intervals.keys()
    )
    monkeypatch.delenv(analysis.MIN_INTERVAL_ENV)
    few = procbench.score("paradise-tip", STRONG, split="test", data_dir=SAMPLE_DATA_ROOT)
    assert few.intervals == {} and few.interval_reasons["accuracy"].startswith("only 8 items")
