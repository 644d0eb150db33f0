"""Issue #16 (site UI) and #19 part 5 (store reads cached by store version), on a real demo store with AppTest.

Model cards read one way everywhere; charts keyed by submission with missing values left out and one
colour per system; no plot of incomparable quantities; metric columns first; unknown addresses said
so; the model page, the overview and search on Home, the item browser; downloads in stored units.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.leaderboard import boardview, cache, metadata, overview, plots, ui
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, submit
from tests.site_app import build_demo_store, info_of, page, private_copy


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-ui")


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store (and its raw files) for a test that writes."""
    return private_copy(demo_db, tmp_path)


def sid_of(db: Path, model: str, task: str | None = None) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT submission_id FROM submissions WHERE model = ?"
            + (" AND task = ?" if task else ""),
            [model, *([task] if task else [])],
        ).fetchone()
    assert row is not None
    return str(row[0])


# -- model cards (item 4) ----------------------------------------------------------------------------


def test_card_reads_weights_size_and_parameters_from_metadata_and_prefers_card_columns() -> None:
    card = metadata.card(
        {
            "metadata_json": json.dumps(
                {
                    "weights": "open",
                    "size_class": "small (<=8 GB)",
                    "method": "LLM",
                    "parameters": "7B",
                }
            )
        }
    )
    assert (card.access, card.size_class, card.family, card.parameters) == (
        "open",
        "small (≤ 8 GB)",
        "llm",
        "7B",
    )
    stored = metadata.card(
        {
            "metadata_json": json.dumps({"weights": "open"}),
            "weights": "closed",
            "size_class": "tiny (<=4 gb)",
        }
    )
    assert (stored.access, stored.size_class) == (
        "closed",
        "tiny (≤ 4 GB)",
    )  # the card's own columns win over metadata
    links = metadata.card(
        {
            "paper_url": "javascript:alert(1)",
            "metadata_json": json.dumps({"code": "https://example.org/code"}),
        }
    )
    assert (
        links.paper_url == "" and links.code_url == "https://example.org/code"
    )  # only plain http(s) links are ever linked


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(max_size=60),
        st.dictionaries(
            st.sampled_from([*metadata.ACCESS_KEYS, *metadata.FAMILY_KEYS, "size_class", "x"]),
            st.one_of(st.booleans(), st.integers(), st.text(max_size=12), st.none()),
        ).map(json.dumps),
    )
)
def test_card_never_fails_on_any_metadata(text: str) -> None:
    card = metadata.card({"metadata_json": text, "is_reference": False})
    assert card.access in ("open", "closed", metadata.UNKNOWN) and card.kind == "submitted"
    assert all(isinstance(value, str) for _, value in card.rows())


def test_board_and_submission_page_show_the_same_card_and_size_filters(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = (
        page(demo_db, monkeypatch, "board", task="pm-llm-benchmark", split="main", details="true")
        .dataframe[0]
        .value
    )
    row = board[board["Model"] == "acme-think-small"].iloc[0]
    assert (row["Weights"], row["Size class"], row["Family"]) == (
        "open",
        "small (≤ 8 GB)",
        "llm",
    )  # `weights: open` is not "unknown"
    detail = (
        page(demo_db, monkeypatch, "submission", id=sid_of(demo_db, "acme-think-small"))
        .dataframe[0]
        .value
    )
    shown = dict(zip(detail["Field"], detail["Value"]))
    assert (shown["Weights"], shown["Size class"], shown["Method family"]) == (
        row["Weights"],
        row["Size class"],
        row["Family"],
    )
    only_tiny = (
        page(
            demo_db,
            monkeypatch,
            "board",
            task="pm-llm-benchmark",
            split="main",
            size="tiny (≤ 4 GB)",
        )
        .dataframe[0]
        .value
    )
    assert only_tiny["Model"].tolist() == ["acme-tiny"]


# -- tables and addresses (item 5) -------------------------------------------------------------------


def test_every_table_shows_a_dash_not_None_and_metric_columns_have_definitions(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, params in (
        ("home", {}),
        ("board", {"task": "openpi", "split": "test"}),
        ("compare", {"task": "paged", "split": "dev"}),
        ("submission", {"id": sid_of(demo_db, "acme-large")}),
        ("model", {"model": "sample-strong"}),
    ):
        at = page(demo_db, monkeypatch, name, **params)
        assert at.dataframe and all(d.proto.placeholder == ui.MISSING for d in at.dataframe), name
    info = info_of(demo_db, "openpi", "test")
    help_text = ui.metric_help(info.metric("rouge_f1"))
    assert "higher is better" in help_text and "%" in help_text


def test_unknown_task_in_the_address_stops_instead_of_showing_another_board(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "board", task="opnepi", split="test")
    assert any("opnepi" in e.value for e in at.error) and not at.dataframe
    typo = page(demo_db, monkeypatch, "board", tsak="openpi")
    assert any("tsak" in w.value for w in typo.warning)
    value = page(demo_db, monkeypatch, "board", task="openpi", split="test", sort="not_a_metric")
    assert any("not\\_a\\_metric" in w.value or "not_a_metric" in w.value for w in value.warning)


# -- charts (item 5) ---------------------------------------------------------------------------------


def test_series_names_are_unique_per_submission_not_cut_at_a_parenthesis() -> None:
    rows = [
        {"submission_id": "a" * 12, "model": "BERT (fine-tuned)", "team": "t1"},
        {"submission_id": "b" * 12, "model": "BERT (zero-shot)", "team": "t1"},
        {"submission_id": "c" * 12, "model": "BERT (zero-shot)", "team": "t2"},
        {"submission_id": "d" * 12, "model": "BERT (zero-shot)", "team": "t2"},
    ]
    names = ui.system_names(rows)
    assert len(set(names.values())) == 4 and names["a" * 12] == "BERT (fine-tuned)"


def test_radar_leaves_missing_values_out_and_scales_each_axis() -> None:
    frame = pl.DataFrame(
        {
            "system": ["A", "A", "A", "B", "B", "B"],
            "axis": ["x", "y", "z"] * 2,
            "value": [50.0, None, 2.0, 100.0, 80.0, 4.0],
        }
    )
    scales = plots.axis_scales(frame, ["x", "y", "z"], {"x": 100.0, "y": 100.0})
    assert scales == {
        "x": 100.0,
        "y": 100.0,
        "z": 4.0,
    }  # z (not a %) has its own rim, the largest value shown
    points = plots.radar_points(frame, ["x", "y", "z"], scales)
    a = points.filter(pl.col("system") == "A")
    assert (
        a["axis"].to_list() == ["x", "z"] and a["segment"].n_unique() == 2
    )  # no point at 0 for y: the polygon breaks there
    b = points.filter(pl.col("system") == "B")
    assert b["axis"].to_list() == ["x", "y", "z", "x"] and b["value"].to_list() == [
        1.0,
        0.8,
        1.0,
        1.0,
    ]  # closed, each on its own scale


def test_charts_page_uses_one_colour_per_system_and_skips_incomparable_plots(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "charts", task="openpi", split="test")
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]

    def domains(spec: dict) -> list[tuple[str, list[str], list[str]]]:
        found = []
        for part in [spec, *spec.get("layer", [])]:
            colour = part.get("encoding", {}).get("color", {})
            if "domain" in colour.get("scale", {}):
                found.append(
                    (colour.get("field", ""), colour["scale"]["domain"], colour["scale"]["range"])
                )
        return found

    scales = [d for spec in specs for d in domains(spec)]
    by_system = [(domain, colours) for field, domain, colours in scales if field != "date_source"]
    assert len(by_system) >= 3 and all(
        c == by_system[0] for c in by_system
    )  # bars, radar and scatter agree on every system's colour
    systems = set(
        boardview.build(demo_db, info_of(demo_db, "openpi", "test"), interval_rows=0).export[
            "model"
        ]
    )
    assert set(by_system[0][0]) <= systems and len(set(by_system[0][1])) == len(
        by_system[0][0]
    )  # one colour each
    # issue #30: the progress chart colours its points by what dates them, one colour per date source in its legend's order
    dated = [(domain, colours) for field, domain, colours in scales if field == "date_source"]
    assert [d for d, _ in dated] == [
        [
            "paper's date",
            "model release",
            "submission time (upload)",
            "run time (baseline)",
        ]
    ]
    assert len(set(dated[0][1])) == 4
    pm = page(demo_db, monkeypatch, "charts", task="pm-llm-benchmark", split="main")
    texts = " ".join(c.value for c in pm.caption)
    assert "not the same quantity" in texts  # a text-only sum is not plotted across categories
    assert (
        "Seen vs unseen" in [s.value for s in pm.subheader]
        and "exactly two values on which this metric" in texts
    )  # nor text vs vision


# -- model page, overview, search, item browser (item 7) ---------------------------------------------


def test_model_page_lists_every_board_with_the_boards_own_rank(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "model", model="sample-strong")
    table = at.dataframe[0].value
    assert len(table) == 4 and set(table["Rank"]) == {1}  # the four PARADISE sample boards
    for board_name in table["Board"]:
        task, split = board_name.split(" · ")
        view = boardview.build(demo_db, info_of(demo_db, task, split), interval_rows=0)
        ranks = dict(zip(view.export["model"], view.export["rank"]))
        assert ranks["sample-strong"] == 1
    missing = page(demo_db, monkeypatch, "model", model="no-such-model")
    assert any("no-such-model" in e.value for e in missing.error)


def test_home_overview_has_every_model_and_search_filters_it(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "home")
    grid = at.dataframe[1].value
    with duckdb.connect(str(demo_db), read_only=True) as con:
        models = {
            r[0]
            for r in con.execute(
                "SELECT DISTINCT model FROM submissions WHERE NOT is_reference"
            ).fetchall()
        }
    assert models <= set(grid["Model"])
    # issue #30: a cell is the best rank on any OpenPI board *of* that board's ranked rows, and the value of its ranking metric
    board = boardview.build(demo_db, info_of(demo_db, "openpi", "test"), interval_rows=0).export
    ranked = sum(1 for r in board["rank"].to_list() if r is not None)
    with duckdb.connect(str(demo_db), read_only=True) as con:
        value = con.execute(
            "SELECT a.value FROM aggregates a JOIN submissions s USING (submission_id) "
            "WHERE s.model = 'strong-model' AND s.task = 'openpi' AND a.slice = '' AND a.metric = 'rouge_f1'"
        ).fetchone()[0]
    assert (
        ranked == 3 and f"{value * 100:.2f}" == "97.30"
    )  # the demo's three OpenPI submissions; ROUGE-L F1 a fraction, shown in %
    assert (
        grid[grid["Model"] == "strong-model"].iloc[0]["OpenPI"]
        == f"#1 of {ranked} · {value * 100:.2f} %"
    )
    per_board = page(demo_db, monkeypatch, "home", boards="OpenPI").dataframe[1].value
    assert (
        per_board[per_board["Model"] == "strong-model"].iloc[0]["openpi · test"]
        == f"#1 of {ranked} · {value * 100:.2f} %"
    )
    found = page(demo_db, monkeypatch, "home", q="ACME").dataframe[1].value
    assert set(found["Model"]) == {"acme-large", "acme-think-small", "acme-tiny"}


def test_item_browser_shows_gold_and_prediction_of_a_public_split(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = sid_of(demo_db, "strong-model", "openpi")
    at = page(demo_db, monkeypatch, "items", task="openpi", split="test", id=sid)
    listing = at.dataframe[0].value
    assert len(listing) == 22
    codes = [c.value for c in at.code]
    assert (
        len(codes) == 2 and "answers" in codes[0] and "answers" in codes[1]
    )  # gold, then the stored prediction of the chosen item
    paged = page(demo_db, monkeypatch, "items", task="paged", split="dev")
    assert len(paged.get("graphviz_chart")) == 3


# -- downloads (item 7) ------------------------------------------------------------------------------


def test_downloads_are_fractions_with_a_units_note(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(demo_db, monkeypatch, "downloads", task="openpi", split="test")
    assert any("fractions" in c.value for c in at.caption)
    view = boardview.build(demo_db, info_of(demo_db, "openpi", "test"), interval_rows=0)
    shown = dict(zip(view.table["Model"], view.table["ROUGE-L F1"]))
    raw = dict(zip(view.export["model"], view.export["rouge_f1"]))
    assert all(0.0 <= v <= 1.0 for v in raw.values()) and all(
        abs(shown[m] - round(raw[m] * 100, 2)) < 1e-9 for m in raw
    )


# -- upload (issue's list) ---------------------------------------------------------------------------


def test_upload_defaults_to_a_split_with_a_board_and_says_when_a_new_name_is_not_applied(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(db, monkeypatch, "upload", task="propara")
    split = next(s for s in at.selectbox if s.label == "Split")
    assert split.value == "test"  # propara's spec lists train, dev, test; only test has a board
    sample = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"
    at = page(db, monkeypatch, "upload", task="openpi", split="test")
    next(t for t in at.text_input if t.label == "Team").input("demo")
    next(t for t in at.text_input if t.label == "Model name").input("a-new-name")
    at.file_uploader[0].upload(sample.name, sample.read_bytes(), "application/json").run()
    at.button[0].click().run()
    assert not at.exception
    said = [
        m.value for m in [*at.warning, *at.error]
    ]  # intake refuses it, or (older intakes) keeps the first name: either way, said
    assert any("template\\-guesser" in m and "a\\-new\\-name" in m for m in said), said
    with duckdb.connect(str(db), read_only=True) as con:
        assert (
            con.execute("SELECT count(*) FROM submissions WHERE model = 'a-new-name'").fetchone()[0]
            == 0
        )


# -- store reads cached by store version (#19, part 5) -----------------------------------------------


def test_site_reads_are_cached_until_the_store_changes(db: Path) -> None:
    cache.clear()
    info = info_of(db, "openpi", "test")
    first = boardview.build(db, info, interval_rows=0)
    misses = cache.stats()["misses"]
    again = boardview.build(db, info, interval_rows=0)
    assert cache.stats()["misses"] == misses and again.export.equals(
        first.export
    )  # a warm view reads nothing from the store
    version = cache.store_version(db)
    spec, runner = load_task("openpi")
    submit(
        SubmissionRequest(
            split="test",
            predictions=SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl",
            model="after-write",
            team="other-team",
        ),
        spec,
        runner,
        data_root=SAMPLE_DATA_ROOT,
        db_path=db,
    )
    assert cache.store_version(db) != version
    after = boardview.build(db, info, interval_rows=0)
    assert cache.stats()["misses"] > misses and "after-write" in after.export["model"].to_list()
    assert "after-write" in overview.models(db)


def test_cached_reads_run_on_one_reader_thread(db: Path) -> None:
    import threading

    seen: set[str] = set()

    @cache.cached
    def probe(path: Path, n: int) -> int:
        seen.add(threading.current_thread().name)
        return n

    threads = [threading.Thread(target=probe, args=(db, i)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 1 and next(iter(seen)).startswith("procbench-store-reader")


def test_bootstraps_are_kept_on_disk_and_reused_with_the_same_numbers(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.leaderboard import analysis, bootcache
    from procbench.runners.runtime import stats

    info = info_of(db, "openpi", "test")
    sid = sid_of(db, "strong-model", "openpi")
    monkeypatch.setenv(
        analysis.MIN_INTERVAL_ENV, "5"
    )  # the sample split has 22 items, below the interval floor (read in one place)
    analysis._bootstrap.cache_clear()
    first = analysis.bootstrap_of(db, info, sid)
    assert first is not None
    files = list(bootcache.folder(db).glob("*.npz"))
    assert len(files) == 1
    calls = []
    real = stats.bootstrap
    monkeypatch.setattr(stats, "bootstrap", lambda *a, **k: calls.append(1) or real(*a, **k))
    analysis._bootstrap.cache_clear()  # a restarted site: the process cache is empty, the disk one is not
    again = analysis.bootstrap_of(db, info, sid)
    assert again is not None and not calls  # read back, not resampled
    assert again.item_ids == first.item_ids and (again.replicates == first.replicates).all()
    shutil.rmtree(bootcache.folder(db))  # safe to delete: recomputed, the same numbers (fixed seed)
    analysis._bootstrap.cache_clear()
    third = analysis.bootstrap_of(db, info, sid)
    assert third is not None and calls and (third.replicates == first.replicates).all()
