"""Issue #30, deliverable 6: the site's usability fixes, each driven through the real pages (AppTest) on a real demo store.

Unknown filter values in the Board's address are named; downloads hold fractions everywhere; the upload page
defaults to the main task and says an empty file holds no records, warns about fields the schema does not know;
item lists sort ids as numbers; PARADISE's Charts open on systems with per-item data; the seen/unseen chart is
tall enough to read; the Board's columns: the ranking metric and its interval first, card columns apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
