"""The Streamlit board renders from a real DuckDB file built by ``submit``."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from procbench.paths import PROJECT_ROOT
from tests.site_app import build_openpi_sample_store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_openpi_sample_store(tmp_path_factory, "site")


def _app(db: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("PROCBENCH_DB", str(db))
    at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=60).run()
    return at.switch_page(
        "site_pages/board.py"
    ).run()  # the board is one page of the multipage site


def test_board_lists_submissions_ranked_by_primary_metric(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(db, monkeypatch)
    assert not at.exception
    table = at.dataframe[0].value
    models = list(table["Model"])
    assert models[0] == "strong-model" and models[-1] == "no-change-baseline"
    assert (
        "GPT-2 (Tandon et al. 2020, Table 4)" not in models
    )  # issue #16: reported on the real test split, not on this sample board
    assert "ROUGE-L F1" in table.columns
    scores = [v for v in table["ROUGE-L F1"]]
    assert scores == sorted(scores, reverse=True)


def test_slice_selector_shows_slice_values(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app(db, monkeypatch)
    slice_box = next(s for s in at.sidebar.selectbox if s.label == "Slice")
    slice_box.select("domain").run()
    value_box = next(s for s in at.sidebar.selectbox if s.label == "Slice value")
    assert set(value_box.options) == {
        "Topics seen in training (seen)",
        "Health, unseen in training (unseen)",
    }  # the spec's labels
    value_box.select("unseen").run()
    assert not at.exception
    assert any("domain = unseen" in s.value for s in at.subheader)
    table = at.dataframe[0].value
    assert list(table["Kind"]).count("submitted") == 3
    # the whole-split paper row has no per-slice numbers; only rows reported for this slice appear
    assert "GPT-2 (Tandon et al. 2020, Table 4)" not in list(table["Model"])
