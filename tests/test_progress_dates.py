"""Progress over time dates each row by when its result was produced (issue #30, deliverable 4).

A paper's row by its paper's date, a model with a known release by that release, an upload by its
submission time; an imported row without a known date is left out and counted, never drawn at the
moment it was stored.  The Charts page says which date each point has (legend) and what was left out.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from procbench.leaderboard import progress
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, submit
from tests.site_app import page

STORED = datetime(2026, 11, 27, 9, 30, tzinfo=UTC)


def _row(**fields: object) -> dict[str, object]:
    return {
        "model": "m",
        "value": 0.5,
        "is_reference": False,
        "created_at": STORED,
        "metadata_json": "{}",
        **fields,
    }


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            _row(
                is_reference=True,
                metadata_json=json.dumps({"source": "EMNLP 2020, Table 4", "date": "2020-11"}),
            ),
            (datetime(2020, 11, 1), progress.PAPER),
        ),
        (
            _row(is_reference=True, metadata_json=json.dumps({"source": "a table"})),
            (None, ""),
        ),  # a paper row without a date: not at its load time
        (
            _row(metadata_json=json.dumps({"imported": True, "released": "2024-11-20"})),
            (datetime(2024, 11, 20), progress.RELEASE),
        ),
        (_row(metadata_json=json.dumps({"imported": True})), (None, "")),
        (
            _row(metadata_json=json.dumps({"released": "2024-13"})),
            (datetime(2026, 11, 27, 9, 30), progress.SUBMITTED),
        ),  # no such month
        (_row(), (datetime(2026, 11, 27, 9, 30), progress.SUBMITTED)),
        (
            _row(run_by="operator"),
            (datetime(2026, 11, 27, 9, 30), progress.BASELINE),
        ),  # the board's own baseline: dated when it ran, and not called an upload
        (_row(run_by="submitter"), (datetime(2026, 11, 27, 9, 30), progress.SUBMITTED)),
        (_row(metadata_json="not json"), (datetime(2026, 11, 27, 9, 30), progress.SUBMITTED)),
    ],
)
def test_each_row_is_dated_by_how_its_result_was_produced(
    row: dict[str, object], expected: tuple[datetime | None, str]
) -> None:
    assert progress.produced(row) == expected


def _points(at: object) -> list[dict[str, object]]:
    """The progress chart's points as the page sent them (its Arrow dataset of the most rows)."""
    chart = at.get("vega_lite_chart")[-1]  # type: ignore[attr-defined]
    tables = [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all() for d in chart.proto.datasets]
    return max(tables, key=len).to_pylist()


def test_the_charts_page_dates_uploads_releases_and_leaves_out_undated_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "board.duckdb"
    spec, runner = load_task("openpi")
    samples = sorted((SAMPLE_SUBMISSIONS_DIR / "openpi").glob("*.jsonl"))
    metadata = [
        {"released": "2019-02"},
        {"imported": True},
        {},
    ]  # a model with a known release, an undated import, an upload
    for sample, extra in zip(samples, metadata):
        submit(
            SubmissionRequest(
                split="test", predictions=sample, model=sample.stem, team="t", metadata=extra
            ),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
    at = page(db, monkeypatch, "charts", task="openpi", split="test")
    points = {p["system"]: p for p in _points(at)}
    assert set(points) == {samples[0].stem, samples[2].stem}  # the undated import is not drawn
    assert (points[samples[0].stem]["date_source"], points[samples[0].stem]["produced_at"]) == (
        progress.RELEASE,
        datetime(2019, 2, 1),
    )
    assert points[samples[2].stem]["date_source"] == progress.SUBMITTED
    assert points[samples[2].stem]["produced_at"].year >= 2025  # type: ignore[union-attr]  # stored by this test: its submission time
    caption = next(c.value for c in at.caption if "date its result was produced" in c.value)
    assert f"1 by {progress.RELEASE}" in caption and f"1 by {progress.SUBMITTED}" in caption
    assert "1 imported row without a known date is left out" in caption
    spec_json = json.loads(at.get("vega_lite_chart")[-1].proto.spec)
    assert spec_json["layer"][0]["encoding"]["shape"]["legend"]["title"] == "dated by"
    # a point at the first or last date is drawn whole: the time scale is padded
    assert spec_json["layer"][0]["encoding"]["x"]["scale"]["padding"] > 0
