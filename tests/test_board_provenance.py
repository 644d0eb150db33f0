"""Issue #16, the data and ranking side: what every row was scored on, paper rows only over their data,
unranked rows without the ranking metric, flags above 100 %, one test for interval and tie, the
interval floor, the registered baselines, and the real-data board (when the data root has it)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl.tasks import load_task
from procbench.leaderboard import analysis, boardview, queries
from procbench.leaderboard.model import TaskInfo
from procbench.runners import baselines
from procbench.runners.runtime import stats
from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT, default_data_root
from procbench import demo
from procbench.submissions import provenance
from procbench.submissions.store import reader
from tests.site_app import build_openpi_sample_store


# -- one test decides the interval and "tied" ------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    deltas=st.lists(
        st.one_of(st.integers(-3, 3).map(float), st.floats(-1, 1, allow_nan=False)),
        min_size=1,
        max_size=400,
    ),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_the_interval_of_a_difference_excludes_zero_exactly_when_p_is_below_alpha(
    deltas: list[float], confidence: float
) -> None:
    values = np.array(deltas)
    n, ids = len(values), ("x",)
    a = stats.Bootstrap(ids, ("m",), np.array([0.0]), values.reshape(n, 1), seed=1)
    b = stats.Bootstrap(ids, ("m",), np.array([0.0]), np.zeros((n, 1)), seed=1)
    result = stats.paired(a, b, "m", confidence)
    below, above = int((values <= 0).sum()), int((values >= 0).sum())
    assert result.p_value == pytest.approx(min(1.0, 2 * min(below, above) / n))
    assert result.separated == (result.p_value < 1 - confidence - 1e-12)
    assert result.tied == (not result.separated)
    assert (
        result.low <= result.high and result.low in values and result.high in values
    )  # order statistics


def test_the_tie_group_is_the_set_whose_difference_interval_contains_zero() -> None:
    rng = np.random.default_rng(5)
    ids = tuple(f"i{k:03d}" for k in range(60))
    leader_values = rng.random(60)
    boots = {}
    for name, shift in (("same", 0.0), ("close", 0.02), ("far", 0.3)):
        items = [
            stats.ItemScore(i, {"p": float(v - shift)})
            for i, v in zip(ids, leader_values + rng.normal(0, 0.05, 60))
        ]
        boots[name] = stats.bootstrap(
            items,
            lambda xs: {"p": sum(x.values["p"] for x in xs) / len(xs)},
            ["p"],
            n_resamples=400,
        )
    leader = stats.bootstrap(
        [stats.ItemScore(i, {"p": float(v)}) for i, v in zip(ids, leader_values)],
        lambda xs: {"p": sum(x.values["p"] for x in xs) / len(xs)},
        ["p"],
        n_resamples=400,
    )
    tied = stats.tie_group(leader, boots, "p", alpha=0.05)
    for name, boot in boots.items():
        result = stats.paired(leader, boot, "p", 0.95)
        assert (name in tied) == (result.low <= 0 <= result.high) == (result.p_value >= 0.05)
    assert "far" not in tied


# -- figures above 100 % ---------------------------------------------------------------------------


def test_values_above_one_are_flagged_with_the_reason_of_their_scorer() -> None:
    assert "PAGED" in queries.above_one("paged", True, 1.0497)
    assert "ProPara" in queries.above_one("propara", True, 1.056)
    assert queries.above_one("openpi", True, 1.2) == queries.GENERIC_ABOVE_ONE
    assert (
        queries.above_one("paged", True, 1.0) == "" and queries.above_one("paged", True, None) == ""
    )
    assert queries.above_one("pm-llm-benchmark", False, 37.6) == ""  # not a fraction
    assert queries.above_one("paged", True, float("nan")) == ""
    frame = pl.DataFrame(
        {"submission_id": ["a", "b"], "actor": [1.0497, 0.5], "actor_r": [1.2, None]}
    )
    flags = queries.flags_above_one(
        frame, "paged", {"actor": True, "actor_r": True, "missing": True}
    )
    assert flags.select("submission_id", "metric").rows() == [("a", "actor"), ("a", "actor_r")]
    assert all(flags["note"].str.contains("not bounded by 1"))


# -- provenance on a sample store ------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_openpi_sample_store(tmp_path_factory, "provenance")


def test_a_sample_board_says_so_and_shows_no_paper_rows(sample_db: Path) -> None:
    spec, runner = load_task("openpi")
    gold, fingerprint = runner.gold(SAMPLE_DATA_ROOT, "test")
    found = queries.board_provenance(sample_db, "openpi", "test")
    assert found is not None and found.is_sample and found.fingerprint == fingerprint
    assert (
        found.gold_items == len(gold.items)
        and found.scorer_digest == runner.spec_digest
        and found.data_digest == ""
    )
    assert "sample" in found.label and f"{len(gold.items)} items" in found.label and found.caveat
    with reader(sample_db) as con:
        reported = con.execute("SELECT reported_on FROM submissions WHERE is_reference").fetchall()
        on_board = con.execute("SELECT count(*) FROM board WHERE is_reference").fetchone()[0]
    # stored, declaring the real split's lock digest, and shown on no sample board
    assert reported and {r[0] for r in reported} == {provenance.lock_digest(spec, "test")} != {""}
    assert on_board == 0
    assert not queries.board(sample_db, "openpi", "test")["is_reference"].any()


def test_the_interval_floor_hides_small_boards_intervals_with_the_reason(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = TaskInfo.from_row(queries.task_row(sample_db, "openpi", "test"))  # type: ignore[arg-type]
    sid = queries.board(sample_db, "openpi", "test")["submission_id"][0]
    n = len(queries.item_scores(sample_db, [sid])[sid])
    assert (
        n < analysis.min_interval_items()
    )  # the floor in force (30 unless PROCBENCH_MIN_INTERVAL_ITEMS says otherwise)
    hidden = analysis.uncertainty(sample_db, info, sid, info.primary)
    assert (
        hidden.interval is None
        and hidden.reason == analysis.too_few_items(n)
        and f"only {n} items" in hidden.reason
    )
    view = boardview.build(sample_db, info)
    assert view.leader is None and not view.tied  # no interval, no test: no tie group either
    assert (
        set(view.ci_notes) == set(view.export["submission_id"])
        and view.export["ci_note"].to_list() == [hidden.reason] * view.n_rows
    )
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, str(n))
    shown = analysis.uncertainty(sample_db, info, sid, info.primary)
    assert shown.interval is not None and shown.reason == ""
    assert (
        analysis.uncertainty(sample_db, info, sid, info.primary, is_reference=True).reason
        == analysis.NO_ITEMS_REPORTED
    )


def test_captions_count_every_row_down_to_the_last_bootstrapped_one(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, "5")
    info = TaskInfo.from_row(queries.task_row(sample_db, "openpi", "test"))  # type: ignore[arg-type]
    view = boardview.build(sample_db, info, interval_rows=2)
    assert view.interval_rows == 2 and view.covered_rows == 2 and "top 2 rows" in view.scope
    assert view.provenance is not None and view.provenance.is_sample


# -- baselines -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "task", "split"),
    [
        ("openpi-no-change", "openpi", "test"),
        ("openpi-no-change", "openpi-head", "test"),
        ("propara-all-none", "propara", "test"),
        ("propara-naacl18-all-unknown", "propara-naacl18", "test"),
        ("propara-naacl18-first-mention", "propara-naacl18", "test"),
        ("paged-sentence-chain", "paged", "dev"),
        ("openpi-copy-step", "openpi", "test"),
        ("openpi-copy-step", "openpi-head", "test"),
        ("paged-clause-chain", "paged", "dev"),
    ],
)
def test_each_registered_baseline_writes_a_file_its_task_reads_and_scores(
    name: str, task: str, split: str, tmp_path: Path
) -> None:
    chosen = baselines.get(name)
    assert task in chosen.tasks and chosen in baselines.for_task(task)
    _, runner = load_task(task)
    gold, _ = runner.gold(SAMPLE_DATA_ROOT, split)
    path = chosen.write(
        baselines.BaselineInput(SAMPLE_DATA_ROOT, task, split, gold.items),
        tmp_path / f"out.{chosen.suffix}",
    )
    records, _ = runner.validate(
        path, gold
    )  # raises InvalidPredictions if the file is not in the task's format
    assert set(records) == set(gold.items)
    evaluation = runner.evaluate(SAMPLE_DATA_ROOT, split, path)
    assert evaluation.n_items == len(gold.items) and not math.isnan(
        evaluation.metrics[runner.primary]
    )


def test_every_task_of_the_real_board_has_a_baseline_and_the_neural_one_only_on_request() -> None:
    from procbench.dsl.tasks import all_spec_paths

    for spec_file in all_spec_paths():
        spec, _ = load_task(spec_file)
        # the real board holds the tasks whose data is fetched (and locked); a new task needs no baseline until it
        # ships (procbench check --ship); PM-LLM's rows are the upstream models' answers
        if spec.fetch and spec.name != demo.PMLLM_TASK:
            assert baselines.for_task(spec.name), spec.name
    assert "paradise-embedding" not in {b.name for b in baselines.for_task("paradise-tip")}
    assert "paradise-embedding" in {b.name for b in baselines.for_task("paradise-tip", heavy=True)}
    with pytest.raises(KeyError, match="known: "):
        baselines.get("oracle")


def test_the_sentence_chain_keeps_the_text_format_s_own_symbols_out_of_nodes() -> None:
    chain = demo.baselines.simple.sentence_chain(
        "First (a) step: go -> there. Then stop. <SEP> Then stop. Last one!"
    )  # type: ignore[attr-defined]
    assert chain.splitlines() == [
        "Start -> First a step go there",
        "First a step go there -> Then stop",
        "Then stop -> Last one",
        "Last one -> End",
    ]


def test_without_real_data_the_demo_plan_falls_back_to_the_samples(tmp_path: Path) -> None:
    assert demo.plan(tmp_path / "nothing-here") == demo.DemoPlan(SAMPLE_DATA_ROOT, False)
    assert demo.plan(tmp_path) == demo.DemoPlan(
        SAMPLE_DATA_ROOT, False
    )  # a folder without any locked file


# -- the real board --------------------------------------------------------------------------------

REAL_ROOT = default_data_root()
REAL = demo.plan(REAL_ROOT) if REAL_ROOT is not None else demo.DemoPlan(SAMPLE_DATA_ROOT, False)


@pytest.fixture(scope="module")
def real_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not REAL.real:
        pytest.skip(
            "no real data (set PROCBENCH_DATA, or ../shared/data): the real-data board cannot be built"
        )
    folder = tmp_path_factory.mktemp("real-board")
    db = folder / "board.duckdb"
    assert demo.build_real(db, REAL.data_root, log=lambda _: None, work_dir=folder / "inputs") > 0
    return db


def test_the_real_board_is_scored_on_the_locked_data_and_says_so(real_db: Path) -> None:
    for task in REAL.real_tasks:
        spec, runner = load_task(task)
        split = demo.real_splits(spec, REAL.data_root)[0]
        found = queries.board_provenance(real_db, task, split)
        gold, fingerprint = runner.gold(REAL.data_root, split)
        assert found is not None and found.data_kind == provenance.REAL, task
        assert (found.fingerprint, found.gold_items, found.data_digest) == (
            fingerprint,
            len(gold.items),
            provenance.lock_digest(spec, split),
        )
        assert found.caveat == "" and f"real {split} split" in found.label
        board = queries.board(real_db, task, split)
        assert board.filter(~pl.col("is_reference")).height >= 1, (
            task
        )  # at least one baseline (or upstream model)


def test_real_paper_rows_are_distinct_sourced_and_unranked_without_the_metric(
    real_db: Path,
) -> None:
    info = TaskInfo.from_row(queries.task_row(real_db, "openpi", "test"))  # type: ignore[arg-type]
    view = boardview.build(real_db, info)
    reported = view.export.filter(pl.col("kind") == "reported")
    assert reported.height >= 1 and (reported["source"] != "").all()
    assert (view.export.filter(pl.col("kind") == "submitted")["source"] == "").all()
    ranked = view.export.filter(pl.col("rank").is_not_null())
    assert ranked["rank"].to_list() == list(range(1, ranked.height + 1))
    assert (
        view.export.filter(pl.col("rank").is_null())[info.primary].null_count()
        == view.export["rank"].null_count()
    )
    # on a slice, papers that give no value of the metric are listed without a rank
    domain = info.slice("domain")
    if domain is not None:
        sliced = boardview.build(real_db, info, sl=domain, slice_value="unseen").export
        missing = sliced.filter(pl.col(info.primary).is_null())
        assert missing["rank"].null_count() == missing.height


def test_home_counts_every_visible_row_once(real_db: Path) -> None:
    home = queries.home(real_db)
    with reader(real_db) as con:
        expected = dict(
            ((t, s, r), n)
            for t, s, r, n in con.execute(
                "SELECT task, split, is_reference, count(DISTINCT submission_id) FROM board GROUP BY ALL"
            ).fetchall()
        )
    counted = home.group_by("task", "split", "is_reference").len()
    assert {(t, s, r): n for t, s, r, n in counted.iter_rows()} == expected
    assert home.filter(pl.col("is_reference")).height >= 1


def test_upstream_pm_llm_rows_score_as_upstream_prints_them(real_db: Path) -> None:
    """Every staged model's row equals its `### <model>   => X points` line (the CoT penalty applied where upstream applies it)."""
    import re

    if "pm-llm-benchmark" not in REAL.real_tasks:
        pytest.skip("the PM-LLM-Benchmark folder is not under the data root")
    printed = re.findall(
        r"^### (\S+)\s+=> ([0-9.]+) points",
        (REAL.data_root / "pm-llm-benchmark" / "leaderboard_gpt-5.4.md").read_text(
            encoding="utf-8"
        ),
        re.M,
    )
    upstream = {model: float(points) for model, points in printed}
    board = queries.board(real_db, "pm-llm-benchmark", "main").filter(~pl.col("is_reference"))
    compared = 0
    for model, score in zip(board["model"], board["score"]):
        if model in upstream:
            assert round(score, 1) == upstream[model], model
            compared += 1
    assert compared >= 4


def test_the_clause_chain_makes_a_condition_an_exclusive_gateway() -> None:
    chain = demo.baselines.simple.clause_chain(
        "Receive the order. If the stock is sufficient, ship the goods; then send the invoice."
    )  # type: ignore[attr-defined]
    assert chain.splitlines() == [
        "Start -> Receive the order",
        "Receive the order -> XOR1",
        "XOR1 -> (the stock is sufficient) ship the goods",
        "ship the goods -> send the invoice",
        "send the invoice -> End",
    ]


def test_the_copied_step_is_the_question_s_last_sentence() -> None:
    question = " Start by eliminating addicting foods. Soda Pop is not the best for health. Now, what happens?"
    assert demo.baselines.simple.current_step(question) == "Soda Pop is not the best for health."  # type: ignore[attr-defined]
