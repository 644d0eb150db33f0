"""Issue #30, deliverable 6: the site's usability fixes, each driven through the real pages (AppTest) on a real demo store.

Unknown filter values in the Board's address are named; downloads hold fractions everywhere; the upload page
defaults to the main task and says an empty file holds no records, warns about fields the schema does not know;
item lists sort ids as numbers; PARADISE's Charts open on systems with per-item data; the seen/unseen chart is
tall enough to read; the Board's columns: the ranking metric and its interval first, card columns apart.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from leaderboard import ui
from tests.site_app import build_demo_store, page

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-usability")


def warnings_of(at: object) -> list[str]:
    return [w.value for w in at.warning]  # type: ignore[attr-defined]


# -- unknown values in the Board's address ----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [("kind", "submited", "submitted"), ("family", "transformer-ish", "unknown"), ("team", "nobody-here", "demo"), ("size", "huge", "unknown")],
)
def test_an_unknown_filter_value_in_the_address_is_named_with_the_allowed_ones(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str, allowed: str
) -> None:
    at = page(demo_db, monkeypatch, "board", task="openpi", split="test", **{key: value})
    said = [w for w in warnings_of(at) if value in w]
    assert len(said) == 1, warnings_of(at)
    assert f"`{key}`" in said[0] and f"`{allowed}`" in said[0]  # the parameter, and a value it could have named
    clean = page(demo_db, monkeypatch, "board", task="openpi", split="test")
    assert not [w for w in warnings_of(clean) if "in the address" in w]  # a clean address says nothing


@pytest.mark.parametrize("value", ["abc", "999", "-3"])
def test_a_bootstrap_count_out_of_range_in_the_address_is_named(demo_db: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    at = page(demo_db, monkeypatch, "board", task="openpi", split="test", ci=value)
    said = [w for w in warnings_of(at) if f"`{value}`" in w]
    assert len(said) == 1 and "from 0 to 200" in said[0], warnings_of(at)


def test_the_downloads_page_names_unknown_filter_values_too(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(demo_db, monkeypatch, "downloads", task="openpi", split="test", kind=["submitted", "bogus-kind"])
    said = [w for w in warnings_of(at) if "bogus-kind" in w]
    assert len(said) == 1 and "`submitted`" in said[0] and "only the known values filter" in said[0]


# -- downloads: stored values everywhere ------------------------------------------------------------


def downloaded(demo_db: Path, monkeypatch: pytest.MonkeyPatch, name: str, **params: str) -> dict[str, pl.DataFrame]:
    """Each frame a page hands to ``ui.downloads`` (what its CSV and JSON buttons write), by the button's key."""
    frames: dict[str, pl.DataFrame] = {}
    real = ui.downloads

    def spy(frame: pl.DataFrame, stem: str, **kwargs: Any) -> None:
        frames[kwargs.get("key") or stem] = frame
        real(frame, stem, **kwargs)

    monkeypatch.setattr(ui, "downloads", spy)
    page(demo_db, monkeypatch, name, **params)
    return frames


def test_homes_download_holds_the_stored_fractions_as_the_boards_download_does(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(demo_db, monkeypatch, "home")
    shown = at.dataframe[0].value
    home = pl.read_csv(io.StringIO(downloaded(demo_db, monkeypatch, "home")["home"].write_csv()))
    board = downloaded(demo_db, monkeypatch, "board", task="openpi", split="test")["board"]
    leader = board.filter(pl.col("rank") == 1).row(0, named=True)
    openpi = home.filter(pl.col("Board") == "board?task=openpi&split=test").row(0, named=True)
    assert openpi["Score"] == pytest.approx(leader["rouge_f1"], abs=1e-12)  # the same figure, in the same unit, as the board's file
    assert 0.0 <= openpi["Score"] <= 1.0
    on_screen = shown[shown["Board"] == "board?task=openpi&split=test"]["Score"].iloc[0]
    assert on_screen == pytest.approx(round(leader["rouge_f1"] * 100, 2))  # the page still shows %
    assert any("fractions" in c.value for c in at.caption)  # the units note under the buttons
