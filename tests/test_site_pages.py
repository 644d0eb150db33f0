"""Every page of the site, rendered by Streamlit's AppTest over a real demo store (build_demo)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from procbench.leaderboard import analysis, boardview, queries
from procbench.api import load_task
from procbench.runners.runtime import stats
from tests.site_app import build_demo_store, info_of, page


@pytest.fixture(autouse=True)
def small_interval_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled samples have 4-22 items, below the interval floor (30): these tests check the intervals and
    ties themselves at the hidden-split floor (5); the floor is tested in tests/test_board_provenance.py."""
    monkeypatch.setenv("PROCBENCH_MIN_INTERVAL_ITEMS", "5")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-pages")


def test_home_lists_every_task_with_its_leader_and_counts(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "home")
    table = at.dataframe[0].value
    with duckdb.connect(str(demo_db), read_only=True) as con:
        expected = {
            (t, s): n
            for t, s, n in con.execute(
                "SELECT task, split, count(*) FROM submissions WHERE NOT is_reference GROUP BY task, split"
            ).fetchall()
        }
        current = set(con.execute("SELECT task, split FROM current_tasks").fetchall())
    boards = {
        (url.split("task=")[1].split("&")[0], url.split("split=")[1]): n
        for url, n in zip(table["Board"], table["Submissions"])
    }
    assert set(boards) == current
    assert all(boards[key] == expected.get(key, 0) for key in boards)
    openpi = table[[u.startswith("board?task=openpi&") for u in table["Board"]]].iloc[0]
    assert openpi["Leader"] == "strong-model" and openpi["Primary metric"] == "ROUGE-L F1"
    assert openpi["Leader team"] == "demo" and openpi["Score"] == pytest.approx(97.30, abs=0.01)


def test_board_ranks_with_intervals_items_and_a_tie_group(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "board", task="paged", split="dev")
    table = at.dataframe[0].value
    primary = table["Action F1"].tolist()
    assert primary == sorted(primary, reverse=True)
    assert table["Tie group"].iloc[0] == "leader"
    assert set(table["Items"]) == {6}
    # the leader's interval is the task's own aggregator over resampled documents
    info = info_of(demo_db, "paged", "dev")
    leader_id = table["Details"].iloc[0].split("id=")[1]
    _, runner = load_task("paged")
    items = queries.item_scores(demo_db, [leader_id])[leader_id]
    expected = stats.interval(
        stats.bootstrap(items, runner.aggregate, [m.name for m in info.metrics]), "action"
    )
    metric = info.metric("action")
    assert (
        table["Action F1 95% CI"].iloc[0]
        == f"{metric.shown(expected.low):.2f} – {metric.shown(expected.high):.2f}"
    )
    assert any("Tie group" in c.value for c in at.caption)


def test_board_slices_groups_and_filters_come_from_the_url(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(
        demo_db,
        monkeypatch,
        "board",
        task="openpi",
        split="test",
        slice="domain",
        value="unseen",
        groups=["ROUGE"],
    )
    assert any("domain = unseen" in s.value for s in at.subheader)
    table = at.dataframe[0].value
    submitted = table[table["Kind"] == "submitted"]
    assert set(submitted["Items"]) == {10}  # the unseen (Health) steps of the sample test split
    assert (
        "ROUGE-L P" in table.columns
        and "BLEU-2 F1" not in table.columns
        and "Exact F1" not in table.columns
    )
    # issue #16: papers' rows were reported on the real test split, so a board over the bundled sample shows none
    assert "reported" not in set(
        page(demo_db, monkeypatch, "board", task="openpi", split="test").dataframe[0].value["Kind"]
    )
    by_exact = page(
        demo_db, monkeypatch, "board", task="openpi", split="test", sort="exact_f1"
    ).dataframe[0]
    # issue #16, #30: metric columns first (the ranking metric and its interval before the model, then the others), bookkeeping on demand
    assert [c for c in by_exact.proto.column_order if c != "Tie group"][:4] == [
        "Rank",
        "Exact F1",
        "Exact F1 95% CI",
        "Model",
    ]
    assert not {"Team", "Kind", "Items", "Submitted"} & set(by_exact.proto.column_order)
    assert by_exact.value["Exact F1"].tolist() == sorted(
        by_exact.value["Exact F1"].tolist(), reverse=True
    )
    shown = (
        page(demo_db, monkeypatch, "board", task="openpi", split="test", details="true")
        .dataframe[0]
        .proto.column_order
    )
    assert {"Team", "Kind", "Items", "Size class", "Weights"} <= set(shown)


def test_board_switching_a_slice_with_the_selector(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "board", task="pm-llm-benchmark")
    next(s for s in at.sidebar.selectbox if s.label == "Slice").select("modality").run()
    values = next(s for s in at.sidebar.selectbox if s.label == "Slice value")
    assert set(values.options) == {
        "Text question (text)",
        "Image question (vision)",
    }  # the spec's value labels, the stored value beside
    values.select("vision").run()
    assert not at.exception
    assert any("modality = vision" in s.value for s in at.subheader)
    assert any(
        "Image question" in c.value for c in at.caption
    )  # the caption under the slice names the value's label


def test_charts_draw_bars_radar_and_seen_unseen(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "charts", task="openpi", split="test")
    charts = at.get("vega_lite_chart")
    assert len(charts) == 4  # bars, radar, seen vs unseen, progress over time
    specs = [json.loads(c.proto.spec) for c in charts]
    assert specs[0]["encoding"]["xOffset"]["field"] == "system"  # grouped per-slice bars
    assert len(specs[1]["layer"]) == 4  # radar: rings, spokes, labels, polygons
    assert specs[2]["layer"][1]["encoding"]["x"]["title"].endswith(
        "on Topics seen in training (seen)"
    )  # the spec's value label
    paged = page(demo_db, monkeypatch, "charts", task="paged", split="dev")
    assert len(paged.get("vega_lite_chart")) == 3  # no two-valued slice: bars, radar and progress
    assert any("exactly two values" in c.value for c in paged.caption)


def test_compare_shows_paired_deltas_items_gold_and_predictions(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = boardview.build(demo_db, info_of(demo_db, "openpi", "test"), interval_rows=0).export
    first, second = [
        sid for sid, kind in zip(board["submission_id"], board["kind"]) if kind == "submitted"
    ][:2]
    at = page(demo_db, monkeypatch, "compare", task="openpi", split="test", a=first, b=second)
    deltas = at.dataframe[0].value
    whole = deltas[deltas["Slice"] == "(whole split)"].iloc[0]
    values = dict(zip(board["submission_id"], board["rouge_f1"]))
    assert whole["Δ (A − B)"] == pytest.approx(
        round((values[first] - values[second]) * 100, 2), abs=0.011
    )
    # issue #30: p is printed, not a float: 4 decimals, '< 0.001' where no resample of 1000 crossed 0, '< 0.0001' below 4 decimals
    assert whole["Items"] == 22 and isinstance(whole["p"], str)
    assert whole["p"] in ("< 0.001", "< 0.0001") or (
        re.fullmatch(r"0\.\d{4}", whole["p"]) and float(whole["p"]) < 0.05
    ), whole["p"]
    modality = deltas[deltas["Slice"] == "modality"]
    assert (
        modality["95% CI of Δ"].tolist() == ["none: this slice"] * 2
    )  # answer-label slices: no per-item resampling, said so
    items = at.dataframe[1].value
    gaps = items["Δ (A − B)"].abs().tolist()
    assert gaps == sorted(gaps, reverse=True)
    codes = [c.value for c in at.code]
    assert "answers" in codes[0]  # the gold item, from the runner's gold reader
    assert len(codes) == 3  # gold, A's and B's predictions (raw files are stored)


def test_compare_paged_draws_gold_and_predicted_graphs(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "compare", task="paged", split="dev")
    graphs = at.get("graphviz_chart")
    # the gold, then per system its prediction and the gold coloured by what it missed, each in a full-width tab
    assert len(graphs) == 5
    assert all(g.proto.spec.startswith("digraph paged") for g in graphs)
    assert 'label="gold"' in graphs[0].proto.spec and 'label="prediction"' in graphs[1].proto.spec
    assert [t.label for t in at.tabs] == [
        "Gold",
        "A: prediction",
        "A: gold, coloured by what A missed",
        "B: prediction",
        "B: gold, coloured by what B missed",
    ]
    spurious, missed = graphs[1].proto.spec, graphs[2].proto.spec
    assert "#2e7d32" in spurious  # matched elements are green, with the legend that says so
    assert any(
        "matched" in m.value and "missed" in m.value and "spurious" in m.value for m in at.markdown
    )
    side = page(demo_db, monkeypatch, "compare", task="paged", split="dev", layout="side by side")
    assert not side.tabs and len(side.get("graphviz_chart")) == 5 and missed


def test_submission_page_has_metadata_metrics_slices_and_history(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with duckdb.connect(str(demo_db), read_only=True) as con:
        sid = con.execute(
            "SELECT submission_id FROM submissions WHERE task = 'pm-llm-benchmark' AND model = 'acme-think-small'"
        ).fetchone()[0]
    at = page(demo_db, monkeypatch, "submission", id=sid)
    assert json.loads(at.json[0].value)["cot"] is True
    metrics = at.dataframe[1].value
    with duckdb.connect(str(demo_db), read_only=True) as con:
        labels = dict(
            con.execute(
                "SELECT item_id, value FROM item_labels WHERE task = 'pm-llm-benchmark' AND dimension = 'modality'"
            ).fetchall()
        )
        categories = dict(
            con.execute(
                "SELECT item_id, value FROM item_labels WHERE task = 'pm-llm-benchmark' AND dimension = 'category'"
            ).fetchall()
        )
    text = sum(1 for v in labels.values() if v == "text")
    assert len(labels) == 9 and 0 < text < 9  # the sample's 9 questions, one an image question
    # issue #30: each metric's Items are the items it is computed over: the primary Score sums the text questions only
    score = metrics[metrics["Primary"] == "yes"].iloc[0]
    assert score["Items"] == text and score["95% CI"] != ""
    assert metrics[metrics["Metric"] == "Total (/57)"].iloc[0]["Items"] == 9  # every question
    c1 = metrics[metrics["Metric"] == "PCo (C1)"].iloc[0]
    in_c1 = sum(1 for v in categories.values() if v == "cat01")
    assert (
        c1["Items"] == in_c1 < 5 and c1["95% CI"] == "none: too few items"
    )  # below the floor (5 here): its own count all the same
    slices = at.dataframe[2].value
    assert {"category", "modality"} <= set(slices["Slice"])
    history = at.dataframe[3].value
    assert list(history["Status"])[:3] == ["received", "validated", "scored"]
    missing = page(demo_db, monkeypatch, "submission", id="not-an-id")
    assert any("No visible submission" in e.value for e in missing.error)


def test_task_page_renders_the_spec_with_schema_and_sample(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "task", task="openpi")
    assert at.header[0].value.startswith("OpenPI")
    assert any("tandon-etal-2020-dataset" in c.value for c in at.code)
    labels = [b.label for b in at.get("download_button")]
    assert "Download the JSON Schema" in labels and "Download the sample" in labels
    facts = at.dataframe[0].value
    assert "MIT" in facts["value"].tolist()


def test_downloads_page_and_export_match_the_board(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(
        demo_db, monkeypatch, "downloads", task="openpi", split="test", slice="domain", value="seen"
    )
    assert {b.label for b in at.get("download_button")} == {"Download CSV", "Download JSON"}
    preview = at.dataframe[0].value
    assert set(preview["slice_value"]) == {"seen"}
    assert preview["rank"].tolist() == list(range(1, len(preview) + 1))
    view = boardview.build(demo_db, info_of(demo_db, "openpi", "test"), interval_rows=3)
    export = view.export
    assert export.filter(pl.col("kind") == "submitted")["ci_low"].drop_nulls().len() == 3
    assert (
        json.loads(json.dumps(export.to_dicts(), default=str))[0]["submission_id"]
        == export["submission_id"][0]
    )


def test_hidden_split_never_shows_items_or_gold(
    demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hidden = tmp_path / "hidden.duckdb"
    shutil.copy(demo_db, hidden)
    with duckdb.connect(str(hidden)) as con:
        con.execute("UPDATE tasks SET hidden = true WHERE task = 'openpi' AND split = 'test'")
    at = page(hidden, monkeypatch, "compare", task="openpi", split="test")
    assert any("Hidden split" in i.value for i in at.info)
    assert len(at.dataframe) == 1 and not at.code and not at.get("graphviz_chart")
    board = page(hidden, monkeypatch, "board", task="openpi", split="test")
    assert any("hidden split" in c.value for c in board.caption)


def test_analysis_refuses_intervals_when_the_aggregator_no_longer_reproduces(
    demo_db: Path, tmp_path: Path
) -> None:
    changed = tmp_path / "changed.duckdb"
    shutil.copy(demo_db, changed)
    with duckdb.connect(str(changed)) as con:
        sid = con.execute(
            "SELECT submission_id FROM submissions WHERE task = 'openpi' AND model = 'strong-model'"
        ).fetchone()[0]
        con.execute(
            "UPDATE aggregates SET value = value - 0.1 WHERE submission_id = ? AND slice = '' AND metric = 'rouge_f1'",
            [sid],
        )
    info = info_of(changed, "openpi", "test")
    assert analysis.bootstrap_of(changed, info, sid) is None
    assert analysis.bootstrap_of(demo_db, info, sid) is not None


def test_ranking_uses_the_spec_tie_breaks(tmp_path: Path) -> None:
    """Two PM-LLM submissions with the same Score are ordered by `total`, the spec's first tie-break."""
    import json as _json

    from procbench.leaderboard import boardview
    from procbench.leaderboard.model import TaskInfo
    from procbench.leaderboard.queries import tasks
    from procbench.api import load_task
    from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
    from procbench.submissions import SubmissionRequest, submit

    db = tmp_path / "tie.duckdb"
    spec, runner = load_task("pm-llm-benchmark")
    rows = [
        _json.loads(x)
        for x in (SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl")
        .read_text()
        .splitlines()
    ]
    text_only = [r for r in rows if not r["id"].startswith("cat07")]
    with_vision = tmp_path / "with-vision.jsonl"
    with_vision.write_text("".join(_json.dumps(r) + "\n" for r in rows))
    text = tmp_path / "text-only.jsonl"
    text.write_text("".join(_json.dumps(r) + "\n" for r in text_only))
    for path, model in ((text, "a-text-only"), (with_vision, "b-with-vision")):
        submit(
            SubmissionRequest(split="main", predictions=path, model=model, team="t"),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
    row = tasks(db).filter(pl.col("task") == "pm-llm-benchmark").row(0, named=True)
    info = TaskInfo.from_row(row)
    assert info.rank_by[0] == "total"
    view = boardview.build(db, info, interval_rows=0)
    models = [m for m in view.table["Model"].to_list() if m in ("a-text-only", "b-with-vision")]
    assert models == [
        "b-with-vision",
        "a-text-only",
    ]  # equal Score (textual questions), higher total wins
