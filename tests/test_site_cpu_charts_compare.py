"""Warm views of Charts and Compare redo none of their work (issue #19): operations counted, never timed.

A warm view (a new session, the store unchanged) must read nothing from the store, convert no chart to
Vega-Lite, run no paired test and aggregate no item again; a write to the store makes the next view
read again and draw the same figures.  The cached Vega-Lite spec is what ``st.altair_chart`` sends.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from procbench.leaderboard import analysis, boardview, cache, plots, queries
from procbench.leaderboard.model import TaskInfo
from procbench.submissions import store
from tests.site_app import build_demo_store, page, private_copy

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-cpu")


def _counting(
    monkeypatch: pytest.MonkeyPatch, counts: Counter[str], owner: Any, name: str, label: str
) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[label] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


@contextlib.contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Store reads (every ``procbench.submissions.store`` attach of the file), chart conversions, paired tests, per-item aggregations."""
    counts: Counter[str] = Counter()
    with monkeypatch.context() as patch:
        _counting(patch, counts, store, "_attached", "store reads")
        _counting(patch, counts, plots, "vega_lite", "chart conversions")
        _counting(patch, counts, analysis, "compare", "paired tests")
        _counting(patch, counts, analysis, "per_item_metric", "per-item aggregations")
        yield counts


def _charts(at: AppTest) -> list[tuple[str, list[tuple[str, bytes]]]]:
    """Every chart as the browser receives it: its spec JSON and its named Arrow datasets."""
    return [
        (c.proto.spec, [(d.name, d.data.data) for d in c.proto.datasets])
        for c in at.get("vega_lite_chart")
    ]


def _tables(at: AppTest) -> list[pl.DataFrame]:
    return [pl.DataFrame(t.value) for t in at.dataframe]


def _pair(db: Path) -> tuple[str, str]:
    row = queries.task_row(db, "openpi", "test")
    assert row is not None
    board = boardview.build(db, TaskInfo.from_row(row), interval_rows=0).export
    first, second = [
        sid for sid, kind in zip(board["submission_id"], board["kind"]) if kind == "submitted"
    ][:2]
    return first, second


def test_a_warm_charts_view_reads_and_converts_nothing(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = page(demo_db, monkeypatch, "charts", task="openpi", split="test")
    with counting(monkeypatch) as counts:
        warm = page(demo_db, monkeypatch, "charts", task="openpi", split="test")
    assert counts == Counter(), (
        counts
    )  # nothing read from the store, no chart built or validated again
    assert len(_charts(first)) == 4 and _charts(warm) == _charts(
        first
    )  # the same four charts, byte for byte


def test_a_warm_compare_view_reads_tests_and_aggregates_nothing(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _pair(demo_db)
    first = page(demo_db, monkeypatch, "compare", task="openpi", split="test", a=a, b=b)
    with counting(monkeypatch) as counts:
        warm = page(demo_db, monkeypatch, "compare", task="openpi", split="test", a=a, b=b)
    assert counts == Counter(), (
        counts
    )  # no store read (the raw-file check included), no paired bootstrap test, no per-item aggregate
    tables = _tables(first)
    assert (
        len(tables) >= 2 and tables[0].height > 1 and tables[1].height > 0
    )  # the deltas on every slice, the items that differ most
    assert all(x.equals(y) for x, y in zip(_tables(warm), tables, strict=True))


def test_a_write_to_the_store_makes_the_next_view_read_again_with_the_same_figures(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = private_copy(demo_db, tmp_path)
    a, b = _pair(db)
    charts = _charts(page(db, monkeypatch, "charts", task="openpi", split="test"))
    deltas = _tables(page(db, monkeypatch, "compare", task="openpi", split="test", a=a, b=b))
    version = cache.store_version(db)
    stat = db.stat()
    os.utime(
        db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000)
    )  # what any committed write changes
    assert cache.store_version(db) != version
    with counting(monkeypatch) as counts:
        again = _charts(page(db, monkeypatch, "charts", task="openpi", split="test"))
        tables = _tables(page(db, monkeypatch, "compare", task="openpi", split="test", a=a, b=b))
    assert (
        counts["store reads"] > 0
        and counts["chart conversions"] == 4
        and counts["paired tests"] > 0
    )
    assert again == charts and all(x.equals(y) for x, y in zip(tables, deltas, strict=True))


def _both_ways() -> None:
    """Each chart builder's chart drawn by ``st.altair_chart``, then from ``plots.vega_lite`` by ``st.vega_lite_chart``."""
    from datetime import datetime, timedelta

    import polars as pl
    import streamlit as st

    from procbench.leaderboard import plots, ui

    colours = ui.colour_scale(["A", "B"])
    bars = pl.DataFrame(
        {
            "system": ["A", "B", "A"],
            "slice_value": ["x", "x", "y"],
            "value": [1.5, 2.0, None],
            "n_items": [3, 3, 4],
            "low": [1.0, 1.5, None],
            "high": [2.0, 2.5, None],
        }
    )
    radar = pl.DataFrame(
        {
            "system": ["A"] * 3 + ["B"] * 3,
            "axis": ["p", "q", "r"] * 2,
            "value": [50.0, None, 2.0, 100.0, 80.0, 4.0],
        }
    )
    scatter = pl.DataFrame(
        {"system": ["A", "B"], "x": [10.0, 20.0], "y": [12.0, 15.0], "n_x": [5, 5], "n_y": [6, 6]}
    )
    start = datetime(2024, 1, 1)
    history = pl.DataFrame(
        {
            "produced_at": [start + timedelta(days=i) for i in range(7000)],
            "value": [float(i % 97) for i in range(7000)],
            "best": [96.0] * 7000,
            "system": ["A"] * 7000,
            "date_source": ["model release"] * 7000,
        }
    )  # more rows than Altair inlines by default
    for chart, width in (
        (plots.slice_bars(bars, "F1", scale=colours), "stretch"),
        (plots.radar(radar, ["p", "q", "r"], scale=colours), None),
        (plots.seen_unseen(scatter, "x", "y", scale=colours), "stretch"),
        (plots.progress(history, "F1"), "stretch"),
    ):
        if width is None:
            st.altair_chart(chart)
            st.vega_lite_chart(plots.vega_lite(chart))
        else:
            st.altair_chart(chart, width=width)
            st.vega_lite_chart(plots.vega_lite(chart), width=width)


def test_the_cached_spec_is_what_altair_chart_sends() -> None:
    at = AppTest.from_function(_both_ways, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    drawn = _charts(at)
    assert len(drawn) == 8
    for altair_way, cached_way in zip(drawn[::2], drawn[1::2]):
        assert (
            cached_way == altair_way
        )  # the same spec and the same Arrow bytes: no number shown changes
    spec, datasets = drawn[-1]
    assert len(datasets) == 1 and json.loads(spec)["data"] == {
        "name": datasets[0][0]
    }  # the 7,000 rows travel as one named Arrow dataset
