"""Issue #16's browser review of Compare and the Task page on the real-data board, each defect held here (AppTest).

Long slice-value labels stay out of the table's cells (listed whole under it); a metric restricted to some items
(PM-LLM's text-only Score) is not compared on slices without any of them; every empty interval says why, in the
board's words; the Task page knows the ``split`` its links carry.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from procbench.leaderboard import analysis, boardview, sitedata
from procbench.demo import build_board
from tests.site_app import build_demo_store, info_of, page

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def real_db(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """The board `make leaderboard` builds from the real data (papers' rows, upstream PM-LLM verdicts)."""
    path = tmp_path_factory.mktemp("site-compare-real") / "demo.duckdb"
    assert build_board(path, data_root=data_root, log=lambda _: None) > 10
    return path


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-compare-demo")


def rows_of(db: Path, task: str, split: str) -> pl.DataFrame:
    return sitedata.submissions_of(db, task, split)


def deltas(at: AppTest) -> pl.DataFrame:
    return pl.DataFrame(at.dataframe[0].value)


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def submitted_pair(db: Path, task: str, split: str) -> tuple[str, str]:
    rows = (
        rows_of(db, task, split)
        .filter(~pl.col("is_reference"))
        .sort("primary_value", descending=True)
    )
    first, second = rows["submission_id"].to_list()[:2]
    return first, second


# -- long labels ----------------------------------------------------------------------------------------


def test_long_slice_value_labels_are_listed_under_the_table_not_in_its_cells(
    real_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = info_of(real_db, "paradise-tip", "test")
    a, b = submitted_pair(real_db, "paradise-tip", "test")
    at = page(real_db, monkeypatch, "compare", task="paradise-tip", split="test", a=a, b=b)
    table = deltas(at)
    long_labels = {
        (sl.name, v): label
        for sl in info.slices
        for v, label in sl.value_labels.items()
        if len(sl.value_label(v)) > 40
    }
    assert long_labels  # PARADISE's explicitness and similarity values carry sentence-long labels
    for sl_name, value in zip(table["Slice"], table["Value"]):
        assert len(value) <= 40, (
            value
        )  # no cell wide enough to push the figures off a 1400-px window
    text = captions(at).replace("\\", "")  # markdown escapes off
    shown = set(zip(table["Slice"], table["Value"]))
    listed = [(s, v) for s, v in long_labels if (s, v) in shown]
    assert len(listed) == len(
        long_labels
    )  # each such value is in the table by its stored value ...
    assert all(
        f"`{v}` = {long_labels[(s, v)]}" in text for s, v in listed
    )  # ... and its whole label is under it
    # narrow headers last: p (its help names the test), then issue #30's flag for a value above the metric's range, none here
    # (an accuracy in 0-100 %)
    assert list(table.columns)[-2:] == ["p", "Above range"] and set(table["Above range"]) == {""}


def test_short_labels_stay_in_the_cell(real_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = submitted_pair(real_db, "pm-llm-benchmark", "main")
    table = deltas(
        page(
            real_db,
            monkeypatch,
            "compare",
            task="pm-llm-benchmark",
            split="main",
            a=a,
            b=b,
            metric="total",
        )
    )
    assert "C1 PCo: process context (cat01)" in table["Value"].to_list()


# -- a metric restricted to some items ------------------------------------------------------------------


def test_a_text_only_score_is_not_compared_on_image_questions(
    real_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = info_of(real_db, "pm-llm-benchmark", "main")
    assert info.restriction("score") == (("modality", "text"),) and info.restriction("total") == ()
    a, b = submitted_pair(real_db, "pm-llm-benchmark", "main")
    at = page(real_db, monkeypatch, "compare", task="pm-llm-benchmark", split="main", a=a, b=b)
    table = deltas(at)
    pairs = set(zip(table["Slice"], table["Value"]))
    assert ("modality", "Text question (text)") in pairs and (
        "category",
        "C1 PCo: process context (cat01)",
    ) in pairs
    assert not any(
        v.endswith("(vision)") or v.endswith("(cat07)") for v in table["Value"]
    )  # no text score on the image questions (C7: all images)
    text = captions(at)
    assert "modality = text" in text and "modality = vision" in text and "category = cat07" in text
    # every metric over all items is compared everywhere, image questions included
    total = deltas(
        page(
            real_db,
            monkeypatch,
            "compare",
            task="pm-llm-benchmark",
            split="main",
            a=a,
            b=b,
            metric="total",
        )
    )
    assert any(v.endswith("(vision)") for v in total["Value"]) and any(
        v.endswith("(cat07)") for v in total["Value"]
    )


def test_coverage_is_read_from_the_stored_item_labels(real_db: Path) -> None:
    info = info_of(real_db, "pm-llm-benchmark", "main")
    category, modality = info.slice("category"), info.slice("modality")
    assert category is not None and modality is not None
    assert analysis.covers(real_db, info, "score", None, "")
    assert analysis.covers(real_db, info, "score", modality, "text") and not analysis.covers(
        real_db, info, "score", modality, "vision"
    )
    covered = {
        v for v in category.value_labels if analysis.covers(real_db, info, "score", category, v)
    }
    assert covered == {f"cat0{i}" for i in range(1, 9)} - {
        "cat07"
    }  # C7 (visual interpretation) holds image questions only
    assert analysis.covers(real_db, info, "c1", category, "cat01") and not analysis.covers(
        real_db, info, "c1", category, "cat02"
    )
    assert all(analysis.covers(real_db, info, "total", category, v) for v in category.value_labels)


# -- why there is no interval ---------------------------------------------------------------------------


def test_every_empty_interval_says_why_in_the_boards_words(
    real_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = info_of(real_db, "pm-llm-benchmark", "main")
    a, b = submitted_pair(real_db, "pm-llm-benchmark", "main")
    at = page(
        real_db,
        monkeypatch,
        "compare",
        task="pm-llm-benchmark",
        split="main",
        a=a,
        b=b,
        metric="total",
    )
    table = deltas(at)
    floor = analysis.min_interval_items()
    text = captions(at)
    category = info.slice("category")
    assert category is not None
    for sl_name, value, items, ci in zip(
        table["Slice"], table["Value"], table["Items"], table["95% CI of Δ"]
    ):
        if items >= floor:  # the whole split's 57 questions, the 51 text ones: an interval
            assert "–" in ci and not ci.startswith("none")
        else:  # a category's 5-9 questions, the 6 image ones
            assert ci == "none: too few items", (sl_name, value)
    # the caption holds the board's own sentence for those rows (one helper decides both)
    board = boardview.build(
        real_db, info, sl=category, slice_value="cat01", sort_metric="total", interval_rows=50
    )
    assert board.ci_notes[a] == analysis.too_few_items(8)
    assert board.ci_notes[a].startswith(
        f"only 8 items (an interval needs at least {floor})"
    )  # cat01's 8 questions, in words
    counts = [n for n, sl_name in zip(table["Items"], table["Slice"]) if n < floor]
    assert analysis.too_few_items(min(counts), max(counts)) in text.replace(
        "\\", ""
    )  # the rows' counts, said once: "only 5–9 items ..."


def test_a_papers_row_has_no_interval_and_says_so(
    real_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = rows_of(real_db, "paradise-tip", "test")
    reported = rows.filter(pl.col("is_reference"))["submission_id"].to_list()
    submitted = rows.filter(~pl.col("is_reference"))["submission_id"].to_list()
    assert reported and submitted
    at = page(
        real_db,
        monkeypatch,
        "compare",
        task="paradise-tip",
        split="test",
        a=submitted[0],
        b=reported[0],
    )
    table = deltas(at)
    assert table.height >= 1 and set(table["95% CI of Δ"]) == {"none: reported"}
    assert analysis.NO_ITEMS_REPORTED in captions(at).replace("\\", "")


# -- the Task page's address ----------------------------------------------------------------------------


def test_task_page_knows_the_split_its_links_carry(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not page(demo_db, monkeypatch, "task", task="openpi", split="test").warning
    wrong_split = page(demo_db, monkeypatch, "task", task="openpi", split="tset").warning
    assert len(wrong_split) == 1 and "tset" in wrong_split[0].value
    unknown = page(demo_db, monkeypatch, "task", task="openpi", split="test", sorted="x").warning
    assert len(unknown) == 1 and "sorted" in unknown[0].value
