"""The Upload page: live validation with line numbers, scoring through intake, the new rank; escaping."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from procbench.leaderboard import intake_form, ui
from procbench.paths import PROJECT_ROOT, SAMPLE_SUBMISSIONS_DIR
from tests.site_app import build_demo_store, page, private_copy

APP = str(PROJECT_ROOT / "leaderboard" / "app.py")
SAMPLE = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "site-upload")


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store (and its raw files) for a test that writes."""
    return private_copy(demo_db, tmp_path)


def upload_page(db: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("PROCBENCH_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["task"] = "openpi"
    at.query_params["split"] = "test"
    at.run()
    at.switch_page("site_pages/upload.py").run()
    assert not at.exception
    return at


def field(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    return next(t for t in at.text_input if t.label == label)


def count(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM submissions").fetchone()[0])


def test_invalid_file_gets_every_problem_with_its_line_and_stores_nothing(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = count(db)
    at = upload_page(db, monkeypatch)
    field(at, "Team").input("site-team")
    field(at, "Model name").input("broken")
    good_line = SAMPLE.read_text().splitlines()[0]
    at.file_uploader[0].upload(
        "broken.jsonl",
        f'{good_line}\n{{"id": "nope", "answers": []}}\nnot json\n'.encode(),
        "application/json",
    ).run()
    assert not at.exception
    problems = at.dataframe[0].value
    assert list(problems["Line"]) == [2, 3]
    assert "not an item" in problems["Problem"][0] and "JSON" in problems["Problem"][1]
    assert not at.button  # no Submit while the file is invalid
    assert count(db) == before


def test_valid_file_is_scored_stored_and_ranked(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = count(db)
    at = upload_page(db, monkeypatch)
    field(at, "Team").input("site-team")
    field(at, "Model name").input("uploaded-model")
    at.file_uploader[0].upload("mine.jsonl", SAMPLE.read_bytes(), "application/json").run()
    assert any("is valid: 22 prediction records" in s.value for s in at.success)
    at.button[0].click().run()
    assert not at.exception
    # the demo's three submissions and this one (a sample board shows no paper rows): the same file as the demo's second row,
    # so the same scores, and (issue #30: competition ranks, 1, 2, 2, 4) the same rank as that row, as the board shows it
    assert any("rank **#2** of 4" in s.value for s in at.success)
    board = page(db, monkeypatch, "board", task="openpi", split="test").dataframe[0].value
    assert sorted(board["Rank"].tolist()) == [1, 2, 2, 4]
    assert (
        board[board["Model"] == "uploaded-model"].iloc[0]["Rank"]
        == board[board["Model"] == "template-guesser"].iloc[0]["Rank"]
        == 2
    )
    assert at.get("progress")[0].proto.value == 100
    assert count(db) == before + 1
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute(
            "SELECT team, model FROM submissions WHERE model = 'uploaded-model'"
        ).fetchone()
    assert stored == ("site-team", "uploaded-model")
    links = {p.proto.label: p.proto for p in at.get("page_link")}
    assert (
        links["See it on the board"].page == "board"
        and "task=openpi" in links["See it on the board"].query_string
    )


def test_user_text_is_escaped_everywhere_it_reaches_markdown(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = "**bold** [x](https://evil.example/t.png) <img src=x onerror=alert(1)> `code`"
    placed = intake_form.send(
        db,
        task="openpi",
        split="test",
        path=SAMPLE,
        filename=SAMPLE.name,
        model=hostile,
        team="<script>t</script>",
    )
    assert placed.rank is not None
    monkeypatch.setenv("PROCBENCH_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["id"] = placed.submission_id
    at.run()
    at.switch_page("site_pages/submission.py").run()
    assert not at.exception
    rendered = (
        [h.value for h in at.header]
        + [c.value for c in at.caption]
        + [m.value for m in at.markdown]
    )
    assert ui.escape(hostile) in rendered[0]
    unescaped = re.compile(
        r"(?<!\\)(\]\(|<img|<script|\*\*)"
    )  # a link, raw HTML or emphasis markdown would act on
    for text in rendered:
        assert not unescaped.search(text), text
    # escaping is reversible by a markdown renderer: no character is lost
    assert ui.escape(hostile).replace("\\", "") == hostile.replace("\\", "")


# issue #17: the page validates through intake's own staging, so the live report and Submit agree.


def test_gzip_upload_is_valid_on_the_page_and_at_submit(db: Path, tmp_path: Path) -> None:
    import gzip

    packed = tmp_path / "mine.jsonl.gz"
    packed.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    report = intake_form.validate(db, "openpi", "test", packed, filename=packed.name)
    assert report.ok and report.n_records == 22, report
    placed = intake_form.send(
        db,
        task="openpi",
        split="test",
        path=packed,
        filename=packed.name,
        model="gz-model",
        team="gz-team",
    )
    assert placed.created and placed.rank is not None


def test_file_over_an_intake_limit_is_refused_on_the_page_and_at_submit(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.runners.runtime._types import InvalidPredictions

    assert SAMPLE.stat().st_size > 2048  # a valid file, larger than the limit set below
    monkeypatch.setenv("PROCBENCH_MAX_UPLOAD_MB", str(2048 / (1 << 20)))
    before = count(db)
    report = intake_form.validate(db, "openpi", "test", SAMPLE, filename=SAMPLE.name)
    assert not report.ok
    assert len(report.problems) == 1 and "upload limit" in report.problems[0].message
    with pytest.raises(InvalidPredictions) as refused:
        intake_form.send(
            db,
            task="openpi",
            split="test",
            path=SAMPLE,
            filename=SAMPLE.name,
            model="big-model",
            team="big-team",
        )
    assert [p.message for p in refused.value.problems] == [p.message for p in report.problems]
    assert count(db) == before


def test_file_name_refused_at_submit_is_not_valid_on_the_page(db: Path, tmp_path: Path) -> None:
    report = intake_form.validate(db, "openpi", "test", SAMPLE, filename="..")
    assert not report.ok and "plain name" in report.error
    with pytest.raises(ValueError, match="plain name"):
        intake_form.send(
            db, task="openpi", split="test", path=SAMPLE, filename="..", model="m", team="t"
        )
