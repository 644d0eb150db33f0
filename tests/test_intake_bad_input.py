"""Bad input: each case gets a clear message, stores no submission rows, and leaves a receipt.

The memory cases run in a real subprocess that reports its own peak RSS (VmHWM): a 1 GiB sparse
file (refused by size, then by line length once the size cap is raised), a gzip bomb expanding
to 320 MiB, and a 48 MiB stream of real records that the reader validates in full.  The 1 GiB *full*
validation pass is in the benchmark (bench_intake.py in submissions/), too slow for CI.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import InvalidPredictions
from procbench.submissions.errors import RejectedPredictions, SubmissionRefused
from procbench.submissions.staging import (
    BadFileName,
    FileRefused,
    IntakeLimits,
    safe_filename,
    scan,
)
from tests.test_submissions_support import NO_CHANGE, STRONG, counts, failures, query, submit_openpi

MiB = 1 << 20
cli = CliRunner()


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    """A database that already holds one submission (so 'nothing changed' is a real comparison)."""
    path = tmp_path / "board.duckdb"
    submit_openpi(path, NO_CHANGE, team="earlier")
    return path


def _refused_cleanly(
    db: Path, before: dict[str, int], receipt: str, stage: str
) -> dict[str, object]:
    assert counts(db) == before
    (row,) = [f for f in failures(db) if f["receipt_id"] == receipt]
    assert row["stage"] == stage
    return row


def _lines_with(tmp_path: Path, name: str, insert: bytes, at: int = 2) -> Path:
    lines = STRONG.read_bytes().splitlines(keepends=True)
    lines.insert(at, insert)
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    return path


# -- encodings and line endings ----------------------------------------------------------------------


def test_malformed_utf8_is_reported_on_its_line_and_nothing_stored(
    db: Path, tmp_path: Path
) -> None:
    bad = _lines_with(tmp_path, "latin1.jsonl", b'{"id": "caf\xe9", "answers": []}\n')
    before = counts(db)
    with pytest.raises(RejectedPredictions) as caught:
        submit_openpi(db, bad)
    assert [(p.line, p.message.split(" (")[0]) for p in caught.value.problems] == [
        (3, "not valid UTF-8")
    ]
    row = _refused_cleanly(db, before, caught.value.receipt, "validate")
    assert "latin1.jsonl:3: not valid UTF-8" in str(row["reason"])


@pytest.mark.parametrize("transform", ["bom", "crlf", "bom+crlf"])
def test_bom_and_crlf_files_score_exactly_like_the_clean_file(
    transform: str, tmp_path: Path
) -> None:
    data = STRONG.read_bytes()
    if "crlf" in transform:
        data = data.replace(b"\n", b"\r\n")
    if "bom" in transform:
        data = b"\xef\xbb\xbf" + data
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(data)
    db = tmp_path / "board.duckdb"
    clean = submit_openpi(db, STRONG, team="a")
    other = submit_openpi(db, odd, team="a")
    assert (
        other.created and other.submission_id != clean.submission_id
    )  # different bytes, stored apart
    assert other.evaluation.metrics == clean.evaluation.metrics


def test_an_empty_file_is_refused(db: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    before = counts(db)
    with pytest.raises(RejectedPredictions, match="no records") as caught:
        submit_openpi(db, empty)
    _refused_cleanly(db, before, caught.value.receipt, "validate")


def test_blank_lines_only_is_an_empty_file(db: Path, tmp_path: Path) -> None:
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n\r\n  \n")
    before = counts(db)
    with pytest.raises(RejectedPredictions, match="no records"):
        submit_openpi(db, blank)
    assert counts(db) == before


# -- ids ----------------------------------------------------------------------------------------------


def test_duplicate_and_unknown_ids_are_all_listed_and_nothing_stored(
    db: Path, tmp_path: Path
) -> None:
    lines = STRONG.read_text().splitlines()
    bad = tmp_path / "ids.jsonl"
    bad.write_text(
        "\n".join([*lines, lines[4], json.dumps({"id": "nope", "answers": []}), lines[0]]) + "\n"
    )
    before = counts(db)
    with pytest.raises(RejectedPredictions) as caught:
        submit_openpi(db, bad)
    found = [(p.line, p.message) for p in caught.value.problems]
    n = len(lines)
    assert (
        found[0][0] == n + 1 and "duplicate id" in found[0][1] and "first on line 5" in found[0][1]
    )
    assert found[1][0] == n + 2 and "unknown id 'nope'" in found[1][1]
    assert found[2][0] == n + 3 and "first on line 1" in found[2][1]
    _refused_cleanly(db, before, caught.value.receipt, "validate")


HOSTILE = (
    'x\'); DROP TABLE submissions; -- <script>alert("pwned")</script> <img src=x onerror=alert(1)>'
)


def test_sql_and_html_in_a_model_name_are_stored_verbatim(db: Path) -> None:
    outcome = submit_openpi(db, STRONG, model=HOSTILE, team=f"team {HOSTILE}")
    assert query(
        db, "SELECT model, team FROM submissions WHERE submission_id = ?", [outcome.submission_id]
    ) == [(HOSTILE, f"team {HOSTILE}")]
    assert query(db, "SELECT count(*) FROM submissions")[0][0] == 2  # the DROP never ran
    assert HOSTILE in [r[0] for r in query(db, "SELECT DISTINCT model FROM board")]


def test_sql_in_an_unknown_id_is_reported_verbatim_and_nothing_runs(
    db: Path, tmp_path: Path
) -> None:
    bad = _lines_with(
        tmp_path, "sqlid.jsonl", (json.dumps({"id": HOSTILE, "answers": []}) + "\n").encode()
    )
    before = counts(db)
    with pytest.raises(RejectedPredictions) as caught:
        submit_openpi(db, bad)
    (problem,) = caught.value.problems
    assert problem.line == 3 and repr(HOSTILE) in problem.message
    _refused_cleanly(db, before, caught.value.receipt, "validate")


def test_ids_carrying_sql_and_script_are_stored_and_read_back_verbatim(tmp_path: Path) -> None:
    """Gold whose item id is hostile text (a copy of the sample data): scores are keyed by it, unchanged."""
    root = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA_ROOT / "openpi", root / "openpi")
    gold_dir = root / "openpi" / "data" / "gold" / "test"
    old_id = json.loads(STRONG.read_text().splitlines()[0])["id"]
    for path in gold_dir.glob("*.jsonl"):
        path.write_text(path.read_text().replace(json.dumps(old_id), json.dumps(HOSTILE)))
    preds = tmp_path / "preds.jsonl"
    preds.write_text(STRONG.read_text().replace(json.dumps(old_id), json.dumps(HOSTILE)))
    db = tmp_path / "board.duckdb"
    outcome = submit_openpi(db, preds, data_root=root)
    stored = {
        r[0]
        for r in query(
            db,
            "SELECT DISTINCT item_id FROM item_scores WHERE submission_id = ?",
            [outcome.submission_id],
        )
    }
    assert HOSTILE in stored and old_id not in stored
    assert query(db, "SELECT count(*) FROM item_labels WHERE item_id = ?", [HOSTILE])[0][0] > 0


# -- names, tasks, splits ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "..",
        "a/b.jsonl",
        "..\\..\\boot.ini",
        "ok\x00.jsonl",
        "line\nbreak.jsonl",
        "",
    ],
)
def test_path_traversal_and_odd_file_names_are_refused(name: str, db: Path, tmp_path: Path) -> None:
    before = counts(db)
    listing = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(SubmissionRefused) as caught:
        submit_openpi(db, STRONG, filename=name)
    assert "file name" in caught.value.message
    _refused_cleanly(db, before, caught.value.receipt, "request")
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # nothing written beside the store


@settings(max_examples=200)
@given(st.text(max_size=60))
def test_an_accepted_file_name_never_leaves_its_folder(name: str) -> None:
    base = Path("/srv/scratch")
    try:
        safe = safe_filename(name)
    except BadFileName:
        return
    assert (base / safe).resolve().parent == base and safe == name


def test_an_upload_is_read_under_its_own_name_not_the_temporary_one(tmp_path: Path) -> None:
    temporary = tmp_path / "upload-3f2a.tmp"
    shutil.copy(STRONG, temporary)
    db = tmp_path / "board.duckdb"
    outcome = submit_openpi(db, temporary, filename="my predictions.jsonl")
    assert query(
        db, "SELECT filename FROM submissions WHERE submission_id = ?", [outcome.submission_id]
    ) == [("my predictions.jsonl",)]


def test_an_unknown_split_is_refused_with_the_known_ones(db: Path) -> None:
    before = counts(db)
    with pytest.raises(SubmissionRefused) as caught:
        submit_openpi(db, STRONG, split="validation")
    assert "no split 'validation'" in caught.value.message and "dev, test" in caught.value.message
    _refused_cleanly(db, before, caught.value.receipt, "request")


def test_cli_unknown_task_and_unknown_split(db: Path) -> None:
    base = [
        "--predictions",
        str(STRONG),
        "--model",
        "m",
        "--db",
        str(db),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    ]
    before = counts(db)
    no_task = cli.invoke(app, ["submit", "no-such-task", "--split", "test", *base])
    assert no_task.exit_code == 3 and "no task named 'no-such-task'" in no_task.output
    no_split = cli.invoke(app, ["submit", "openpi", "--split", "nope", *base])
    assert (
        no_split.exit_code == 9 and "no split 'nope'" in no_split.output
    )  # unknown split (procbench.exit_codes) and "receipt" in no_split.output
    assert counts(db) == before


@pytest.mark.parametrize("model", ["", "   ", "tab\there", "x" * 201, "bell\x07"])
def test_unprintable_or_empty_model_names_are_refused(model: str, db: Path) -> None:
    before = counts(db)
    with pytest.raises(SubmissionRefused, match="model name"):
        submit_openpi(db, STRONG, model=model)
    assert counts(db) == before


def test_cli_invalid_file_prints_every_problem_and_the_receipt(db: Path, tmp_path: Path) -> None:
    bad = _lines_with(tmp_path, "bad.jsonl", b"{oops\n")
    result = cli.invoke(
        app,
        [
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(bad),
            "--model",
            "m",
            "--db",
            str(db),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert result.exit_code == 8  # invalid predictions (procbench.exit_codes)
    assert "bad.jsonl:3: not valid JSON" in result.output
    receipt = result.output.strip().split("receipt ")[-1].rstrip(")")
    shown = cli.invoke(app, ["admin", "receipt", receipt, "--db", str(db)])
    assert (
        shown.exit_code == 0
        and "stage validate" in shown.output
        and "bad.jsonl:3: not valid JSON" in shown.output
    )


# -- size, lines, gzip ---------------------------------------------------------------------------------


def test_a_valid_gzip_upload_is_the_same_submission_as_the_plain_file(
    db: Path, tmp_path: Path
) -> None:
    packed = tmp_path / "strong.jsonl.gz"
    packed.write_bytes(gzip.compress(STRONG.read_bytes()))
    plain = submit_openpi(db, STRONG)
    again = submit_openpi(db, packed)
    assert not again.created and again.submission_id == plain.submission_id


def test_a_corrupt_gzip_upload_is_refused(db: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(STRONG.read_bytes())[:-40] + b"\x00" * 8)
    before = counts(db)
    with pytest.raises(RejectedPredictions, match="gzip") as caught:
        submit_openpi(db, broken)
    _refused_cleanly(db, before, caught.value.receipt, "file")


def test_size_and_line_limits_are_enforced_with_a_line_number(db: Path, tmp_path: Path) -> None:
    long_line = _lines_with(
        tmp_path, "long.jsonl", b'{"id": "x", "answers": ["' + b"a" * 5000 + b'"]}\n', at=4
    )
    before = counts(db)
    with pytest.raises(RejectedPredictions) as caught:
        submit_openpi(db, long_line, limits=IntakeLimits(max_bytes=MiB, max_line_bytes=4096))
    (problem,) = caught.value.problems
    assert problem.line == 5 and "longer than 4096 bytes" in problem.message
    with pytest.raises(RejectedPredictions, match="larger than"):
        submit_openpi(db, STRONG, limits=IntakeLimits(max_bytes=1000))
    _refused_cleanly(db, before, caught.value.receipt, "file")


@settings(max_examples=300)
@given(
    data=st.lists(st.sampled_from([b"a", b"bb", b"\n", b"cccc", b"\n\n"]), max_size=60),
    chunk=st.integers(1, 9),
    limit=st.integers(1, 12),
)
def test_the_line_limit_finds_the_first_long_line_whatever_the_chunking(
    data: list[bytes], chunk: int, limit: int
) -> None:
    blob = b"".join(data)
    lines = blob.split(b"\n")
    first_long = next((i + 1 for i, line in enumerate(lines) if len(line) > limit), None)
    try:
        digest, size = scan(
            io.BytesIO(blob), IntakeLimits(max_bytes=10_000, max_line_bytes=limit), chunk_size=chunk
        )
    except FileRefused as exc:
        assert exc.problem.line == first_long
    else:
        assert first_long is None and size == len(blob)


def _memory_probe(tmp: Path) -> dict[str, object]:
    """Runs in the subprocess: the three big inputs, each refused; returns what was said."""
    from procbench.api import load_task
    from procbench.submissions import SubmissionRequest, submit
    from procbench.submissions.errors import RejectedPredictions

    spec, runner = load_task("openpi")
    db = tmp / "board.duckdb"
    out: dict[str, object] = {}

    def attempt(key: str, path: Path, limits: IntakeLimits | None = None) -> None:
        try:
            submit(
                SubmissionRequest(split="test", predictions=path, model="m", team="t"),
                spec,
                runner,
                data_root=SAMPLE_DATA_ROOT,
                db_path=db,
                limits=limits,
            )
        except RejectedPredictions as exc:
            out[key] = {
                "stage": exc.stage,
                "lines": [p.line for p in exc.problems][:3],
                "text": exc.render()[:400],
                "n": len(exc.problems),
                "last": exc.problems[-1].message,
            }

    sparse = tmp / "sparse.jsonl"
    with sparse.open("wb") as handle:
        handle.truncate(1 << 30)  # 1 GiB of NUL bytes, no disk used
    attempt("sparse_default", sparse)
    attempt("sparse_raised", sparse, IntakeLimits(max_bytes=2 << 30))
    bomb = tmp / "bomb.jsonl.gz"
    zeros = b"\n" * MiB  # newlines, so that the size cap (not the line cap) is what trips
    with gzip.open(bomb, "wb", compresslevel=1) as handle:
        for _ in range(320):  # expands to 320 MiB, past the 256 MiB cap
            handle.write(zeros)
    attempt("bomb", bomb)
    stream = tmp / "stream.jsonl"
    line = STRONG.read_bytes().splitlines(keepends=True)[0]
    with stream.open("wb") as handle:
        for _ in range(48 * MiB // len(line)):
            handle.write(line)
    attempt("stream", stream)
    out["peak_rss_mib"] = _peak_rss_mib()
    return out


def _peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM), reset by exec.

    ``getrusage``/``wait4``'s ``ru_maxrss`` is not used: Linux carries the parent's high-water mark
    across fork+exec into it, so a child of a big pytest process would report the parent's size.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_huge_inputs_are_refused_with_bounded_memory(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.run(
        [sys.executable, __file__, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=PROJECT_ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (
        result["sparse_default"]["stage"] == "file"
        and "larger than 256 MiB" in result["sparse_default"]["text"]
    )
    assert (
        result["sparse_raised"]["lines"] == [1]
        and "longer than 64 MiB" in result["sparse_raised"]["text"]
    )
    assert result["bomb"]["stage"] == "file" and "expanded" in result["bomb"]["text"]
    assert (
        result["stream"]["stage"] == "validate"
        and result["stream"]["n"] == 201
        and "more problems" in result["stream"]["last"]
    )
    assert result["peak_rss_mib"] < 1024, f"peak RSS {result['peak_rss_mib']:.0f} MiB"
    assert not (
        tmp_path / "board.duckdb"
    ).exists()  # nothing stored: refusals create no store (issue #17)


def test_refusals_never_leave_scratch_files(db: Path, tmp_path: Path) -> None:
    packed = tmp_path / "x.jsonl.gz"
    packed.write_bytes(gzip.compress(b"{oops\n"))
    with pytest.raises(InvalidPredictions):
        submit_openpi(db, packed)
    scratch = db.with_name(db.name + ".raw") / "tmp"
    assert not scratch.exists() or list(scratch.iterdir()) == []


if __name__ == "__main__":
    print(json.dumps(_memory_probe(Path(sys.argv[1]))))


# -- symbolic links (issue #17) ----------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["a valid file", "a gold file", "nothing"])
def test_a_symlinked_prediction_file_is_refused_not_followed(
    target: str, db: Path, tmp_path: Path
) -> None:
    """Whatever the link points at (here: a valid submission, which following it would store), nothing is read."""
    link = tmp_path / "predictions.jsonl"
    pointee = {
        "a valid file": STRONG,
        "a gold file": next(SAMPLE_DATA_ROOT.rglob("*.jsonl")),
        "nothing": tmp_path / "missing.jsonl",
    }[target]
    link.symlink_to(pointee)
    before = counts(db)
    with pytest.raises(RejectedPredictions, match="symbolic link") as caught:
        submit_openpi(db, link)
    (problem,) = caught.value.problems
    assert problem.line is None and "not followed" in problem.message
    row = _refused_cleanly(db, before, caught.value.receipt, "file")
    assert row["content_sha256"] in (None, "")  # nothing was hashed: the link was not opened
