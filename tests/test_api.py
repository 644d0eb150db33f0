"""The Python API mirrors the CLI: ``procbench.check``, ``fetch``, ``score`` and ``submit`` on real specs and files."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

import procbench
from procbench.cli import app
from procbench.data import FetchError
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime._types import InvalidPredictions

STRONG = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl"


def test_score_returns_what_the_cli_prints() -> None:
    result = procbench.score("paradise-tip", STRONG, split="test", data_dir=SAMPLE_DATA_ROOT)
    printed = json.loads(
        CliRunner()
        .invoke(
            app,
            [
                "score",
                "paradise-tip",
                "--split",
                "test",
                "--predictions",
                str(STRONG),
                "--data-dir",
                str(SAMPLE_DATA_ROOT),
                "--json",
            ],
        )
        .stdout
    )
    assert (
        result.metrics == printed["metrics"]
        and result.fingerprint == printed["fingerprint"]
        and result.n_items == printed["n_items"]
    )


def _rows(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM submissions").fetchone()[0]  # type: ignore[index]


def test_submit_stores_once_and_refuses_invalid_files(tmp_path: Path) -> None:
    db = tmp_path / "board.duckdb"
    first = procbench.submit(
        "paradise-tip",
        STRONG,
        split="test",
        model="strong",
        team="api",
        db=db,
        data_dir=SAMPLE_DATA_ROOT,
    )
    again = procbench.submit(
        "paradise-tip",
        STRONG,
        split="test",
        model="strong",
        team="api",
        db=db,
        data_dir=SAMPLE_DATA_ROOT,
    )
    assert first.created and not again.created and first.submission_id == again.submission_id
    assert (
        first.evaluation.metrics["accuracy"]
        == procbench.score("paradise-tip", STRONG, split="test", data_dir=SAMPLE_DATA_ROOT).metrics[
            "accuracy"
        ]
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0, "label": 9}\n')
    with pytest.raises(InvalidPredictions, match="label must be an integer 0-3"):
        procbench.submit(
            "paradise-tip",
            bad,
            split="test",
            model="bad",
            team="api",
            db=db,
            data_dir=SAMPLE_DATA_ROOT,
        )
    assert _rows(db) == 1


def test_check_reports_like_the_cli(tmp_path: Path) -> None:
    results = procbench.check()
    assert {c.task for c in results} == {
        p.stem for p in (PROJECT_ROOT / "specs").glob("*.spec")
    } and all(c.ok for c in results)
    broken = (
        tmp_path / "paradise-reverse-tip.spec"
    )  # named as its task: a task is named after its file
    broken.write_text(
        (PROJECT_ROOT / "specs" / "paradise-reverse-tip.spec")
        .read_text()
        .replace("primary     = accuracy", "primary     = acuracy", 1)
    )
    (report,) = procbench.check(broken)
    assert not report.ok and report.task is None
    assert (
        len(report.errors) == 1
        and report.errors[0].startswith(f"{broken}:")
        and "unknown metric 'acuracy'" in report.errors[0]
    )
    (with_data,) = procbench.check("paradise-tip", data=True, data_dir=SAMPLE_DATA_ROOT)
    assert with_data.ok and "test" in with_data.data_checked


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined, assignment]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    httpd.shutdown()
    httpd.server_close()


def _spec_with_fetch(folder: Path, url: str, content: bytes, sha256: str | None = None) -> Path:
    """paradise-reverse-tip fetching from ``url`` (a folder), with a lock beside it holding ``content``'s digest."""
    from procbench.dsl.lock import lock_text

    text = (PROJECT_ROOT / "specs" / "paradise-reverse-tip.spec").read_text()
    start = text.index("  fetch {")
    end = text.index("  }\n", start) + 4
    block = f'  fetch {{\n    url   = "{url}/"\n    into  = "paradise/src/data/rq_variations/rq4/"\n    files = ["reverse_tip_test.csv"]\n  }}\n'
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "paradise-reverse-tip.spec"
    spec.write_text(text[:start] + block + text[end:])
    lock = json.loads((PROJECT_ROOT / "specs" / "paradise-reverse-tip.lock").read_text())
    (entry,) = lock["files"]
    entry.update(
        url=f"{url}/reverse_tip_test.csv",
        size=len(content),
        sha256=sha256 or hashlib.sha256(content).hexdigest(),
    )
    (folder / "paradise-reverse-tip.lock").write_text(lock_text(lock))
    return spec


def test_fetch_then_score_from_the_fetched_root(
    tmp_path: Path, file_server: tuple[str, Path]
) -> None:
    url, served = file_server
    content = (
        SAMPLE_DATA_ROOT / "paradise/src/data/rq_variations/rq4/reverse_tip_test.csv"
    ).read_bytes()
    (served / "reverse_tip_test.csv").write_bytes(content)
    spec = _spec_with_fetch(tmp_path, url, content)

    (result,) = procbench.fetch(str(spec), to=tmp_path / "data", cache_dir=tmp_path / "cache")
    assert result.source == "downloaded" and result.path.read_bytes() == content
    assert (
        procbench.fetch(str(spec), to=tmp_path / "data", cache_dir=tmp_path / "cache")[0].source
        == "present"
    )
    scored = procbench.score(
        spec,
        SAMPLE_SUBMISSIONS_DIR / "paradise-reverse-tip" / "sample-strong.jsonl",
        split="test",
        data_dir=tmp_path / "data",
    )
    assert scored.n_items == content.count(b"\n") - 1

    tampered = _spec_with_fetch(tmp_path / "tampered", url, content, sha256="f" * 64)
    with pytest.raises(FetchError, match="reverse_tip_test.csv: .*not put in place"):
        procbench.fetch(str(tampered), to=tmp_path / "other", cache_dir=tmp_path / "cache2")
    assert not (
        tmp_path / "other/paradise/src/data/rq_variations/rq4/reverse_tip_test.csv"
    ).exists()


# -- the names a notebook imports (issue #33) ----------------------------------------------------------

EXCEPTIONS = {
    "CompareError",
    "DataRefused",
    "FetchError",
    "GoldDataError",
    "InvalidPredictions",
    "MissingData",
    "MissingExtra",
    "RejectedPredictions",
    "ScoringFailed",
    "SpecError",
    "SubmissionRefused",
}


def test_every_api_name_is_exported_listed_and_lazy() -> None:
    import subprocess
    import sys

    from procbench.dsl.datacheck import DataRefused
    from procbench.submissions import errors

    assert procbench.__all__ == sorted(
        procbench._HOMES
    )  # the literal list and the lazy table agree
    assert {
        "score",
        "submit",
        "compare",
        "load_task",
        "check",
        "fetch",
        "ScoreResult",
        "SubmitResult",
        "Comparison",
        "SpecCheck",
    } <= set(procbench.__all__)
    assert EXCEPTIONS <= set(procbench.__all__) and set(procbench.__all__) <= set(dir(procbench))
    for name in EXCEPTIONS:
        assert issubclass(getattr(procbench, name), Exception), name
    # the classes the modules raise, not copies: `except procbench.X` catches them
    assert (
        procbench.SubmissionRefused is errors.SubmissionRefused
        and procbench.InvalidPredictions is InvalidPredictions
    )
    assert procbench.DataRefused is DataRefused and procbench.FetchError is FetchError
    # every exception class the API's modules define for their callers is exported
    defined = {
        name
        for name in vars(errors)
        if isinstance(getattr(errors, name), type) and issubclass(getattr(errors, name), Exception)
    }
    assert defined - {"InvalidPredictions"} <= set(procbench.__all__)
    # importing procbench imports none of them: a fresh interpreter's modules after `import procbench`
    ours = "('procbench', 'dsl', 'runners', 'submissions', 'numpy', 'polars')"
    probe = f"import sys, procbench; dir(procbench); print(sorted(m for m in sys.modules if m.split('.')[0] in {ours}))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=PROJECT_ROOT
    )
    assert done.stdout.strip() == "['procbench']"


def test_the_api_docstrings_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The examples in procbench/__init__.py, procbench/api.py and procbench/results.py are executed (on the bundled samples)."""
    import doctest
    import importlib

    for name in ("procbench", "procbench.api", "procbench.results"):
        module = importlib.import_module(name)
        result = doctest.testmod(
            module,
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
            raise_on_error=False,
        )
        assert result.attempted >= 3 and result.failed == 0, (name, capsys.readouterr().out)
