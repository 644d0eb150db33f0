"""No silent sample data (issue #29): ``score`` and ``submit`` say which data root they read and its kind.

Before, ``procbench score`` without a data root fell back to the bundled 8-item samples without a word:
a real 500-row PARADISE file got 492 "unknown id" problems, and a sample-sized file scored unlabelled.
Each case runs the real console script (the lean ``score`` path included) in a subprocess.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.api import load_task
from procbench.paths import (
    PROJECT_ROOT,
    SAMPLE_DATA_ROOT,
    SAMPLE_SUBMISSIONS_DIR,
    SPECS_DIR,
    default_data_root,
)
from procbench.runners.runtime import data_kind
from procbench.runners.runtime._types import MoreProblems, Problem
from tests.test_submissions_support import STRONG, counts, query

PROCBENCH = str(PROJECT_ROOT / ".venv" / "bin" / "procbench")
SAMPLES = str(SAMPLE_DATA_ROOT.resolve())


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PROCBENCH_CRASH_AT"}
    return subprocess.run(
        [PROCBENCH, *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _paradise_file(folder: Path, rows: int) -> Path:
    """A PARADISE tip file shaped like one for the real test split: ids 0 .. rows-1 (the samples have 8)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "paradise-real-shaped.jsonl"
    path.write_text("".join(json.dumps({"id": i, "label": i % 4}) + "\n" for i in range(rows)))
    return path


def _sample_items(task: str, split: str) -> int:
    _, runner = load_task(task)
    return len(runner.gold(SAMPLE_DATA_ROOT, split)[0].items)


def test_score_on_the_samples_says_so_and_json_carries_data_kind() -> None:
    done = _run(
        "score",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(STRONG),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)  # stdout stays one JSON object: the data root goes to stderr
    assert payload["data_kind"] == "sample"
    assert (
        f"data root: {SAMPLES} (the bundled sample data" in done.stderr
        and "PROCBENCH_DATA" in done.stderr
    )
    plain = _run(
        "score",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(STRONG),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    assert (
        plain.returncode == 0
        and "the bundled sample data" in plain.stderr
        and "the bundled sample data" not in plain.stdout
    )
    partial = _run(
        "score",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(STRONG),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--json",
        "--partial",
    )
    assert partial.returncode == 0 and json.loads(partial.stdout)["data_kind"] == "sample", (
        partial.stderr
    )


def test_score_on_the_real_data_says_real(tmp_path: Path) -> None:
    root = default_data_root()
    if root is None or not (root / "paradise").is_dir():
        pytest.skip("no real data root (PROCBENCH_DATA or ../shared/data) with PARADISE here")
    _, runner = load_task("paradise-tip")
    gold, _ = runner.gold(root, "test")
    if data_kind.kind_of(SPECS_DIR / "paradise-tip.spec", "test", root) != data_kind.REAL:
        pytest.skip(f"{root} does not hold the locked PARADISE test split")
    path = _paradise_file(tmp_path, len(gold.items))
    done = _run(
        "score",
        "paradise-tip",
        "--split",
        "test",
        "--predictions",
        str(path),
        "--data-dir",
        str(root),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert (
        json.loads(done.stdout)["data_kind"] == "real"
        and "(the real data of paradise-tip / test" in done.stderr
    )


def test_a_real_sized_file_against_the_samples_gets_one_message_naming_procbench_data(
    tmp_path: Path,
) -> None:
    items = _sample_items("paradise-tip", "test")
    path = _paradise_file(tmp_path, 500)
    done = _run(
        "score",
        "paradise-tip",
        "--split",
        "test",
        "--predictions",
        str(path),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    assert done.returncode == 8
    unknown = 500 - items  # ids 0 .. items-1 are the samples' own
    assert (
        f"{unknown} of its ids are not among the {items} items of paradise-tip / test in the samples"
        in done.stderr
    )
    assert (
        "PROCBENCH_DATA" in done.stderr
        and f"the bundled samples ({SAMPLE_DATA_ROOT})" in done.stderr
    )
    assert done.stderr.count("unknown id") <= 3  # a few examples, not one line per id
    assert len(done.stderr.splitlines()) < 12


def test_a_file_refused_for_other_reasons_against_the_samples_keeps_its_problems_and_says_where_it_read(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 0}\n{"id": 1, "label": 9}\n')
    done = _run(
        "score",
        "paradise-tip",
        "--split",
        "test",
        "--predictions",
        str(bad),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    )
    assert done.returncode == 8 and "bad.jsonl:1" in done.stderr and "bad.jsonl:2" in done.stderr
    assert "note: data root:" in done.stderr and "the bundled sample data" in done.stderr


def test_submit_says_which_data_root_and_refuses_a_real_file_against_the_samples_with_one_message(
    tmp_path: Path,
) -> None:
    db = tmp_path / "board.duckdb"
    sample = SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl"
    args = ["--split", "test", "--team", "t", "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT)]
    stored = _run("submit", "paradise-tip", "--predictions", str(sample), "--model", "s", *args)
    assert stored.returncode == 0 and stored.stdout.startswith("stored:"), stored.stderr
    assert f"data root: {SAMPLES} (the bundled sample data" in stored.stderr
    before = counts(db)
    refused = _run(
        "submit",
        "paradise-tip",
        "--predictions",
        str(_paradise_file(tmp_path, 500)),
        "--model",
        "r",
        *args,
    )
    assert (
        refused.returncode == 8
        and "PROCBENCH_DATA" in refused.stderr
        and "nothing was stored" in refused.stderr
    )
    assert refused.stderr.count("unknown id") <= 3
    assert counts(db) == before


def test_submit_warns_when_its_row_is_not_on_the_board(tmp_path: Path) -> None:
    """A row stored under a fingerprint the board does not show (other data, here a copy of the samples) says so."""
    db = tmp_path / "board.duckdb"
    first = _run("submit", "openpi", "--split", "test", "--predictions", str(STRONG), "--model", "m", "--team", "t", "--db", str(db),
                 "--data-dir", str(SAMPLE_DATA_ROOT))  # fmt: skip
    assert first.returncode == 0 and "warning" not in first.stderr
    other = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA_ROOT, other)
    gold = other / "openpi" / "data" / "gold" / "test" / "id_answers.jsonl"
    lines = gold.read_text().splitlines()
    record = json.loads(lines[0])
    record["answers"] = [*record["answers"], "a gold answer added in this copy"]
    gold.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    board = query(db, "SELECT submission_id, metric, value FROM board ORDER BY ALL")
    second = _run("submit", "openpi", "--split", "test", "--predictions", str(STRONG), "--model", "m", "--team", "u", "--db", str(db),
                  "--data-dir", str(other))  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "(unverified data for openpi / test" in second.stderr
    assert (
        "warning: stored under fingerprint" in second.stderr
        and "so this row is not on it" in second.stderr
    )
    assert query(db, "SELECT submission_id, metric, value FROM board ORDER BY ALL") == board


def test_data_kind_of_a_root(tmp_path: Path) -> None:
    spec = SPECS_DIR / "openpi.spec"
    assert data_kind.kind_of(spec, "test", SAMPLE_DATA_ROOT) == data_kind.SAMPLE
    copy = tmp_path / "copy"
    shutil.copytree(SAMPLE_DATA_ROOT, copy)
    assert (
        data_kind.kind_of(spec, "test", copy) == data_kind.UNVERIFIED
    )  # the samples' files are not the locked real files
    lockless = tmp_path / "specs" / "mine.spec"
    lockless.parent.mkdir()
    shutil.copy(spec, lockless)
    assert data_kind.kind_of(lockless, "test", copy) == data_kind.UNLOCKED
    root = default_data_root()
    if (
        root is not None and (root / "openpi").is_dir()
    ):  # the real root: real exactly when every locked test file hashes as the lock says
        locked = [
            f
            for f in json.loads((SPECS_DIR / "openpi.lock").read_text())["files"]
            if not f.get("splits") or "test" in f["splits"]
        ]
        intact = all(
            (root / f["path"]).is_file()
            and hashlib.sha256((root / f["path"]).read_bytes()).hexdigest() == f["sha256"]
            for f in locked
        )
        assert locked and data_kind.kind_of(spec, "test", root) == (
            data_kind.REAL if intact else data_kind.UNVERIFIED
        )


_problem = st.one_of(
    st.builds(
        lambda i: Problem(i + 1, f"unknown id {i}: not an item of this split", str(i)),
        st.integers(0, 10_000),
    ),
    st.builds(
        lambda i, text: Problem(i + 1, f"field 'label': {text}"),
        st.integers(0, 10_000),
        st.text(max_size=20),
    ),
)


@given(st.lists(_problem, max_size=30), st.integers(0, 500))
def test_the_sample_mismatch_message_appears_exactly_when_ids_are_unknown(
    problems: list[Problem], more: int
) -> None:
    listed = (
        [*problems, MoreProblems(None, f"... and {more} more problems", count=more)]
        if more
        else problems
    )
    total = len(problems) + more
    message = data_kind.sample_mismatch(
        listed, total, items=8, task="paradise-tip", split="test", source="f.jsonl"
    )
    unknown = sum(p.message.startswith("unknown id") for p in problems)
    assert bool(message) == bool(unknown)
    if message:
        said = int(message.split(" is not a file for the bundled sample data: ")[1].split(" ")[0])
        assert said == (
            total if unknown == len(problems) else unknown
        )  # the counted rest are ids only when every listed one is
        assert "PROCBENCH_DATA" in message and "among the 8 items of paradise-tip / test" in message
