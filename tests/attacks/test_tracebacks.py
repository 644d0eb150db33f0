"""Malformed input that used to end in a Python traceback: each is a message with the exit code the docs give
(README: 2 invalid file, 4 missing data; docs/submissions.md's table: 5 refused, 6 scoring failed)."""

from __future__ import annotations

import json
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.exit_codes import EXIT_INVALID_PREDICTIONS
from procbench.imports import ImportFailed, import_log
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT
from procbench.runners.runtime.runner import TaskRunner
from tests.site_app import build_demo_store, private_copy
from tests.test_import_inspect import _paradise_rows, paradise_eval_archive
from tests.test_import_lm_eval import _write, paradise_samples
from tests.test_submissions_support import STRONG, counts

DEEP = "[" * 5000 + "]" * 5000  # far past Python's recursion limit when decoded recursively


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"a traceback: {result.exception!r}"
    )
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _tampered_eval(tmp_path: Path, change: str) -> Path:
    """A valid PARADISE .eval log whose first sample has one field replaced by raw JSON text ``change`` ("key": value)."""
    rows = _paradise_rows()
    log = paradise_eval_archive(tmp_path / "ok.eval", [int(r["label"]) for r in rows])
    member = f"samples/{rows[0]['']}_epoch_1.json"
    key = change.split(":", 1)[0].strip().strip('"')
    out = tmp_path / "tampered.eval"
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == member:
                sample = {k: v for k, v in json.loads(data).items() if k != key}
                data = ("{" + change + ", " + json.dumps(sample)[1:]).encode()
            target.writestr(info, data)
    return out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ('"epoch": Infinity', "'epoch' must be a whole number from 1, got Infinity"),
        (
            '"epoch": "abc"',
            "'epoch' must be a whole number from 1, got \"abc\"",
        ),  # was exit 4 "missing data"
        ('"epoch": true', "'epoch' must be a whole number from 1, got true"),
        ('"error": "boom"', "failed in the run: boom"),
        ('"choices": 5', "'choices' is 5: not a list or null"),
        (
            '"output": {"choices": [{"message": "hi"}]}',
            None,
        ),  # a message that is not an object: no text, no crash
        ('"id": [1]', "'id' is [1]: not a string or a whole number"),
        ('"metadata": ' + DEEP, "nested more than 200 levels deep"),
    ],
)
def test_a_malformed_inspect_sample_is_a_problem_at_its_member(
    tmp_path: Path, change: str, message: str | None
) -> None:
    log = _tampered_eval(tmp_path, change)
    code, output = _cli(
        "import",
        "inspect",
        str(log),
        "--task",
        "paradise-warning",
        "--out",
        str(tmp_path / "out.jsonl"),
        "--split",
        "test",
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    if message is None:  # the scorer's stated answer still imports: what matters is no traceback
        assert code == 0
        return
    assert code == EXIT_INVALID_PREDICTIONS and not (tmp_path / "out.jsonl").exists()
    assert f"samples/{_paradise_rows()[0]['']}_epoch_1.json: " in output and message in output


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
INSPECT_KEYS = ("id", "epoch", "error", "choices", "output", "scores", "metadata", "target")
LM_EVAL_KEYS = ("doc_id", "doc", "arguments", "resps", "filtered_resps", "filter", "target")


def _read_or_refused(fmt: str, log: Path) -> None:
    try:
        import_log(fmt, log, "paradise-warning" if fmt == "inspect" else "paradise-tip")  # type: ignore[arg-type]
    except ImportFailed as exc:
        assert exc.problems


@given(st.dictionaries(st.sampled_from(INSPECT_KEYS), JSON, max_size=len(INSPECT_KEYS)))
def test_any_json_inspect_sample_is_read_or_refused_never_a_crash(sample: dict[str, Any]) -> None:
    """Whatever JSON a sample's fields hold (NaN and infinities included, as Python's json writes them), the reader
    returns outputs or raises ImportFailed listing the problems."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "log.json"
        log.write_text(json.dumps({"eval": {}, "samples": [{"id": 1, **sample}]}))
        _read_or_refused("inspect", log)


@given(st.dictionaries(st.sampled_from(LM_EVAL_KEYS), JSON, max_size=len(LM_EVAL_KEYS)))
def test_any_json_lm_eval_line_is_read_or_refused_never_a_crash(record: dict[str, Any]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "samples.jsonl"
        log.write_text(json.dumps({"doc_id": 0, "filtered_resps": [["x"]], **record}) + "\n")
        _read_or_refused("lm-eval", log)


def test_a_json_inspect_log_whose_samples_are_not_a_list(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"eval": {}, "samples": 5}))
    code, output = _cli(
        "import",
        "inspect",
        str(log),
        "--task",
        "paradise-warning",
        "--out",
        str(tmp_path / "out.jsonl"),
    )
    assert code == EXIT_INVALID_PREDICTIONS and "'samples' is int, not a list of samples" in output


def test_a_deeply_nested_lm_eval_line_is_a_problem_at_its_line(tmp_path: Path) -> None:
    rows = _paradise_rows()
    lines = paradise_samples([0] * len(rows), new_layout=True)
    log = _write(tmp_path / "samples.jsonl", lines)
    text = log.read_text().splitlines()
    text[2] = text[2][:-1] + ', "deep": ' + DEEP + "}"
    log.write_text("\n".join(text) + "\n")
    code, output = _cli(
        "import",
        "lm-eval",
        str(log),
        "--task",
        "paradise-tip",
        "--out",
        str(tmp_path / "out.jsonl"),
    )
    assert (
        code == EXIT_INVALID_PREDICTIONS
        and "line 3: the JSON is nested more than 200 levels deep" in output
    )


def test_score_partial_on_a_deeply_nested_file_is_a_message(tmp_path: Path) -> None:
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text('{"id": 1, "label": ' + DEEP + "}\n")
    code, output = _cli(
        "score",
        "paradise-warning",
        "--split",
        "test",
        "--predictions",
        str(predictions),
        "--partial",
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    assert (
        code == EXIT_INVALID_PREDICTIONS
        and len([line for line in output.splitlines() if line.startswith("error:")]) == 1
    )


def test_team_list_on_a_missing_store_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "nope.duckdb"
    code, output = _cli("team", "list", "--db", str(db))
    assert code == 5 and output.strip() == f"error: no procbench database at {db}"
    assert list(tmp_path.iterdir()) == []


def test_a_submission_past_the_scoring_time_limit_exits_6_as_the_docs_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/submissions.md: ScoringFailed (stage validate or score) exits 6; the time limit is such a failure."""
    db = tmp_path / "board.duckdb"
    release = threading.Event()
    original = TaskRunner.validate

    def slow(self: TaskRunner, *args: Any, **kwargs: Any) -> Any:
        release.wait(60)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(TaskRunner, "validate", slow)
    try:
        code, output = _cli(
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(STRONG),
            "--model",
            "m",
            "--team",
            "t",
            "--db",
            str(db),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            env={"PROCBENCH_MAX_SCORE_SECONDS": "0.25"},
        )
    finally:
        release.set()
    assert code == 6, output
    assert "longer than 0.25 seconds" in output and "receipt" in output
    if db.exists():
        assert counts(db)["submissions"] == 0


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "attack-upload")


def test_an_upload_named_dot_dot_is_refused_on_the_upload_page(
    demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = private_copy(demo_db, tmp_path)
    monkeypatch.setenv("PROCBENCH_DB", str(db))
    at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=120)
    at.query_params["task"] = "openpi"
    at.query_params["split"] = "test"
    at.run()
    at.switch_page("site_pages/upload.py").run()
    at.file_uploader[0].upload("..", STRONG.read_bytes(), "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("plain name" in e.value for e in at.error)
    assert not at.button  # nothing to submit
