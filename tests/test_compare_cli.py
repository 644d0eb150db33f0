"""``procbench compare`` and ``procbench.compare``: the site's paired bootstrap and approximate randomisation, anywhere.

Every number is held equal to what the site's own functions (leaderboard/analysis.py: ``bootstrap_of``, ``compare``,
``permutation_p``, ``pair_reasons``) give on the same store; errors are one line with their exit status; a hidden
split publishes nothing the board would not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

import procbench
from procbench.leaderboard import analysis, sitedata
from procbench import cli
from procbench.comparison import CompareError
from tests.site_app import build_demo_store, info_of
from tests.test_submissions_support import (
    NO_CHANGE,
    STRONG,
    dev_predictions,
    hidden_test_spec,
    submit_openpi,
    variant,
)

runner = CliRunner()


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "compare-demo")


@pytest.fixture
def floor_five(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample test split has 22 items, below the default interval floor of 30: an operator's floor of 5."""
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, "5")


def submitted(db: Path, task: str, split: str) -> list[str]:
    rows = sitedata.submissions_of(db, task, split)
    return [r["submission_id"] for r in rows.iter_rows(named=True) if not r["is_reference"]]


def reported(db: Path, task: str, split: str) -> str:
    rows = sitedata.submissions_of(db, task, split)
    return next(r["submission_id"] for r in rows.iter_rows(named=True) if r["is_reference"])


def site_view(
    db: Path,
    task: str,
    split: str,
    a: str,
    b: str,
    metric: str,
    slice_name: str = "",
    value: str = "",
) -> dict[str, Any]:
    """What the site's Compare page computes for one row of its table (its own functions, its own caches)."""
    info = info_of(db, task, split)
    sl = info.slice(slice_name) if slice_name else None
    result = analysis.compare(
        analysis.bootstrap_of(db, info, a, sl, value, metric),
        analysis.bootstrap_of(db, info, b, sl, value, metric),
        metric,
    )
    rows = {
        r["submission_id"]: r
        for r in sitedata.submissions_of(db, task, split).iter_rows(named=True)
    }
    sides = [(a, bool(rows[a]["is_reference"])), (b, bool(rows[b]["is_reference"]))]
    reasons = [] if result else analysis.pair_reasons(db, info, metric, sides, sl, value)
    figures = sitedata.figures(db, task, split, [a, b], metric)
    lookup = {
        (r["submission_id"], r["slice"], r["slice_value"]): r["value"]
        for r in figures.iter_rows(named=True)
    }
    return {
        "result": result,
        "reasons": reasons,
        "a": lookup[(a, slice_name, value)],
        "b": lookup[(b, slice_name, value)],
    }


def test_the_api_gives_the_sites_numbers_on_every_pair_and_metric(
    demo_db: Path, floor_five: None
) -> None:
    info = info_of(demo_db, "openpi", "test")
    ids = submitted(demo_db, "openpi", "test")
    assert len(ids) >= 3
    for a, b in [(ids[0], ids[1]), (ids[1], ids[2]), (ids[2], ids[0])]:
        for metric in [m.name for m in info.metrics][:4]:
            ours = procbench.compare(a, b, metric=metric, db=demo_db, permutation=False)
            site = site_view(demo_db, "openpi", "test", a, b, metric)
            result = site["result"]
            assert result is not None
            assert (ours.ci_low, ours.ci_high, ours.p_value, ours.n_items) == (
                result.low,
                result.high,
                result.p_value,
                result.n_items,
            )
            assert (ours.a.value, ours.b.value) == (site["a"], site["b"])
            assert ours.verdict == (
                "tied" if result.tied else ("A better" if result.low > 0 else "B better")
            )
            assert ours.reasons == ()


def test_the_permutation_p_value_is_the_sites(demo_db: Path, floor_five: None) -> None:
    a, b = submitted(demo_db, "openpi", "test")[:2]
    ours = procbench.compare(a, b, db=demo_db)
    site = analysis.permutation_p(
        "openpi", analysis.items_of(demo_db, a), analysis.items_of(demo_db, b), ours.metric
    )
    assert ours.p_permutation is not None and ours.p_permutation == site
    assert 1 / 1001 <= ours.p_permutation <= 1.0  # (#{|d'| >= |d|} + 1) / (B + 1)


def test_a_slice_value_gives_the_sites_numbers_and_reasons(demo_db: Path) -> None:
    info = info_of(demo_db, "openpi", "test")
    sl = next(s for s in info.slices if s.per_item)
    a, b = submitted(demo_db, "openpi", "test")[:2]
    values = (
        sitedata.figures(demo_db, "openpi", "test", [a], info.primary)
        .filter(lambda_slice(sl.name))["slice_value"]
        .to_list()
    )
    assert values
    for value in values[:3]:
        ours = procbench.compare(a, b, slice=f"{sl.name}={value}", db=demo_db, permutation=False)
        site = site_view(demo_db, "openpi", "test", a, b, info.primary, sl.name, value)
        assert site["result"] is None  # a few items a slice value: below the default floor of 30
        assert list(ours.reasons) == site["reasons"] and ours.verdict == "not tested"
        assert (
            ours.ci_low is None and ours.p_value is None and ours.p_permutation is None
        )  # no test over so few items
        assert (ours.a.value, ours.b.value) == (site["a"], site["b"])


def lambda_slice(name: str):
    import polars as pl

    return pl.col("slice") == name


def test_too_few_items_at_the_default_floor(demo_db: Path) -> None:
    a, b = submitted(demo_db, "openpi", "test")[:2]
    ours = procbench.compare(a, b, db=demo_db, permutation=False)
    assert (
        list(ours.reasons)
        == site_view(demo_db, "openpi", "test", a, b, ours.metric)["reasons"]
        == [analysis.too_few_items(22)]
    )


def test_cli_text_and_json(demo_db: Path, floor_five: None) -> None:
    a, b = submitted(demo_db, "openpi", "test")[:2]
    out = runner.invoke(
        cli.app, ["compare", a, b, "--db", str(demo_db), "--json", "--metric", "rouge_f1"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    api = procbench.compare(a, b, metric="rouge_f1", db=demo_db)
    assert data == json.loads(api.to_json())
    assert {
        "a",
        "b",
        "delta",
        "ci_low",
        "ci_high",
        "p_value",
        "p_permutation",
        "verdict",
        "reasons",
        "n_items",
    } <= set(data)
    text = runner.invoke(
        cli.app, ["compare", a, b, "--db", str(demo_db), "--metric", "rouge_f1", "--no-permutation"]
    )
    assert text.exit_code == 0
    assert (
        "A − B" in text.stdout
        and "95% CI of A − B" in text.stdout
        and "paired bootstrap p" in text.stdout
    )
    assert "approximate randomisation" not in text.stdout
    words = "cannot be separated" if api.verdict == "tied" else "is better than"
    assert (
        words in text.stdout and "paired bootstrap over items (1000 resamples, seed" in text.stdout
    )
    assert f"{api.ci_low * 100:.2f} – {api.ci_high * 100:.2f}" in text.stdout  # type: ignore[operator]


def one_line_error(result, code: int, *words: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(w in lines[0] for w in words), lines[0]


def test_errors_are_one_line_with_distinct_statuses(demo_db: Path, tmp_path: Path) -> None:
    a, b = submitted(demo_db, "openpi", "test")[:2]
    other = submitted(demo_db, "paged", "dev")[0]
    one_line_error(
        runner.invoke(cli.app, ["compare", a, "no-such-id", "--db", str(demo_db)]),
        5,
        "no submission",
    )
    one_line_error(
        runner.invoke(cli.app, ["compare", a, other, "--db", str(demo_db)]), 7, "different tasks"
    )
    one_line_error(
        runner.invoke(cli.app, ["compare", a, b, "--metric", "nope", "--db", str(demo_db)]),
        2,
        "no metric",
        "rouge_f1",
    )
    one_line_error(
        runner.invoke(cli.app, ["compare", a, b, "--slice", "nope=1", "--db", str(demo_db)]),
        2,
        "no slice",
    )
    one_line_error(
        runner.invoke(cli.app, ["compare", a, b, "--slice", "nodash", "--db", str(demo_db)]),
        2,
        "DIM=VALUE",
    )
    one_line_error(
        runner.invoke(cli.app, ["compare", a, b, "--db", str(tmp_path / "absent.duckdb")]),
        4,
        "no database",
    )
    one_line_error(
        runner.invoke(cli.app, ["compare", a, "x\x1b[2Jy" * 100, "--db", str(demo_db)]), 5
    )
    assert (
        "\x1b"
        not in runner.invoke(cli.app, ["compare", a, "x\x1b[2Jy", "--db", str(demo_db)]).stderr
    )
    with pytest.raises(CompareError) as caught:
        procbench.compare(a, other, db=demo_db)
    assert caught.value.kind == "different"


def test_different_fingerprints_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "two.duckdb"
    hidden = submit_openpi(
        db, STRONG, spec_file=hidden_test_spec(tmp_path), split="test"
    ).submission_id  # another fingerprint
    public = submit_openpi(db, NO_CHANGE).submission_id
    one_line_error(
        runner.invoke(cli.app, ["compare", hidden, public, "--db", str(db)]),
        7,
        "different fingerprints",
    )


def test_a_hidden_split_publishes_nothing_the_board_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, "5")
    db = tmp_path / "hidden.duckdb"
    spec = hidden_test_spec(
        tmp_path, "dev"
    )  # the sample dev split: 4 items, so every slice value has fewer than 5
    gold = dev_predictions(tmp_path)
    a, b = (
        submit_openpi(db, path, spec_file=spec, split="dev", model=path.stem).submission_id
        for path in (gold, variant(tmp_path / "v", 1, gold))
    )
    whole = procbench.compare(a, b, db=db)
    assert (
        whole.hidden_split and whole.a.value is not None
    )  # the whole split's figures are public ...
    assert (
        whole.ci_low is None
        and whole.p_value is None
        and whole.reasons == (analysis.too_few_items(4),)
    )  # ... a test over 4 items is not
    with duckdb.connect(str(db), read_only=True) as con:
        small = con.execute(
            "SELECT slice, slice_value FROM aggregates WHERE submission_id = ? AND slice <> '' LIMIT 1",
            [a],
        ).fetchone()
        item_ids = [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT item_id FROM item_scores WHERE submission_id = ?", [a]
            ).fetchall()
        ]
    assert small is not None and item_ids  # the store keeps them; the board does not show them
    refused = runner.invoke(
        cli.app, ["compare", a, b, "--slice", f"{small[0]}={small[1]}", "--db", str(db), "--json"]
    )
    one_line_error(refused, 2, "shows no", "fewer than 5 items")
    assert refused.stdout == ""  # no figure of a slice the board hides
    printed = runner.invoke(cli.app, ["compare", a, b, "--db", str(db), "--json"])
    assert printed.exit_code == 0 and not any(
        f'"{item}"' in printed.stdout for item in item_ids
    )  # never an item


def test_a_row_off_the_board_is_refused(demo_db: Path) -> None:
    """The sample demo's papers' rows are not on its board (they report the real test split): nothing of them is compared."""
    a = submitted(demo_db, "paradise-tip", "test")[0]
    with duckdb.connect(str(demo_db), read_only=True) as con:
        paper = con.execute(
            "SELECT submission_id FROM submissions WHERE task = 'paradise-tip' AND is_reference LIMIT 1"
        ).fetchone()[0]  # type: ignore[index]
    one_line_error(
        runner.invoke(cli.app, ["compare", a, paper, "--db", str(demo_db)]),
        7,
        "not on the paradise-tip / test board",
    )


def test_the_same_submission_twice(demo_db: Path) -> None:
    a = submitted(demo_db, "openpi", "test")[0]
    same = procbench.compare(a, a, db=demo_db)
    assert (
        same.delta == 0
        and same.verdict == "not tested"
        and same.reasons == ("A and B are the same submission",)
    )


@pytest.fixture(scope="module")
def real_db(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """The board `make leaderboard` builds from the real data (papers' rows, upstream PM-LLM verdicts), without the model baselines."""
    from procbench.demo import build_board

    db = tmp_path_factory.mktemp("compare-real") / "real.duckdb"
    assert build_board(db, data_root=data_root, log=lambda _: None) > 10
    return db


def test_real_data_pm_llm_restricted_metric_equals_the_site(real_db: Path) -> None:
    """PM-LLM's text-only Score (a measure's ``where``) on the real board: over its items only, as the site bootstraps it."""
    a, b = submitted(real_db, "pm-llm-benchmark", "main")[:2]
    info = info_of(real_db, "pm-llm-benchmark", "main")
    for metric in ("score", "total"):
        ours = procbench.compare(a, b, metric=metric, db=real_db)
        site = site_view(real_db, "pm-llm-benchmark", "main", a, b, metric)
        result = site["result"]
        assert result is not None  # 57 questions (and the text ones) clear the floor of 30
        assert (ours.ci_low, ours.ci_high, ours.p_value, ours.n_items) == (
            result.low,
            result.high,
            result.p_value,
            result.n_items,
        )
        assert (ours.a.value, ours.b.value) == (site["a"], site["b"])
        items = analysis.items_of(real_db, a), analysis.items_of(real_db, b)
        assert ours.p_permutation is not None and ours.p_permutation == analysis.permutation_p(
            info.task, *items, metric
        )
    assert (
        procbench.compare(a, b, metric="score", db=real_db).n_items
        < procbench.compare(a, b, metric="total", db=real_db).n_items
    )  # type: ignore[operator]
    uncovered = procbench.compare(
        a, b, metric="score", slice="modality=vision", db=real_db, permutation=False
    )
    assert (
        uncovered.verdict == "not tested" and "modality = text" in uncovered.reasons[0]
    )  # the site leaves such a row out


def test_a_reported_row_says_why_in_the_boards_words(real_db: Path) -> None:
    a = submitted(real_db, "paradise-tip", "test")[0]
    paper = reported(real_db, "paradise-tip", "test")  # a paper's row of the primary metric
    ours = procbench.compare(a, paper, db=real_db, permutation=False)
    site = site_view(real_db, "paradise-tip", "test", a, paper, ours.metric)
    assert list(ours.reasons) == site["reasons"] == [analysis.NO_ITEMS_REPORTED]
    assert (
        ours.verdict == "not tested"
        and ours.p_permutation is None
        and ours.delta == pytest.approx(site["a"] - site["b"])
    )
