"""Real harness logs (tests/fixtures/harness, made by inspect-ai 0.3.285 and lm-eval 0.4.13 offline over the
bundled sample data; see its README) import and score to the numbers the harnesses reported: whole runs and
--limit runs (--partial).  The expected numbers are read from the logs as the harnesses wrote them, with this
file's own readers (json, zipfile, zstandard), never through procbench."""

from __future__ import annotations

import csv
import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
import zstandard
from typer.testing import CliRunner

import procbench
from procbench.cli import app
from procbench.imports import ImportFailed, ImportOptions, import_log, read_outputs
from procbench.paths import SAMPLE_DATA_ROOT

HARNESS = Path(__file__).parent / "fixtures" / "harness"
LOGS = HARNESS / "logs"
ZIP_ZSTANDARD = 93  # APPNOTE 4.4.5: the method Inspect writes its .eval members with
INSPECT_EVALS = ["inspect_paradise_tip_full.eval", "inspect_paradise_tip_limit5.eval"]
LM_EVAL_RUNS = ["lm_eval_paradise_tip_full", "lm_eval_paradise_tip_limit7"]


def _tip_test_ids() -> list[int]:
    """The sample tip test split's item ids (the CSV's unnamed first column), read with the csv module."""
    with (SAMPLE_DATA_ROOT / "paradise" / "src" / "data" / "tip_test.csv").open(
        newline="", encoding="utf-8"
    ) as handle:
        return [int(row[""]) for row in csv.DictReader(handle)]


def _openpi_test_ids() -> list[str]:
    lines = (
        (SAMPLE_DATA_ROOT / "openpi" / "data" / "gold" / "test" / "id_question.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    return [json.loads(line)["id"] for line in lines]


def _eval_members(path: Path) -> dict[str, Any]:
    """Every JSON member of an Inspect .eval archive, decompressed here with zstandard (not procbench's reader)."""
    members: dict[str, Any] = {}
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        for info in archive.infolist():
            assert info.compress_type == ZIP_ZSTANDARD, (
                f"{info.filename} is not Zstandard-compressed"
            )
            raw.seek(info.header_offset)
            header = raw.read(
                30
            )  # the local file header; its name and extra field lengths are its last two fields
            name_length, extra_length = struct.unpack("<2H", header[26:30])
            raw.seek(name_length + extra_length, io.SEEK_CUR)
            reader = zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(raw.read(info.compress_size)), read_across_frames=True
            )
            members[info.filename] = json.loads(reader.read())
    return members


def _inspect_reported(log: str) -> tuple[float, dict[int, bool], int]:
    """What Inspect wrote: the run's accuracy, each sample's verdict (C/I), and how many named no answer."""
    if log.endswith(".eval"):
        members = _eval_members(LOGS / log)
        header, samples = (
            members["header.json"],
            [v for k, v in members.items() if k.startswith("samples/")],
        )
    else:
        header = json.loads((LOGS / log).read_text(encoding="utf-8"))
        samples = header["samples"]
    accuracy = header["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    verdicts = {s["id"]: s["scores"]["choice"]["value"] == "C" for s in samples}
    unanswered = sum(not s["scores"]["choice"].get("answer") for s in samples)
    return accuracy, verdicts, unanswered


def _lm_eval_reported(name: str) -> tuple[float, int, dict[int, bool]]:
    """What lm-eval wrote: acc and sample_len from the results file, each document's acc from --log_samples."""
    result = json.loads((LOGS / f"{name}.results.json").read_text(encoding="utf-8"))["results"][
        "paradise_tip"
    ]
    lines = [
        json.loads(line)
        for line in (LOGS / f"{name}.samples.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return (
        result["acc,none"],
        result["sample_len"],
        {line["doc"]["Unnamed: 0"]: line["acc"] == 1.0 for line in lines},
    )


def _item_verdicts(result: Any) -> dict[int, bool]:
    return {int(item.item_id): item.values["accuracy"] == 1.0 for item in result.items}


def test_the_logs_are_over_the_sample_data_with_right_wrong_and_unanswered_items() -> None:
    accuracy, verdicts, unanswered = _inspect_reported("inspect_paradise_tip_full.eval")
    assert sorted(verdicts) == _tip_test_ids()  # a whole run over the sample split
    assert (
        0 < accuracy < 1 and unanswered > 0
    )  # the mock model got some right, some wrong, and left some unanswered
    outputs = read_outputs(
        "inspect", LOGS / "inspect_paradise_tip_full.eval"
    )  # no gold needed to read it
    assert sorted(o.sample_id for o in outputs) == _tip_test_ids()
    assert sum(o.choice is None for o in outputs) == unanswered


@pytest.mark.parametrize("log", INSPECT_EVALS)
def test_inspect_runs_score_to_inspects_accuracy(log: str, tmp_path: Path) -> None:
    whole = "full" in log
    reported, verdicts, _ = _inspect_reported(log)
    with pytest.raises(
        ImportFailed, match="--unanswered wrong"
    ):  # the mock model left some items unanswered
        import_log("inspect", LOGS / log, "paradise-tip", split="test", data_dir=SAMPLE_DATA_ROOT)
    options = ImportOptions(unanswered="wrong")
    imported = import_log(
        "inspect",
        LOGS / log,
        "paradise-tip",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        options=options,
    )
    assert imported.unanswered and len(imported.records) == len(verdicts)
    predictions = imported.write_jsonl(tmp_path / "p.jsonl")
    result = procbench.score(
        "paradise-tip", predictions, split="test", data_dir=SAMPLE_DATA_ROOT, partial=not whole
    )
    assert result.metrics["accuracy"] == pytest.approx(reported, abs=1e-12)
    assert _item_verdicts(result) == verdicts
    assert result.partial is not whole and result.n_items == len(verdicts)
    if not whole:
        assert result.coverage is not None and (result.coverage.scored, result.coverage.total) == (
            len(verdicts),
            len(_tip_test_ids()),
        )


def test_inspect_shuffled_choices_are_mapped_back(tmp_path: Path) -> None:
    log = LOGS / "inspect_paradise_tip_shuffled_limit6.json"
    reported, verdicts, _ = _inspect_reported(log.name)
    with (SAMPLE_DATA_ROOT / "paradise" / "src" / "data" / "tip_test.csv").open(
        newline="", encoding="utf-8"
    ) as handle:
        gold_order = {
            int(row[""]): [row[f"ending{k}"] for k in range(4)] for row in csv.DictReader(handle)
        }
    logged = {s["id"]: s["choices"] for s in json.loads(log.read_text(encoding="utf-8"))["samples"]}
    assert all(sorted(logged[i]) == sorted(gold_order[i]) for i in logged)  # the same options ...
    assert any(
        logged[i] != gold_order[i] for i in logged
    )  # ... in another order: Inspect shuffled them
    imported = import_log(
        "inspect",
        log,
        "paradise-tip",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        options=ImportOptions(unanswered="wrong"),
    )
    assert imported.unshuffled == len(verdicts)
    result = procbench.score(
        "paradise-tip",
        imported.write_jsonl(tmp_path / "p.jsonl"),
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        partial=True,
    )
    assert result.metrics["accuracy"] == pytest.approx(reported, abs=1e-12)
    assert _item_verdicts(result) == verdicts


@pytest.mark.parametrize("name", LM_EVAL_RUNS)
def test_lm_eval_runs_score_to_the_harness_acc(name: str, tmp_path: Path) -> None:
    whole = name.endswith("full")
    reported, sample_len, verdicts = _lm_eval_reported(name)
    imported = import_log(
        "lm-eval",
        LOGS / f"{name}.samples.jsonl",
        "paradise-tip",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    predictions = imported.write_jsonl(tmp_path / "p.jsonl")
    result = procbench.score(
        "paradise-tip", predictions, split="test", data_dir=SAMPLE_DATA_ROOT, partial=not whole
    )
    assert result.metrics["accuracy"] == pytest.approx(reported, abs=1e-12)
    assert _item_verdicts(result) == verdicts and result.n_items == sample_len
    missing = len(_tip_test_ids()) - sample_len
    assert (missing == 0) is whole
    if not whole:  # a --limit run is not a whole split: refused without --partial
        with pytest.raises(Exception, match=f"no prediction for {missing} item"):
            procbench.score("paradise-tip", predictions, split="test", data_dir=SAMPLE_DATA_ROOT)


def test_lm_eval_openpi_generations_import_with_ids_aligned(tmp_path: Path) -> None:
    log = LOGS / "lm_eval_openpi_limit10.samples.jsonl"
    sample_len = json.loads(
        (LOGS / "lm_eval_openpi_limit10.results.json").read_text(encoding="utf-8")
    )["results"]["openpi"]["sample_len"]
    imported = import_log("lm-eval", log, "openpi", split="test", data_dir=SAMPLE_DATA_ROOT)
    logged = [
        json.loads(line)["doc"]["id"] for line in log.read_text(encoding="utf-8").splitlines()
    ]
    assert logged == _openpi_test_ids()[:sample_len]  # --limit takes the split's first documents
    assert [r["id"] for r in imported.records] == logged and all(
        r["answers"] == ["lol"] for r in imported.records
    )  # lm-eval's dummy model says "lol"
    result = procbench.score(
        "openpi",
        imported.write_jsonl(tmp_path / "p.jsonl"),
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        partial=True,
    )
    assert result.coverage is not None and (result.coverage.scored, result.coverage.total) == (
        sample_len,
        len(_openpi_test_ids()),
    )
    assert result.n_items == sample_len


def test_off_by_one_ids_are_named_with_the_fix(tmp_path: Path) -> None:
    shifted = tmp_path / "shifted.jsonl"  # the same log with ids numbered from 1
    lines = [
        json.loads(line)
        for line in (LOGS / "lm_eval_paradise_tip_full.samples.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    for line in lines:
        line["doc_id"] += 1
        line["doc"]["Unnamed: 0"] += 1
    shifted.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ImportFailed) as caught:
        import_log("lm-eval", shifted, "paradise-tip", split="test", data_dir=SAMPLE_DATA_ROOT)
    assert (
        caught.value.problems[0].message.startswith("the item ids are off by one")
        and "--id-offset -1" in caught.value.problems[0].message
    )
    fixed = import_log(
        "lm-eval",
        shifted,
        "paradise-tip",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        options=ImportOptions(id_offset=-1),
    )
    assert [r["id"] for r in fixed.records] == _tip_test_ids()


def test_cli_import_prints_a_complete_score_command(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    log = LOGS / "inspect_paradise_tip_limit5.eval"
    reported, verdicts, _ = _inspect_reported(log.name)
    args = [
        "import",
        "inspect",
        str(log),
        "--task",
        "paradise-tip",
        "--split",
        "test",
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        "--out",
        str(out),
    ]
    args += ["--unanswered", "wrong"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    command = next(
        line for line in result.stdout.splitlines() if line.startswith("score it with: ")
    ).removeprefix("score it with: ")
    assert f"--data-dir {SAMPLE_DATA_ROOT.resolve()}" in command and command.endswith("--partial")
    scored = CliRunner().invoke(app, [*command.split()[1:], "--json"])
    assert scored.exit_code == 0, scored.output
    printed = json.loads(scored.stdout)
    assert printed["partial"] is True and printed["coverage"]["scored"] == len(verdicts)
    assert printed["metrics"]["accuracy"] == pytest.approx(reported, abs=1e-12)
