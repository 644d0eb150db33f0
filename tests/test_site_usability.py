"""Issue #30, deliverable 6: the site's usability fixes, each driven through the real pages (AppTest) on a real demo store.

Unknown filter values in the Board's address are named; downloads hold fractions everywhere; the upload page
defaults to the main task and says an empty file holds no records, warns about fields the schema does not know;
item lists sort ids as numbers; PARADISE's Charts open on systems with per-item data; the seen/unseen chart is
tall enough to read; the Board's columns: the ranking metric and its interval first, card columns apart.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.leaderboard import boardlayout, sitedata, ui
from procbench import demo
from procbench.api import load_task
from procbench.paths import SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, load_reported, submit
from tests.site_app import build_demo_store, info_of, page

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-usability")


def warnings_of(at: object) -> list[str]:
    return [w.value for w in at.warning]  # type: ignore[attr-defined]


# -- unknown values in the Board's address ----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("kind", "submited", "submitted"),
        ("family", "transformer-ish", "unknown"),
        ("team", "nobody-here", "demo"),
        ("size", "huge", "unknown"),
    ],
)
def test_an_unknown_filter_value_in_the_address_is_named_with_the_allowed_ones(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str, allowed: str
) -> None:
    at = page(demo_db, monkeypatch, "board", task="openpi", split="test", **{key: value})
    said = [w for w in warnings_of(at) if value in w]
    assert len(said) == 1, warnings_of(at)
    assert (
        f"`{key}`" in said[0] and f"`{allowed}`" in said[0]
    )  # the parameter, and a value it could have named
    clean = page(demo_db, monkeypatch, "board", task="openpi", split="test")
    assert not [
        w for w in warnings_of(clean) if "in the address" in w
    ]  # a clean address says nothing


@pytest.mark.parametrize("value", ["abc", "999", "-3"])
def test_a_bootstrap_count_out_of_range_in_the_address_is_named(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    at = page(demo_db, monkeypatch, "board", task="openpi", split="test", ci=value)
    said = [w for w in warnings_of(at) if f"`{value}`" in w]
    assert len(said) == 1 and "from 0 to 200" in said[0], warnings_of(at)


def test_the_downloads_page_names_unknown_filter_values_too(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(
        demo_db,
        monkeypatch,
        "downloads",
        task="openpi",
        split="test",
        kind=["submitted", "bogus-kind"],
    )
    said = [w for w in warnings_of(at) if "bogus-kind" in w]
    assert len(said) == 1 and "`submitted`" in said[0] and "only the known values filter" in said[0]


# -- downloads: stored values everywhere ------------------------------------------------------------


def downloaded(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, name: str, **params: str
) -> dict[str, pl.DataFrame]:
    """Each frame a page hands to ``ui.downloads`` (what its CSV and JSON buttons write), by the button's key."""
    frames: dict[str, pl.DataFrame] = {}
    real = ui.downloads

    def spy(frame: pl.DataFrame, stem: str, **kwargs: Any) -> None:
        frames[kwargs.get("key") or stem] = frame
        real(frame, stem, **kwargs)

    monkeypatch.setattr(ui, "downloads", spy)
    page(demo_db, monkeypatch, name, **params)
    return frames


def test_homes_download_holds_the_stored_fractions_as_the_boards_download_does(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "home")
    shown = at.dataframe[0].value
    home = pl.read_csv(io.StringIO(downloaded(demo_db, monkeypatch, "home")["home"].write_csv()))
    board = downloaded(demo_db, monkeypatch, "board", task="openpi", split="test")["board"]
    leader = board.filter(pl.col("rank") == 1).row(0, named=True)
    openpi = home.filter(pl.col("Board") == "board?task=openpi&split=test").row(0, named=True)
    assert openpi["Score"] == pytest.approx(
        leader["rouge_f1"], abs=1e-12
    )  # the same figure, in the same unit, as the board's file
    assert 0.0 <= openpi["Score"] <= 1.0
    on_screen = shown[shown["Board"] == "board?task=openpi&split=test"]["Score"].iloc[0]
    assert on_screen == pytest.approx(round(leader["rouge_f1"] * 100, 2))  # the page still shows %
    assert any("fractions" in c.value for c in at.caption)  # the units note under the buttons


# -- Charts: systems with per-item data by default ----------------------------------------------------


@pytest.fixture(scope="module")
def paradise_with_papers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PARADISE tip on the real test split: the papers' rows (better than any baseline) and one submitted file answering every item."""
    chosen = demo.plan()
    if not chosen.real or "paradise-tip" not in chosen.real_tasks:
        pytest.skip(
            "no real PARADISE data (set PROCBENCH_DATA, or ../shared/data): its papers' rows show on no sample board"
        )
    folder = tmp_path_factory.mktemp("paradise-papers")
    db = folder / "board.duckdb"
    spec, runner = load_task("paradise-tip")
    gold, _ = runner.gold(chosen.data_root, "test")
    file = folder / "first-ending.jsonl"
    file.write_text(
        "".join(json.dumps({"id": int(i), "label": 0}) + "\n" for i in gold.items), encoding="utf-8"
    )
    submit(
        SubmissionRequest(split="test", predictions=file, model="first-ending", team="usability"),
        spec,
        runner,
        data_root=chosen.data_root,
        db_path=db,
    )
    assert load_reported(spec, runner, data_root=chosen.data_root, db_path=db)
    return db


def test_paradise_charts_open_on_the_systems_with_per_item_data(
    paradise_with_papers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = sitedata.submissions_of(paradise_with_papers, "paradise-tip", "test")
    best = rows.sort("primary_value", descending=True, nulls_last=True)
    assert best["is_reference"][0]  # the papers are on top: the old default opened on them
    at = page(paradise_with_papers, monkeypatch, "charts", task="paradise-tip", split="test")
    chosen = next(m for m in at.sidebar.multiselect if m.label == "Systems").value
    submitted = rows.filter(~pl.col("is_reference"))["submission_id"].to_list()
    assert chosen == submitted  # the one submitted row, not the six best papers' rows
    papers = page(
        paradise_with_papers,
        monkeypatch,
        "charts",
        task="paradise-tip",
        split="test",
        systems=best["submission_id"][0],
    )
    assert next(m for m in papers.sidebar.multiselect if m.label == "Systems").value == [
        best["submission_id"][0]
    ]  # the address still chooses any


# -- the upload page ---------------------------------------------------------------------------------


def test_the_upload_page_opens_on_the_main_task_not_its_variant(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "upload")
    task = next(s for s in at.selectbox if s.label == "Task")
    assert task.value == "openpi" and task.options.index("openpi") < task.options.index(
        "openpi-head"
    )
    assert task.options == sorted(task.options)


def upload(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch, task: str, split: str, name: str, content: bytes
) -> Any:
    at = page(demo_db, monkeypatch, "upload", task=task, split=split)
    at.file_uploader[0].upload(name, content, "application/json").run()
    assert not at.exception
    return at


def test_the_upload_page_says_an_empty_file_holds_no_records(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = upload(demo_db, monkeypatch, "paradise-tip", "test", "empty.jsonl", b"")
    problems = at.dataframe[0].value
    assert list(problems["Problem"]) == ["the file holds no records"]


def test_the_upload_page_names_a_field_the_format_does_not_declare_and_the_true_json_column(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (
        (SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    lines[4] = json.dumps({**json.loads(lines[4]), "answer": "misspelt"})
    at = upload(
        demo_db, monkeypatch, "openpi", "test", "extra.jsonl", ("\n".join(lines) + "\n").encode()
    )
    said = [w for w in warnings_of(at) if "answer" in w and "line 5" in w]
    assert len(said) == 1 and "ignored" in said[0], warnings_of(at)
    cut = lines[:2] + [lines[2][:-1]] + lines[3:]  # line 3 lost its closing brace
    at = upload(
        demo_db, monkeypatch, "openpi", "test", "cut.jsonl", ("\n".join(cut) + "\n").encode()
    )
    problems = at.dataframe[0].value
    assert list(problems["Line"]) == [3] and problems["Problem"][0].endswith(
        f"(column {len(lines[2])})"
    )


# -- item lists sort ids as numbers ------------------------------------------------------------------


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(st.sampled_from(["", "cat", "id-", "www.x/a||"]), st.integers(0, 10**6)),
        min_size=1,
        max_size=30,
    )
)
def test_natural_order_reads_digit_runs_as_numbers(ids: list[tuple[str, int]]) -> None:
    texts = [f"{prefix}{number}" for prefix, number in ids]
    ordered = sorted(texts, key=ui.natural_key)
    assert ordered == sorted(texts, key=lambda t: next((p, n) for p, n in ids if f"{p}{n}" == t))


def test_the_items_page_lists_item_ids_in_numeric_order(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "items", task="openpi", split="test")
    listed = list(at.dataframe[0].value["Item"])  # "<url>||<step>"
    steps = [(i.rsplit("||", 1)[0], int(i.rsplit("||", 1)[1])) for i in listed]
    assert steps == sorted(steps)  # step 2 before step 10


def test_the_items_page_lists_paradises_row_indices_in_numeric_order(
    paradise_with_papers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = list(
        page(paradise_with_papers, monkeypatch, "items", task="paradise-tip", split="test")
        .dataframe[0]
        .value["Item"]
    )
    assert len(listed) > 100 and listed == sorted(listed, key=int)


# -- the Board's columns: the ranking metric and its interval first, card columns apart -----------------


def column_order(at: Any) -> list[str]:
    return list(at.dataframe[0].proto.column_order)


def test_the_board_leads_with_rank_the_ranking_metric_and_its_interval(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = column_order(
        page(demo_db, monkeypatch, "board", task="openpi", split="test", sort="exact_f1")
    )
    assert (
        shown[:3] == ["Rank", "Exact F1", "Exact F1 95% CI"] and "Model" in shown[3:5]
    )  # the model right after (the tie mark between)
    assert not {"Team", "Kind", "Weights", "Items", "Submitted"} & set(
        shown
    )  # card and bookkeeping columns on demand


def test_metric_groups_choose_the_metric_columns(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = column_order(page(demo_db, monkeypatch, "board", task="openpi", split="test"))
    rouge = column_order(
        page(demo_db, monkeypatch, "board", task="openpi", split="test", groups=["ROUGE"])
    )
    assert {"Exact F1", "BLEU-2 F1", "ROUGE-L P"} <= set(every)
    assert "ROUGE-L P" in rouge and not {"Exact F1", "BLEU-2 F1"} & set(rouge)
    assert rouge[:3] == every[:3]  # the ranking metric stays first whatever the groups


def test_card_columns_are_grouped_apart_from_metric_and_bookkeeping_columns(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = column_order(
        page(demo_db, monkeypatch, "board", task="pm-llm-benchmark", split="main", details="true")
    )
    card = [i for i, c in enumerate(shown) if c in boardlayout.CARD]
    books = [i for i, c in enumerate(shown) if c in boardlayout.BOOKKEEPING]
    info = info_of(demo_db, "pm-llm-benchmark", "main")
    metrics = [
        i
        for i, c in enumerate(shown)
        if c in {m.display for m in info.metrics} or c.endswith("95% CI")
    ]
    assert card and books and metrics
    assert card == list(range(card[0], card[-1] + 1)) and books == list(
        range(books[0], books[-1] + 1)
    )  # each group contiguous
    assert max(metrics) < card[0] < books[0]  # metrics, then the card, then the bookkeeping
    assert {"Weights", "Family", "Size class"} <= {shown[i] for i in card}


@pytest.mark.parametrize(
    ("kinds", "contamination", "ties", "details", "lead"),
    [
        ([], [], [], False, ["Rank", "M", "M 95% CI", "Model"]),
        (
            ["submitted", "reported"],
            [],
            ["leader", ""],
            False,
            ["Rank", "M", "M 95% CI", "Tie group", "Model", "Kind"],
        ),
        (
            ["submitted"],
            ["suspected (card)"],
            [],
            False,
            ["Rank", "M", "M 95% CI", "Model", "Contamination"],
        ),
        (
            ["submitted", "reported"],
            ["suspected (card)"],
            [],
            True,
            ["Rank", "M", "M 95% CI", "Model"],
        ),
    ],
)
def test_the_lead_columns_follow_the_rows(
    demo_db: Path,
    kinds: list[str],
    contamination: list[str],
    ties: list[str],
    details: bool,
    lead: list[str],
) -> None:
    info = info_of(demo_db, "openpi", "test")
    metric = dataclasses.replace(info.primary_metric, display="M")
    columns = [
        *lead,
        "Tie group",
        "Kind",
        "Contamination",
        "Details",
        "Coverage",
        "Team",
        "Weights",
        "Other",
    ]
    shown = boardlayout.order(
        info,
        columns,
        metric,
        details=details,
        kinds=kinds,
        contamination=contamination,
        ties=ties,
        beside_bounded=["M", "Other"],
    )
    assert shown[: len(lead)] == lead
    assert shown[len(lead)] == "Other"  # then the other metrics
    assert ("Team" in shown) == details and ("Weights" in shown) == details


# -- charts keep their plot's height whatever the legend --------------------------------------------


def test_stretched_charts_fit_the_width_only_so_a_long_legend_never_squashes_the_plot(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streamlit fits a stretched chart's whole height, legend included, to its spec's (``autosize: fit``): with many systems
    the legend took the seen/unseen scatter's plot down to about 70 px (PARADISE's bars to none). Only the width is fitted now."""
    systems = sitedata.submissions_of(demo_db, "openpi", "test")["submission_id"].to_list()
    at = page(demo_db, monkeypatch, "charts", task="openpi", split="test", systems=systems)
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    stretched = [
        s for s in specs if s.get("height") in (340, 420, 300)
    ]  # bars, seen vs unseen, progress (the radar has its own width)
    assert len(stretched) == 3
    assert all(s["autosize"]["type"] == "fit-x" for s in stretched), [
        s["autosize"] for s in stretched
    ]
    scatter = next(s for s in stretched if s["height"] == 420)
    assert "layer" in scatter  # the points and the diagonal
