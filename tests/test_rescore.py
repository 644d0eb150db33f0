"""Re-scoring when a spec's fingerprint changes: old results kept, new ones from the stored raw files."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.api import load_task
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.submissions import engines
from procbench.submissions.admin import apply, check_consistency
from procbench.submissions.engines import ENGINES, RescoreJob, RescoreResult, get_engine, run_job
from procbench.rescore import plan, rescore
from tests.test_submissions_support import (
    STRONG,
    TEMPLATE,
    openpi_spec_variant,
    query,
    submit_openpi,
)

cli = CliRunner()


def _with_repeats(folder: Path) -> Path:
    """A file that repeats a wrong prediction, so that dedup = true scores it differently."""
    records = [json.loads(line) for line in STRONG.read_text().splitlines()]
    for r in records:
        r["answers"] = [
            *r["answers"],
            *["colour of the moon was green before and blue afterwards"] * 3,
        ]
    path = folder / "repeats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture()
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A store with three submissions under today's spec, and a changed spec (dedup = true)."""
    db = tmp_path / "board.duckdb"
    ids = {}
    for path in (STRONG, TEMPLATE, _with_repeats(tmp_path)):
        ids[path.stem] = submit_openpi(db, path, model=path.stem).submission_id
    changed = openpi_spec_variant(
        tmp_path / "specs", old="params { dedup = false", new="params { dedup = true", name="openpi"
    )
    return db, changed, ids


def _board(db: Path) -> dict[str, float]:
    rows = query(
        db,
        "SELECT model, value FROM board WHERE metric = 'rouge_f1' AND slice = '' AND NOT is_reference",
    )
    return {m: v for m, v in rows}  # type: ignore[misc]


def test_rescore_keeps_old_results_and_the_board_shows_the_new_ones(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    db, changed, ids = setup
    old_board = _board(db)
    old_fp = query(db, "SELECT DISTINCT fingerprint FROM submissions")[0][0]
    report = rescore(db, changed, data_root=SAMPLE_DATA_ROOT)
    assert len(report.rescored) == 3 and report.failed == []
    new_fp = report.fingerprints["test"]
    assert new_fp != old_fp
    # old rows kept under their fingerprint, untouched
    assert query(db, "SELECT count(*) FROM submissions WHERE fingerprint = ?", [old_fp]) == [(3,)]
    new_board = _board(db)
    assert set(new_board) == set(old_board)
    # the new numbers are what the changed spec computes from the same file
    _, runner = load_task(changed)
    fresh = runner.evaluate(SAMPLE_DATA_ROOT, "test", STRONG.parent / "strong-model.jsonl")
    assert new_board["strong-model"] == pytest.approx(fresh.metrics["rouge_f1"])
    assert new_board["repeats"] != pytest.approx(old_board["repeats"])  # dedup changed it
    assert query(
        db,
        "SELECT origin_id FROM submissions WHERE fingerprint = ? AND model = 'repeats'",
        [new_fp],
    ) == [(ids["repeats"],)]
    assert query(db, "SELECT count(*) FROM board WHERE fingerprint = ?", [old_fp]) == [(0,)]
    assert query(
        db, "SELECT count(*) FROM submissions WHERE is_reference AND fingerprint = ?", [new_fp]
    ) != [(0,)]  # reloaded under the new fingerprint
    assert query(db, "SELECT count(*) FROM board WHERE is_reference") == [
        (0,)
    ]  # issue #16: reported on the real split, not shown over the samples
    assert check_consistency(db) == []


def test_rescore_twice_does_nothing_the_second_time(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    db, changed, _ = setup
    rescore(db, changed, data_root=SAMPLE_DATA_ROOT)
    n = query(db, "SELECT count(*) FROM submissions")[0][0]
    again = rescore(db, changed, data_root=SAMPLE_DATA_ROOT)
    assert again.rescored == [] and again.up_to_date == 3
    assert query(db, "SELECT count(*) FROM submissions")[0][0] == n


def test_hidden_and_deleted_submissions_stay_so_after_rescoring(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    db, changed, ids = setup
    apply(db, ids["template-guesser"], "hide")
    apply(db, ids["repeats"], "delete")
    report = rescore(db, changed, data_root=SAMPLE_DATA_ROOT)
    assert len(report.rescored) == 2  # a deleted submission is not re-scored
    assert set(_board(db)) == {"strong-model"}
    apply(db, ids["template-guesser"], "unhide")  # acts on the whole lineage
    assert set(_board(db)) == {"strong-model", "template-guesser"}


def test_a_file_the_new_spec_rejects_gets_a_failed_status_and_leaves_the_board(
    tmp_path: Path,
) -> None:
    db = tmp_path / "board.duckdb"
    sid = submit_openpi(db, STRONG).submission_id
    stricter = openpi_spec_variant(
        tmp_path / "specs",
        old="schema { id = str  answers = list(str) }",
        new="schema { id = str  answers = list(str)  confidence = float }",
        name="openpi",
    )
    report = rescore(db, stricter, data_root=SAMPLE_DATA_ROOT)
    assert (
        report.rescored == []
        and report.failed[0][0] == sid
        and "missing field 'confidence'" in report.failed[0][1]
    )
    history = query(
        db,
        "SELECT status, reason FROM status_history WHERE submission_id = ? ORDER BY changed_at",
        [sid],
    )
    assert history[-1][0] == "failed" and "missing field 'confidence'" in history[-1][1]  # type: ignore[operator]
    assert "the spec changed" in history[-1][1] and "procbench-raw-" not in history[-1][1]  # type: ignore[operator]  # issue #29: what differs, no scratch path
    # issue #29: a re-scoring that did not re-score every row leaves the board on the fingerprint it showed
    stored = query(
        db,
        "SELECT value FROM aggregates WHERE submission_id = ? AND metric = 'rouge_f1' AND slice = ''",
        [sid],
    )[0][0]
    assert _board(db) == {"m": pytest.approx(stored)}
    assert set(report.kept) == {"test"} and report.moved == {}


def test_cli_rescore(setup: tuple[Path, Path, dict[str, str]]) -> None:
    db, changed, _ = setup
    result = cli.invoke(
        app, ["rescore", str(changed), "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT)]
    )
    assert result.exit_code == 0, result.output
    assert "re-scored 3, already current 0, failed 0" in result.output
    unknown = cli.invoke(
        app,
        [
            "rescore",
            str(changed),
            "--engine",
            "nope",
            "--db",
            str(db),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert unknown.exit_code == 5 and "no re-scoring engine 'nope'" in unknown.output


def test_jobs_and_results_are_self_contained_and_picklable(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    """What a remote engine needs: jobs that survive pickling (raw bytes inline) and give the same result."""
    db, changed, _ = setup
    jobs, unplannable, fingerprints, _, _ = plan(
        db, changed, data_root=SAMPLE_DATA_ROOT, inline=True
    )
    assert len(jobs) == 3 and unplannable == []
    assert all(j.raw_path is None and j.raw_gzip for j in jobs)
    shipped = [pickle.loads(pickle.dumps(j)) for j in jobs]
    results = [pickle.loads(pickle.dumps(run_job(j))) for j in shipped]
    assert all(
        isinstance(r, RescoreResult) and r.ok and r.fingerprint == fingerprints["test"]
        for r in results
    )
    by_path, _, _, _, _ = plan(db, changed, data_root=SAMPLE_DATA_ROOT)
    assert sorted(run_job(j).aggregates for j in by_path) == sorted(r.aggregates for r in results)


def test_a_registered_engine_is_used_and_the_store_is_written_by_the_caller(
    setup: tuple[Path, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, changed, _ = setup
    seen: list[RescoreJob] = []

    def spy(jobs):  # type: ignore[no-untyped-def]
        seen.extend(jobs)
        return [run_job(pickle.loads(pickle.dumps(j))) for j in reversed(jobs)]  # any order

    monkeypatch.setitem(ENGINES, "spy", spy)
    assert get_engine("spy") is spy
    report = rescore(db, changed, data_root=SAMPLE_DATA_ROOT, engine="spy")
    assert len(seen) == 3 and len(report.rescored) == 3


def test_a_job_whose_raw_file_was_tampered_with_fails(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    db, changed, _ = setup
    jobs, _, _, _, _ = plan(db, changed, data_root=SAMPLE_DATA_ROOT)
    import gzip

    Path(jobs[0].raw_path).write_bytes(gzip.compress(b"tampered\n"))  # type: ignore[arg-type]
    result = run_job(jobs[0])
    assert not result.ok and "corrupt" in result.reason


def test_unknown_engine_names_are_not_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KeyError, match="available: local"):
        get_engine("os.path")
    assert "local" in engines.ENGINES


def test_the_model_card_follows_a_rescored_submission(tmp_path: Path) -> None:
    from procbench.submissions.details import ModelCard

    db = tmp_path / "board.duckdb"
    card = ModelCard(
        size_class="medium",
        weights="open",
        method_family="llm",
        paper_url="https://example.org/paper",
        code_url="https://example.org/code",
        description="a card",
    ).checked()
    origin = submit_openpi(db, STRONG, model="carded", card=card).submission_id
    changed = openpi_spec_variant(
        tmp_path / "specs", old="params { dedup = false", new="params { dedup = true", name="openpi"
    )
    rescore(db, changed, data_root=SAMPLE_DATA_ROOT)
    columns = "size_class, weights, method_family, paper_url, code_url, description"
    rows = query(
        db,
        f"SELECT {columns} FROM submissions WHERE submission_id = ? OR origin_id = ? ORDER BY created_at",
        [origin, origin],
    )
    assert len(rows) == 2 and rows[0] == rows[1] == (
        card.size_class,
        card.weights,
        card.method_family,
        card.paper_url,
        card.code_url,
        card.description,
    )
