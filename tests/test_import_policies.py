"""Imports (issue #33): errored samples under a declared policy, hints before the capped problem list, --id-field paths.

Logs are Inspect's EvalLog layout over the bundled PARADISE warnings (tests/test_import_inspect.py builds
the samples); every import runs the real reader, mapping and gold check, and the CLI runs as users run it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import procbench
from procbench.cli import app
from procbench.exit_codes import EXIT_INVALID_PREDICTIONS
from procbench.imports import ImportFailed, LoggedOutput, import_log, mapping_for
from procbench.imports.convert import to_records
from procbench.paths import SAMPLE_DATA_ROOT
from tests.test_import_inspect import LETTERS, _eval_spec, _paradise_rows, _sample

TASK = "paradise-warning"


def _log(
    path: Path,
    *,
    errored: set[int] = frozenset(),
    id_of: Any = None,
    row_field: str | None = None,
    completed: int | None = None,
) -> Path:
    """An Inspect .json log answering every PARADISE warning correctly; ``errored`` rows failed in the run (no output)."""
    rows = _paradise_rows()
    samples = []
    for row in rows:
        index, gold = int(row[""]), int(row["label"])
        endings = [row[f"ending{k}"] for k in range(4)]
        sample = _sample(
            id_of(index) if id_of else index,
            1,
            row["sent2"],
            LETTERS[gold],
            f"ANSWER: {LETTERS[gold]}",
            choices=endings,
            answer=LETTERS[gold],
            metadata={row_field: index} if row_field else None,
        )
        if index in errored:
            sample["error"] = {
                "message": "RateLimitError: 429",
                "traceback": "",
                "traceback_ansi": "",
            }
            sample["output"], sample["scores"] = {"model": "m", "choices": [], "completion": ""}, {}
        samples.append(sample)
    log = {
        "version": 2,
        "status": "error" if errored else "success",
        "eval": _eval_spec("paradise_warning", len(rows)),
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": {
            "total_samples": len(rows),
            "completed_samples": len(rows) - len(errored) if completed is None else completed,
            "scores": [],
        },
        "samples": samples,
    }
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


def _import(*args: str) -> Any:
    return CliRunner().invoke(
        app,
        [
            "import",
            "inspect",
            *args,
            "--task",
            TASK,
            "--split",
            "test",
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )


def test_errored_samples_are_refused_by_default_with_the_runs_count_and_the_options(
    tmp_path: Path,
) -> None:
    rows = _paradise_rows()
    failed = {int(rows[1][""]), int(rows[4][""])}
    out = tmp_path / "p.jsonl"
    done = _import(str(_log(tmp_path / "run.json", errored=failed)), "--out", str(out))
    assert done.exit_code == EXIT_INVALID_PREDICTIONS and not out.exists()
    lines = done.stderr.splitlines()
    assert lines[0] == f"2 problems importing {tmp_path / 'run.json'}"
    # the hint comes first, with the run's own count, naming both other policies
    assert "2 sample(s) failed in the run; the run's log: 6 of 8 samples completed" in lines[1]
    assert "--errored skip" in lines[1] and "--errored wrong" in lines[1]
    assert sum("sample failed in the run: RateLimitError: 429" in line for line in lines) == 2


def test_errored_skip_writes_a_partial_file_and_wrong_counts_them_wrong(tmp_path: Path) -> None:
    rows = _paradise_rows()
    failed = {int(rows[0][""]), int(rows[5][""]), int(rows[6][""])}
    log = _log(tmp_path / "run.json", errored=failed)

    skipped = _import(str(log), "--out", str(tmp_path / "skip.jsonl"), "--errored", "skip")
    assert skipped.exit_code == 0, skipped.output
    kept = [json.loads(line)["id"] for line in (tmp_path / "skip.jsonl").read_text().splitlines()]
    assert sorted(kept) == sorted(int(r[""]) for r in rows if int(r[""]) not in failed)
    assert (
        "3 sample(s) failed in the run; the run's log: 5 of 8 samples completed and are left out (--errored skip"
        in skipped.stderr
    )
    assert skipped.stdout.rstrip().endswith(
        "--partial"
    )  # the score command it prints scores the logged items only

    wrong = _import(str(log), "--out", str(tmp_path / "wrong.jsonl"), "--errored", "wrong")
    assert wrong.exit_code == 0, wrong.output
    labels = {
        json.loads(line)["id"]: json.loads(line)["label"]
        for line in (tmp_path / "wrong.jsonl").read_text().splitlines()
    }
    gold = {int(r[""]): int(r["label"]) for r in rows}
    assert set(labels) == set(gold) and all((labels[i] == gold[i]) != (i in failed) for i in gold)
    accuracy = procbench.score(
        TASK, tmp_path / "wrong.jsonl", split="test", data_dir=SAMPLE_DATA_ROOT
    ).metrics["accuracy"]
    assert accuracy == pytest.approx(
        5 / 8
    )  # every answered sample right, the three failed ones wrong

    bad = _import(str(log), "--out", str(tmp_path / "x.jsonl"), "--errored", "maybe")
    assert bad.exit_code == 2  # a bad option value is a usage error


def test_hints_are_never_cut_by_the_problem_cap() -> None:
    """80 outputs naming no option: the --unanswered hint is the first line under the count, whatever the cap."""
    mapping = mapping_for(TASK)
    outputs = [LoggedOutput(f"line {n}", n, {}, text="I am not sure") for n in range(80)]
    with pytest.raises(ImportFailed) as caught:
        to_records(outputs, mapping, source="log.jsonl")
    lines = caught.value.render().splitlines()
    assert lines[0] == "80 problems importing log.jsonl"
    assert lines[1].startswith("  hint: ") and "--unanswered wrong" in lines[1]
    assert lines[-1] == "  ... and 30 more" and len(lines) == 1 + 1 + 50 + 1


def test_text_ids_get_an_id_field_hint_and_the_path_may_name_metadata(tmp_path: Path) -> None:
    rows = _paradise_rows()
    log = _log(
        tmp_path / "named.json", id_of=lambda n: f"warning-{n}", row_field="idx"
    )  # not among the mapping's id fields ("row" is)
    refused = _import(str(log), "--out", str(tmp_path / "x.jsonl"))
    assert refused.exit_code == EXIT_INVALID_PREDICTIONS
    hint = refused.stderr.splitlines()[1]
    assert "ids are row indices" in hint and "--id-field idx" in hint and "'metadata'" in hint

    inside = _import(str(log), "--out", str(tmp_path / "a.jsonl"), "--id-field", "idx")
    whole = _import(
        str(log), "--out", str(tmp_path / "b.jsonl"), "--id-field", "metadata.idx"
    )  # the path as the sample shows it
    assert inside.exit_code == whole.exit_code == 0, inside.output + whole.output
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    assert len((tmp_path / "a.jsonl").read_text().splitlines()) == len(rows)

    absent = _import(str(log), "--out", str(tmp_path / "c.jsonl"), "--id-field", "nope")
    assert absent.exit_code == EXIT_INVALID_PREDICTIONS
    assert (
        "no field 'nope' in the logged item's 'metadata' (--id-field is a dotted path inside it; its fields: 'idx')"
        in absent.stderr
    )


def test_the_library_takes_the_same_policy(tmp_path: Path) -> None:
    from procbench.imports import ImportOptions

    rows = _paradise_rows()
    failed = {int(rows[2][""])}
    imported = import_log(
        "inspect",
        _log(tmp_path / "r.json", errored=failed),
        TASK,
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        options=ImportOptions(errored="skip"),
    )
    assert imported.errored == tuple(failed) and len(imported.records) == len(rows) - 1


def test_a_partial_import_submitted_says_so_and_the_board_marks_it(tmp_path: Path) -> None:
    """A --limit run of OpenPI (10 of the split's items logged) imports, submits with a 'partial' warning, and its board row says '· partial'."""
    from procbench.leaderboard import boardview, sitedata
    from tests.test_import_inspect import _openpi_reference, openpi_json_log

    _, answers = _openpi_reference()
    log = openpi_json_log(tmp_path / "limit.json", dict(list(answers.items())[:10]))
    out, db = tmp_path / "limit.jsonl", tmp_path / "board.duckdb"
    imported = CliRunner().invoke(
        app,
        [
            "import",
            "inspect",
            str(log),
            "--task",
            "openpi",
            "--split",
            "test",
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            "--out",
            str(out),
        ],
    )
    assert imported.exit_code == 0 and imported.stdout.rstrip().endswith("--partial"), (
        imported.output
    )
    stored = CliRunner().invoke(
        app,
        [
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(out),
            "--model",
            "limited",
            "--db",
            str(db),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert stored.exit_code == 0, stored.output
    assert f"warning: partial: the file answers 10 of {len(answers)} items" in stored.stderr
    ((sid, coverage),) = sitedata.coverage(db, "openpi", "test").items()
    assert coverage == (10, len(answers))
    assert (
        boardview.coverage_text(coverage) == f"10 / {len(answers)} · partial"
        and boardview.coverage_text((8, 8)) == "8 / 8"
    )
