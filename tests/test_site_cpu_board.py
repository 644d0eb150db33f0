"""A warm Board view builds no board (issue #19): ``boardview.build`` calls and model-card readings counted, never timed.

The Board page built its board twice per view (facets, then the view itself), each time rounding every figure
and reading every model card again; ``boardview.view`` keeps both per store version and the page's choices.
The figures shown are the ones ``boardview.build`` gives uncached.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from procbench.leaderboard import boardview, metadata, sitedata
from procbench.leaderboard.model import TaskInfo
from tests.site_app import build_demo_store, page, private_copy

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-cpu-board")


@contextlib.contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Board builds and model-card readings (what a warm view used to redo)."""
    counts: Counter[str] = Counter()
    with monkeypatch.context() as patch:
        for owner, name, label in (
            (boardview, "build", "board builds"),
            (metadata, "card", "model cards read"),
        ):
            original: Callable[..., Any] = getattr(owner, name)

            def counted(
                *args: Any,
                _original: Callable[..., Any] = original,
                _label: str = label,
                **kwargs: Any,
            ) -> Any:
                counts[_label] += 1
                return _original(*args, **kwargs)

            patch.setattr(owner, name, counted)
        yield counts


def board_table(at: AppTest) -> pl.DataFrame:
    return pl.from_pandas(at.dataframe[0].value)


def uncached(db: Path, **choices: Any) -> pl.DataFrame:
    row = sitedata.task_row(db, "openpi", "test")
    assert row is not None
    info = TaskInfo.from_row(row)
    sl = info.slice(choices.pop("slice")) if "slice" in choices else None
    return boardview.build(db, info, sl=sl, groups=info.groups, **choices).table


def test_a_warm_board_view_builds_nothing_and_shows_the_same_figures(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page(
        demo_db, monkeypatch, "home"
    )  # AppTest opens Home before switching page: its overview (every board's ranks) built first, apart
    with counting(monkeypatch) as cold_counts:
        cold = page(demo_db, monkeypatch, "board", task="openpi", split="test")
    assert cold_counts["board builds"] == 2  # the facets' board and the view's, once each
    with counting(monkeypatch) as counts:
        warm = page(demo_db, monkeypatch, "board", task="openpi", split="test")
    assert counts == Counter(), counts  # no board built, no model card read again
    assert board_table(warm).equals(board_table(cold))
    assert board_table(cold).equals(
        uncached(demo_db, interval_rows=10)
    )  # the cache changes no number shown


def test_each_choice_of_the_page_is_its_own_view(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page(demo_db, monkeypatch, "board", task="openpi", split="test")
    with counting(monkeypatch) as counts:
        sliced = page(
            demo_db,
            monkeypatch,
            "board",
            task="openpi",
            split="test",
            slice="domain",
            value="unseen",
        )
        fewer = page(demo_db, monkeypatch, "board", task="openpi", split="test", ci="1")
    assert (
        counts["board builds"] == 3
    )  # the slice's facets and view; the new bootstrap setting's view (its facets are the unsliced ones)
    assert board_table(sliced).equals(
        uncached(demo_db, slice="domain", slice_value="unseen", interval_rows=10)
    )
    assert board_table(fewer).equals(uncached(demo_db, interval_rows=1))


def test_a_write_to_the_store_builds_the_board_again(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = private_copy(demo_db, tmp_path)
    before = board_table(page(db, monkeypatch, "board", task="openpi", split="test"))
    stat = db.stat()
    os.utime(
        db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000)
    )  # what any committed write changes
    page(
        db, monkeypatch, "home"
    )  # Home's overview, rebuilt for the new version, apart from the count
    with counting(monkeypatch) as counts:
        after = board_table(page(db, monkeypatch, "board", task="openpi", split="test"))
    assert counts["board builds"] == 2 and after.equals(before)
