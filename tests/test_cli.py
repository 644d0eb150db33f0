"""The procbench CLI end to end (in-process, through typer's runner)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR

runner = CliRunner()
SAMPLE = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"


def test_check_all_specs_passes() -> None:
    result = runner.invoke(app, ["check"])
    assert result.exit_code == 0, result.output
    assert "task openpi" in result.output


def test_check_reports_position_caret_and_hint(tmp_path: Path) -> None:
    bad = tmp_path / "x.spec"  # named as its task: a task is named after its file
    bad.write_text('task x {\n  title = "t"\n  version = "1"\n  primary = m\n  metrc m { }\n}\n')
    result = runner.invoke(app, ["check", str(bad)])
    assert result.exit_code == 3
    assert f"{bad}:5:3: error: unknown block 'metrc' in a task block" in result.output
    assert "^" in result.output and "did you mean 'metric'?" in result.output


def test_a_typo_in_a_map_source_passes_check_but_fails_check_data(tmp_path: Path) -> None:
    # The path inside a data source is only known from the data: `check` cannot see the typo,
    # `check --data` must, or every item silently gets map()'s default label.
    source = (SPECS_DIR / "openpi.spec").read_text()
    assert source.count("map(meta.question_metadata.topic,") == 1
    source = source.replace(
        "map(meta.question_metadata.topic,", "map(meta.question_metadata.topik,"
    )
    spec = tmp_path / "openpi.spec"
    spec.write_text(source)
    (tmp_path / "openpi.lock").write_text((SPECS_DIR / "openpi.lock").read_text())
    line = next(
        n
        for n, text in enumerate(source.splitlines(), 1)
        if "map(meta.question_metadata.topik," in text
    )
    col = source.splitlines()[line - 1].index("map(") + 1

    plain = runner.invoke(app, ["check", str(spec)])
    assert plain.exit_code == 0, plain.output
    with_data = runner.invoke(
        app, ["check", str(spec), "--data", "--data-dir", str(SAMPLE_DATA_ROOT)]
    )
    assert with_data.exit_code == 3, with_data.output
    # one mistake, one error: the first split's first problem, and where the others are (the test split's lines too)
    assert with_data.output.count(": error: ") == 1, with_data.output
    assert (
        f"{spec}:{line}:{col}: error: split 'dev': openpi/data/gold/dev/id_question_metadata.jsonl:1: item "
        in with_data.output
    )
    assert "openpi/data/gold/test/id_question_metadata.jsonl:1" in with_data.output
    assert "label 'domain' <- meta.question_metadata.topik is missing" in with_data.output


def test_score_json_shape(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "score",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(SAMPLE),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {
        "task",
        "split",
        "fingerprint",
        "n_items",
        "coverage",
        "metrics",
        "slices",
        "partial",
        "warnings",
        "data_kind",
    }
    assert payload["data_kind"] == "sample"  # issue #29: never silent about the bundled samples
    assert (
        f"data root: {SAMPLE_DATA_ROOT.resolve()} (the bundled sample data" in result.stderr
        and "PROCBENCH_DATA" in result.stderr
    )
    answered = {
        json.loads(line)["id"] for line in SAMPLE.read_text().splitlines() if line.strip()
    }  # issue #28: answered / total
    assert payload["coverage"] == {
        "answered": len(answered),
        "total": payload["n_items"],
        "fraction": len(answered) / payload["n_items"],
    }
    assert set(payload["metrics"]) == {
        f"{m}_{k}" for m in ("exact", "bleu", "rouge") for k in ("p", "r", "f1")
    }
    assert set(payload["slices"]) == {"domain", "category", "modality"}
    assert (
        payload["slices"]["domain"]["unseen"]["n_items"]
        + payload["slices"]["domain"]["seen"]["n_items"]
        == payload["n_items"]
    )


def test_score_rejects_bad_file_with_exit_8(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(SAMPLE.read_text() + "not json\n")
    result = runner.invoke(
        app,
        [
            "score",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(bad),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert result.exit_code == 8  # invalid predictions (procbench.exit_codes)
    assert "bad.jsonl:23: not valid JSON" in result.output


def test_submit_then_resubmit(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    args = [
        "submit",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(SAMPLE),
        "--model",
        "tg",
        "--db",
        str(db),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    ]
    first, second = runner.invoke(app, args), runner.invoke(app, args)
    assert first.exit_code == 0 and first.stdout.startswith(
        "stored"
    )  # stderr first says which data root was read (issue #29)
    assert second.exit_code == 0 and "already stored" in second.output
