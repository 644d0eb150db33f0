"""Issue #34: contamination marks on model cards, who ran a row and who judged it, on the board and the model page.

Real intake on the bundled samples (OpenPI; PM-LLM with a local fake judge on 127.0.0.1, never the network),
the site driven by AppTest, and a re-scoring whose board judge is not configured.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from procbench.leaderboard import ui
from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.rescore import rescore
from procbench.submissions import SubmissionRefused, SubmissionRequest, judging, store, submit
from procbench.submissions.details import CONTAMINATION, DetailError, ModelCard
from tests.site_app import page
from tests.test_pmllm_judge import FakeJudge, _server, _started, _stop, always
from tests.test_store_migrations import _version_1
from tests.test_submissions_support import (
    NO_CHANGE,
    STRONG,
    TEMPLATE,
    dev_predictions,
    query,
    submit_openpi,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
LEAK = "https://example.org/openpi-in-pretraining"
PMLLM_SAMPLES = SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark"
JUDGE_MODEL = "board-judge-x"


# -- the card ----------------------------------------------------------------------------------------


def test_the_card_takes_a_contamination_mark_and_its_source() -> None:
    card = ModelCard(contamination=" Confirmed ", contamination_source=f"  {LEAK} ").checked()
    assert (card.contamination, card.contamination_source) == ("confirmed", LEAK)
    assert ModelCard().checked().contamination == "unknown"  # not stated, unless the submitter says
    with pytest.raises(
        DetailError, match="contamination must be one of unknown, none, suspected, confirmed"
    ):
        ModelCard(contamination="maybe").checked()
    with pytest.raises(DetailError, match="longer than 500"):
        ModelCard(contamination_source="x" * 501).checked()


@given(
    st.text(max_size=40),
    st.sampled_from(["\n", "\x1b", "\u202e", "\u200b", "\r"]),
    st.text(max_size=40),
)
def test_a_contamination_source_is_one_line_of_visible_text(
    before: str, bad: str, after: str
) -> None:
    with pytest.raises(DetailError, match="one line of visible text"):
        ModelCard(contamination="suspected", contamination_source=before + bad + after).checked()


# -- the store ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def openpi_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("marks")
    db = folder / "board.duckdb"
    submit_openpi(
        db,
        STRONG,
        team="acme",
        model="leaky",
        card=ModelCard(contamination="confirmed", contamination_source=LEAK),
    )
    submit_openpi(
        db,
        dev_predictions(folder),
        split="dev",
        team="acme",
        model="leaky",
        card=ModelCard(contamination="none"),
    )  # the card is per row
    submit_openpi(
        db,
        TEMPLATE,
        team="board",
        model="baseline",
        run_by="operator",
        card=ModelCard(contamination="none"),
    )
    submit_openpi(db, NO_CHANGE, team="beta", model="plain")
    return db


def test_intake_stores_the_mark_and_who_ran_the_model(openpi_db: Path) -> None:
    rows = query(
        openpi_db,
        "SELECT model, split, contamination, contamination_source, run_by, judge_prompt_digest FROM submissions ORDER BY model, split",
    )
    assert rows == [
        ("baseline", "test", "none", "", "operator", ""),
        ("leaky", "dev", "none", "", "submitter", ""),
        ("leaky", "test", "confirmed", LEAK, "submitter", ""),
        ("plain", "test", "unknown", "", "submitter", ""),
    ]


@pytest.mark.parametrize("claimed", ["paper", "unknown", "board"])
def test_a_submission_cannot_claim_to_be_a_papers_row(tmp_path: Path, claimed: str) -> None:
    db = tmp_path / "board.duckdb"
    with pytest.raises(SubmissionRefused, match="run_by must be submitter or operator"):
        submit_openpi(db, STRONG, run_by=claimed)
    assert not db.exists()


def test_migration_009_marks_old_rows_unknown_and_papers_rows_paper(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    _version_1(db)
    con = duckdb.connect(str(db))
    con.execute(
        "INSERT INTO submissions (submission_id, task, split, fingerprint, team, model, content_sha256, metadata_json, n_items, created_at,"
        " is_reference) SELECT 'ref1', task, split, fingerprint, 'reference', 'paper-model', 'r', '{}', 0, created_at, TRUE FROM submissions"
    )
    con.close()
    with store.writer(db):
        pass
    rows = query(
        db, "SELECT submission_id, contamination, run_by FROM submissions ORDER BY submission_id"
    )
    assert rows == [("old1", "unknown", "unknown"), ("ref1", "unknown", "paper")]


# -- the board and the model page --------------------------------------------------------------------


def _table(at: AppTest) -> pl.DataFrame:
    return pl.from_pandas(at.dataframe[0].value)


def test_the_board_marks_a_contaminated_row_beside_the_model(
    openpi_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(openpi_db, monkeypatch, "board", task="openpi", split="test")
    shown = _table(at)
    order = list(at.dataframe[0].proto.column_order)
    assert (
        order.index("Contamination") == order.index("Model") + 1
    )  # shown without the bookkeeping columns, beside the model: a row is marked
    assert dict(zip(shown["Model"], shown["Contamination"])) == {
        "leaky": f"confirmed ({LEAK})",
        "baseline": "none known",
        "plain": "not stated",
    }
    details = _table(
        page(openpi_db, monkeypatch, "board", task="openpi", split="test", details="true")
    )
    assert dict(zip(details["Model"], details["Run by"])) == {
        "leaky": "the submitter",
        "baseline": "the board's operator",
        "plain": "the submitter",
    }


def test_the_board_filters_on_contamination_and_on_who_ran_the_model(
    openpi_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(
        openpi_db,
        monkeypatch,
        "board",
        task="openpi",
        split="test",
        contamination=["none known", "not stated"],
    )
    assert sorted(_table(at)["Model"]) == ["baseline", "plain"]
    assert (
        "Contamination" not in at.dataframe[0].proto.column_order
    )  # nothing marked in this view: the column is a bookkeeping one again
    operator = _table(
        page(
            openpi_db, monkeypatch, "board", task="openpi", split="test", ran="the board's operator"
        )
    )
    assert operator["Model"].to_list() == ["baseline"]
    # a value the board does not have is named, and the view is the whole board
    at = page(openpi_db, monkeypatch, "board", task="openpi", split="test", contamination="leaked")
    assert sorted(_table(at)["Model"]) == ["baseline", "leaky", "plain"]


def test_the_model_page_marks_and_filters_contaminated_rows(
    openpi_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(openpi_db, monkeypatch, "model", model="leaky")
    assert _table(at).select("Board", "Contamination").rows() == [
        ("openpi · dev", "none known"),
        ("openpi · test", f"confirmed ({LEAK})"),
    ]
    assert [w.value for w in at.warning if "possibly contaminated" in w.value] == [
        "1 row of this model is marked as possibly contaminated (the model card says the model saw the benchmark's data): "
        + ui.escape(f"openpi · test: confirmed ({LEAK})")  # stored text reaches markdown escaped
    ]
    filtered = page(openpi_db, monkeypatch, "model", model="leaky", contamination="none known")
    assert _table(filtered)["Board"].to_list() == ["openpi · dev"] and not filtered.warning
    assert not page(openpi_db, monkeypatch, "model", model="plain").warning


# -- who judged: the board's judge, the submitter, nobody ---------------------------------------------


def _expected_digest(spec_file: str | Path, cot: bool) -> str:
    """The documented formula, from the spec's own template texts: sha256 of judge, judge_image, cot=..., joined by U+001F."""
    spec, _ = load_task(spec_file)
    parts = [
        next(t.text for t in spec.templates if t.name == name) for name in ("judge", "judge_image")
    ] + [f"cot={cot}"]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


@pytest.fixture
def judge_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[], None]]:
    """A fake board judge answering 4.0; yields a function that configures it for intake."""
    servers: list[ThreadingHTTPServer] = []
    url = _started(_server(FakeJudge(always("4.0"))), servers)

    def configure() -> None:
        monkeypatch.setenv(judging.ENV_URL, url)
        monkeypatch.setenv(judging.ENV_MODEL, JUDGE_MODEL)
        monkeypatch.setenv(judging.ENV_CACHE, str(tmp_path / "judge-cache"))

    for name in (
        judging.ENV_URL,
        judging.ENV_MODEL,
        judging.ENV_KEY,
        judging.ENV_CACHE,
        judging.ENV_TIMEOUT,
    ):
        monkeypatch.delenv(name, raising=False)
    yield configure
    _stop(servers)


def _pmllm(
    db: Path,
    path: Path,
    model: str,
    team: str,
    spec_file: str | Path = "pm-llm-benchmark",
    **options: Any,
) -> Any:
    spec, runner = load_task(spec_file)
    request = SubmissionRequest(split="main", predictions=path, model=model, team=team, **options)
    return submit(request, spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db)


@pytest.fixture
def judged_db(
    tmp_path: Path, judge_url: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> Path:
    if not (PMLLM_SAMPLES / "acme-large.jsonl").is_file():
        pytest.skip("the PM-LLM sample submissions are not shipped here")
    monkeypatch.setenv("PROCBENCH_MIN_INTERVAL_ITEMS", "5")
    db = tmp_path / "judged.duckdb"
    _pmllm(
        db, PMLLM_SAMPLES / "acme-large.jsonl", "own-verdicts", "t1"
    )  # the file's verdicts: self-judged
    unjudged = tmp_path / "unjudged.jsonl"
    unjudged.write_text(json.dumps({"id": "cat01_01_case_grouping", "answer": ""}) + "\n")
    _pmllm(db, unjudged, "no-verdicts", "t2")
    judge_url()
    _pmllm(
        db,
        PMLLM_SAMPLES / "acme-large.jsonl",
        "board-graded",
        "t3",
        run_by="operator",
        metadata={"cot": True},
    )
    for name in (judging.ENV_URL, judging.ENV_MODEL):
        monkeypatch.delenv(name)
    return db


def test_a_board_judged_row_records_the_judges_model_and_prompt_digest(judged_db: Path) -> None:
    stored = query(judged_db, "SELECT model, metadata_json, judge_prompt_digest FROM submissions")
    rows = {m: (json.loads(str(meta)).get("judge", ""), d) for m, meta, d in stored}
    assert rows == {
        "own-verdicts": ("self", ""),
        "no-verdicts": ("", ""),
        "board-graded": (JUDGE_MODEL, _expected_digest("pm-llm-benchmark", True)),
    }
    assert _expected_digest("pm-llm-benchmark", True) != _expected_digest("pm-llm-benchmark", False)


def test_the_board_filters_on_who_judged_and_the_submission_page_names_the_judge(
    judged_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facets = {
        "the board's judge": ["board-graded"],
        "self-judged": ["own-verdicts"],
        "no judge": ["no-verdicts"],
    }
    for word, models in facets.items():
        assert (
            _table(
                page(
                    judged_db,
                    monkeypatch,
                    "board",
                    task="pm-llm-benchmark",
                    split="main",
                    judged=word,
                )
            )["Model"].to_list()
            == models
        )
    sid = query(judged_db, "SELECT submission_id FROM submissions WHERE model = 'board-graded'")[0][
        0
    ]
    at = page(judged_db, monkeypatch, "submission", id=str(sid))
    digest = _expected_digest("pm-llm-benchmark", True)
    assert any(
        f"the board's judge `{JUDGE_MODEL}`, prompts sha256 `{digest[:16]}`" in c.value
        for c in at.caption
    )


def test_rescore_without_the_board_judge_keeps_the_old_verdicts_and_says_so(
    judged_db: Path,
    judge_url: Callable[[], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The judge's prompt changes (a new fingerprint); without the judge the board-judged row is not re-scored from the
    file's own verdicts: it fails with a reason that says its verdicts are kept, and the board keeps showing it as it was."""
    text = (SPECS_DIR / "pm-llm-benchmark.spec").read_text(encoding="utf-8")
    old = "Please put the grade at the beginning of the response."
    assert old in text
    folder = tmp_path / "specs"
    folder.mkdir()
    changed = folder / "pm-llm-benchmark.spec"
    changed.write_text(text.replace(old, "Put the grade first.", 1), encoding="utf-8")
    before = query(
        judged_db,
        "SELECT b.model, b.value FROM board b WHERE b.slice = '' AND b.metric = 'score' ORDER BY model",
    )
    origin = query(judged_db, "SELECT submission_id FROM submissions WHERE model = 'board-graded'")[
        0
    ][0]

    report = rescore(judged_db, changed, data_root=SAMPLE_DATA_ROOT)
    assert [sid for sid, _ in report.failed] == [origin]
    reason = report.failed[0][1]
    assert (
        f"re-scoring needs that judge ({judging.ENV_URL} and {judging.ENV_MODEL}={JUDGE_MODEL})"
        in reason
    )
    assert "the stored row keeps the verdicts it was scored with" in reason
    assert "main" in report.kept and not report.moved
    assert (
        query(
            judged_db,
            "SELECT b.model, b.value FROM board b WHERE b.slice = '' AND b.metric = 'score' ORDER BY model",
        )
        == before
    )
    history = query(
        judged_db,
        "SELECT status, reason FROM status_history WHERE submission_id = ? ORDER BY changed_at, rowid",
        [origin],
    )
    assert history[-1][0] == "failed" and "keeps the verdicts" in str(history[-1][1])

    judge_url()  # with the judge: re-graded under the new prompts, which the new row's digest names
    again = rescore(judged_db, changed, data_root=SAMPLE_DATA_ROOT)
    assert again.failed == [] and again.moved
    new = query(
        judged_db,
        "SELECT judge_prompt_digest, run_by FROM submissions WHERE origin_id = ? AND submission_id <> ?",
        [origin, origin],
    )
    assert new == [(_expected_digest(changed, True), "operator")]
    assert _expected_digest(changed, True) != _expected_digest("pm-llm-benchmark", True)


def test_contamination_values_are_the_documented_ones() -> None:
    assert CONTAMINATION == ("unknown", "none", "suspected", "confirmed")
