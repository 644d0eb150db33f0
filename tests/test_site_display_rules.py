"""Issue #30: display semantics read from each metric's declaration, one rule per test, on stores built to trigger it.

* a metric over 8 of 57 items (PM-LLM's C1): bootstrapped over its 8 items, so no interval below the floor, and
  one within what the metric can reach when the floor allows it;
* a slice where the primary metric is undefined (PM-LLM's text-only Score on the image questions): ranked by the
  next declared rank metric, said in words, the undefined figures left empty;
* equal scores share a rank (1, 1, 3) and the page says so;
* a value above 100 % flagged on every page (Board, Compare, Charts, Submission, Downloads) with its bounded variant;
* Home's grid: rank "of N" and the value; p-values below the display precision; a value with no spread has no interval, said why.

The PM-LLM store is built from the real questions (skipped without them); its answers carry their own verdicts,
graded by rules written here (the intake reads them as any self-judged file).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from procbench.leaderboard import analysis, boardview, overview, semantics, ui
from procbench.api import load_task
from procbench.submissions import SubmissionRequest, submit
from tests.site_app import build_demo_store, info_of, page

TASK = "pm-llm-benchmark"


def _grade(item_id: str, strength: int) -> float:
    """A verdict's grade from the question id alone (no code under test): categories and models differ, all within 1-10."""
    number = sum(map(ord, item_id))
    return float(1 + (number * strength) % 10)


@pytest.fixture(scope="module")
def pmllm_db(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """Four self-judged rows on the 57 real questions: two with identical verdicts (equal scores), two others."""
    spec, runner = load_task(TASK)
    try:
        gold, _ = runner.gold(data_root, "main")
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"the real PM-LLM questions are not readable here: {exc}")
    folder = tmp_path_factory.mktemp("display-rules")
    db = folder / "board.duckdb"
    for model, strength in (
        ("twin-a", 3),
        ("twin-b", 3),
        ("other", 7),
        ("weak", 1),
        ("perfect", 0),
    ):
        path = folder / f"{model}.jsonl"
        grades = {
            i: _grade(i, strength) if strength else 10.0 for i in gold.items
        }  # "perfect": every answer graded 10
        path.write_text(
            "".join(
                json.dumps({"id": i, "answer": f"answer to {i}", "verdict": f"Grade: {g}"}) + "\n"
                for i, g in grades.items()
            )
        )
        submit(
            SubmissionRequest(split="main", predictions=path, model=model, team=model),
            spec,
            runner,
            data_root=data_root,
            db_path=db,
        )
    return db


def _pm_info(db: Path):
    return info_of(db, TASK, "main")


# -- a metric over 8 of 57 items -------------------------------------------------------------------


def test_a_category_metric_is_described_by_its_own_items(pmllm_db: Path) -> None:
    info = _pm_info(pmllm_db)
    c1 = semantics.describe(info, "c1")
    assert (
        c1.where == (("category", "cat01"),) and c1.covers_text == "the items with category = cat01"
    )
    assert semantics.describe(info, "total").where == ()


def test_a_category_below_the_floor_has_no_interval_and_counts_its_own_items(
    pmllm_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(analysis.MIN_INTERVAL_ENV, raising=False)
    info = _pm_info(pmllm_db)
    export = boardview.build(pmllm_db, info, interval_rows=0).export
    sid = export.filter(pl.col("model") == "weak")["submission_id"][0]
    c1 = analysis.uncertainty(pmllm_db, info, sid, "c1")
    # 8 questions of category cat01 in the real benchmark (upstream's C1), not the 57 of the split
    assert c1.interval is None and c1.reason.startswith("only 8 items ")
    total = analysis.uncertainty(pmllm_db, info, sid, "total")
    assert total.interval is not None and total.interval.n_items == 57
    score = analysis.uncertainty(pmllm_db, info, sid, "score")
    assert score.interval is not None and score.interval.n_items == 51  # the text questions only


def test_a_category_interval_stays_within_what_the_category_can_reach(
    pmllm_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, "5")
    info = _pm_info(pmllm_db)
    export = boardview.build(pmllm_db, info, interval_rows=0).export
    for sid in export.filter(pl.col("model") != "perfect")["submission_id"]:
        found = analysis.uncertainty(pmllm_db, info, sid, "c1").interval
        assert found is not None and found.n_items == 8
        # at most 8: each of the 8 questions scores at most 10, summed and divided by 10
        assert 0.0 <= found.low <= found.estimate <= found.high <= 8.0


def test_the_board_ranked_by_a_category_ties_on_its_own_items(
    pmllm_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, "5")
    view = boardview.build(pmllm_db, _pm_info(pmllm_db), sort_metric="c1", interval_rows=10)
    lows = view.export["ci_low"].drop_nulls().to_list()
    highs = view.export["ci_high"].drop_nulls().to_list()
    assert lows and all(0.0 <= lo for lo in lows) and all(hi <= 8.0 for hi in highs)


# -- a slice where the primary metric is undefined -------------------------------------------------


def test_a_slice_the_primary_is_undefined_on_is_ranked_by_the_next_rank_metric(
    pmllm_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _pm_info(pmllm_db)
    modality = info.slice("modality")
    assert modality is not None
    view = boardview.build(pmllm_db, info, sl=modality, slice_value="vision", interval_rows=0)
    assert (
        view.requested == "score" and view.sort_metric.name == "total"
    )  # the spec's rank_by: [total, c1, ...]
    assert "score" in view.undefined and "c1" in view.undefined and "c7" not in view.undefined
    assert view.export["score"].is_null().all()  # not 0.00 for every row
    at = page(
        pmllm_db, monkeypatch, "board", task=TASK, split="main", slice="modality", value="vision"
    )
    said = " ".join(i.value for i in at.info)
    assert (
        ui.escape("Score (text, /51) is not defined on modality = vision") in said
        and ui.escape("Ranked by Total (/57) instead") in said
    )
    assert at.dataframe[0].value["Score (text, /51)"].isna().all()


def test_a_slice_the_primary_is_defined_on_keeps_it(pmllm_db: Path) -> None:
    info = _pm_info(pmllm_db)
    category = info.slice("category")
    assert category is not None
    view = boardview.build(pmllm_db, info, sl=category, slice_value="cat01", interval_rows=0)
    assert view.requested == "" and view.sort_metric.name == "score"
    assert "c1" not in view.undefined and "c2" in view.undefined and "c7" in view.undefined


# -- equal scores ----------------------------------------------------------------------------------


def test_equal_scores_share_a_rank_and_the_board_says_so(
    pmllm_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = boardview.build(pmllm_db, _pm_info(pmllm_db), interval_rows=0).export
    ranks = dict(zip(export["model"], export["rank"]))
    assert (
        ranks["twin-a"] == ranks["twin-b"]
    )  # identical verdicts, so identical figures on every metric
    below = sorted(r for m, r in ranks.items() if r > ranks["twin-a"])
    assert (
        not below or below[0] == ranks["twin-a"] + 2
    )  # competition ranking: the next row skips the shared place
    at = page(pmllm_db, monkeypatch, "board", task=TASK, split="main")
    assert any(
        "Equal values share a rank" in c.value and f"2 rows share rank {ranks['twin-a']}" in c.value
        for c in at.caption
    )


def test_competition_ranks_by_hand() -> None:
    assert semantics.competition_ranks([0] * 5, [(3.0,), (3.0,), (2.0,), None, (1.0,)]) == [
        1,
        1,
        3,
        None,
        4,
    ]
    assert semantics.competition_ranks([0, 0, 1, 1], [(5.0,), (5.0,), (5.0,), (4.0,)]) == [
        1,
        1,
        1,
        2,
    ]  # each rank group from 1


def test_p_values_below_the_display_precision_are_said_so() -> None:
    assert semantics.format_p(0.0, 1000) == "< 0.001"
    assert semantics.format_p(0.00004) == "< 0.0001"
    assert semantics.format_p(0.0123) == "0.0123"
    assert semantics.format_p(None) == ""


# -- a value above 100 % on every page -------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "display-rules-demo")


def _above(demo_db: Path) -> tuple[str, str]:
    """A PAGED submission with a metric above 100 % on the sample board, and that metric (found from the stored figures)."""
    export = boardview.build(demo_db, info_of(demo_db, "paged", "dev"), interval_rows=0).export
    info = info_of(demo_db, "paged", "dev")
    for row in export.iter_rows(named=True):
        for m in info.metrics:
            if m.percent and row.get(m.name) is not None and row[m.name] > 1.0:
                return row["submission_id"], m.name
    pytest.fail("no PAGED sample figure above 100 %")


def test_above_range_is_flagged_on_the_board_and_its_download(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, metric = _above(demo_db)
    export = boardview.build(demo_db, info_of(demo_db, "paged", "dev"), interval_rows=0).export
    assert metric in export.filter(pl.col("submission_id") == sid)["above_range"][0].split("; ")
    at = page(demo_db, monkeypatch, "board", task="paged", split="dev")
    assert any(
        "Above its range here" in c.value and ui.escape("(bounded)") in c.value for c in at.caption
    )
    downloads = page(demo_db, monkeypatch, "downloads", task="paged", split="dev")
    assert any(metric in str(v) for v in downloads.dataframe[0].value["above_range"])


def test_above_range_is_flagged_on_the_submission_page_with_the_bounded_value(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, metric = _above(demo_db)
    info = info_of(demo_db, "paged", "dev")
    at = page(demo_db, monkeypatch, "submission", id=sid)
    table = at.dataframe[1].value
    row = table[table["Metric"] == info.metric(metric).display].iloc[0]
    assert row["Above range"].startswith("above 0–100")
    assert row["Bounded"] <= 100.0  # the corrected variant beside the official figure
    assert any("Above its range here" in c.value for c in at.caption)
    assert any(
        ui.escape("(official) and") in c.value for c in at.caption
    )  # the difference is explained


def test_above_range_is_flagged_on_compare_and_charts(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid, metric = _above(demo_db)
    info = info_of(demo_db, "paged", "dev")
    other = next(
        s
        for s in boardview.build(demo_db, info, interval_rows=0).export["submission_id"]
        if s != sid
    )
    at = page(
        demo_db, monkeypatch, "compare", task="paged", split="dev", a=sid, b=other, metric=metric
    )
    table = at.dataframe[0].value
    assert "A" in set(table["Above range"]) or "A; B" in set(table["Above range"])
    assert any(c.startswith("A ") and "(bounded)" in c for c in table.columns)
    assert any("Above its range here" in c.value for c in at.caption)
    charts = page(
        demo_db,
        monkeypatch,
        "charts",
        task="paged",
        split="dev",
        metric=metric,
        systems=[sid, other],
    )
    assert any("Above its range here" in c.value for c in charts.caption)


# -- no spread, Home's grid ------------------------------------------------------------------------


def test_a_value_with_no_spread_has_no_interval_and_says_why(
    pmllm_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(analysis.MIN_INTERVAL_ENV, raising=False)
    info = _pm_info(pmllm_db)
    export = boardview.build(pmllm_db, info, interval_rows=0).export
    perfect = export.filter(pl.col("model") == "perfect")["submission_id"][
        0
    ]  # every answer graded 10: every resample gives 57
    found = analysis.uncertainty(pmllm_db, info, perfect, "total")
    assert found.interval is None and found.reason.startswith(
        analysis.NO_SPREAD_PREFIX + "all 57 items score alike"
    )
    assert "57.00" in found.reason and boardview.short_reason(found.reason) == "none: no spread"
    assert (
        analysis.uncertainty(
            pmllm_db, info, export.filter(pl.col("model") == "weak")["submission_id"][0], "total"
        ).interval
        is not None
    )
    at = page(pmllm_db, monkeypatch, "submission", id=perfect)
    assert "none: no spread" in set(at.dataframe[1].value["95% CI"])


def test_home_grid_gives_rank_of_n_and_the_value(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranks = overview.ranks(demo_db)
    grid = page(demo_db, monkeypatch, "home", boards="OpenPI").dataframe[1].value
    column = [c for c in grid.columns if c not in ("Model", "Page", "Boards")][0]
    for model, cell in zip(grid["Model"], grid[column]):
        mine = ranks.filter((pl.col("model") == model) & (pl.col("benchmark") == "OpenPI")).row(
            0, named=True
        )
        expected = "only row" if mine["ranked"] == 1 else f"#{mine['rank']} of {mine['ranked']}"
        assert cell.startswith(expected) and f"{mine['shown']:.2f}" in cell
    at = page(demo_db, monkeypatch, "home")
    assert any("of the board's ranked rows" in c.value for c in at.caption)


def test_home_grid_says_a_single_row_board_instead_of_first() -> None:
    row = {
        "rank": 1,
        "ranked": 1,
        "shown": 41.79,
        "unit": "%",
        "task": "openpi-head",
        "board": "openpi-head · test",
    }
    assert overview.cell(row) == "only row · 41.79 %"
    assert (
        overview.cell({**row, "ranked": 2, "rank": 2}, True) == "#2 of 2 · 41.79 % on openpi-head"
    )


# -- one rounding on every table of a page ----------------------------------------------------------


def test_the_submission_pages_tables_round_a_value_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_root: Path
) -> None:
    """Issue #30 (real-data review): GPT-5.5-Pro's C2 of 7.135 read 7.13 in the Submission page's Metrics table and 7.14 in
    its Slices table (polars' rounding there, MetricInfo.shown's everywhere else). Every answer graded 4.55 (kept as graded below 7) puts the
    categories of 5, 7 and 9 questions on such halves (2.275, 3.185, 4.095); each category's own metric on its own slice value
    must read as in the Metrics table."""
    spec, runner = load_task(TASK)
    try:
        gold, _ = runner.gold(data_root, "main")
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"the real PM-LLM questions are not readable here: {exc}")
    path = tmp_path / "halves.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "answer": f"answer to {i}", "verdict": "Grade: 4.55"}) + "\n"
            for i in gold.items
        )
    )
    db = tmp_path / "board.duckdb"
    submit(
        SubmissionRequest(split="main", predictions=path, model="halves", team="t"),
        spec,
        runner,
        data_root=data_root,
        db_path=db,
    )
    info = info_of(db, TASK, "main")
    export = boardview.build(db, info, interval_rows=0).export
    sid = export["submission_id"][0]
    # the trigger is there: some category's stored value sits on a half of the last shown decimal
    stored = [export[f"c{k}"][0] for k in range(1, 9)]
    assert any(
        abs(v * 1000 - round(v * 1000)) < 1e-6 and round(v * 1000) % 10 == 5 for v in stored
    ), stored
    at = page(db, monkeypatch, "submission", id=sid)
    metrics = next(d.value for d in at.dataframe if "Metric" in d.value.columns)
    slices = next(d.value for d in at.dataframe if "Slice" in d.value.columns)
    whole = dict(zip(metrics["Metric"], metrics["Value"]))
    compared = 0
    for k in range(1, 9):
        display = info.metric(f"c{k}").display
        row = slices[slices["Value"].str.contains(f"cat0{k}", regex=False)]
        assert len(row) == 1, (k, slices["Value"].tolist())
        assert row[display].iloc[0] == whole[display], (
            display,
            row[display].iloc[0],
            whole[display],
        )
        compared += 1
    assert compared == 8
