"""Importing Inspect evaluation logs (.eval archives and .json): hand-built fixtures in Inspect's EvalLog layout."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import procbench
from procbench.cli import app
from procbench.imports import ImportFailed, import_log
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

PARADISE_TEST = SAMPLE_DATA_ROOT / "paradise" / "src" / "data" / "warning_test.csv"
LETTERS = "ABCD"


def _eval_spec(task: str, n_samples: int) -> dict[str, Any]:
    return {
        "eval_id": "hX2kRk9gRvXmrGv3r7YuZq",
        "run_id": "Bq3nGkH2tW8r7L5mYpQx9e",
        "created": "2026-11-22T00:10:00+00:00",
        "task": task,
        "task_id": "n8Ckq8mUvQ6hYzNgWk3J2r",
        "task_version": 0,
        "task_file": f"{task}.py",
        "task_args": {},
        "solver": None,
        "dataset": {
            "name": task,
            "location": f"{task}.csv",
            "samples": n_samples,
            "shuffled": False,
        },
        "model": "openai/gpt-4o-mini",
        "model_args": {},
        "config": {"epochs": 2},
        "revision": {"type": "git", "origin": "", "commit": "abc1234"},
        "packages": {"inspect_ai": "0.3.285"},
        "scorers": [
            {"name": "choice", "options": {}, "metrics": [{"name": "accuracy", "options": {}}]}
        ],
    }


def _sample(
    sample_id: Any,
    epoch: int,
    prompt: str,
    target: str,
    completion: str,
    *,
    choices: list[str] | None = None,
    answer: str | None = None,
    correct: bool = True,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    scorer = "choice" if choices else "model_graded_fact"
    return {
        "id": sample_id,
        "epoch": epoch,
        "input": prompt,
        "choices": choices,
        "target": target,
        "messages": [
            {"id": "m1", "content": prompt, "source": "input", "role": "user"},
            {
                "id": "m2",
                "content": [{"type": "text", "text": completion}],
                "source": "generate",
                "role": "assistant",
                "model": "gpt-4o-mini-2024-07-18",
            },
        ],
        "output": {
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [
                {
                    "message": {
                        "id": "m2",
                        "content": [{"type": "text", "text": completion}],
                        "source": "generate",
                        "role": "assistant",
                    },
                    "stop_reason": "stop",
                }
            ],
            "completion": completion,
            "usage": {"input_tokens": 120, "output_tokens": 12, "total_tokens": 132},
            "time": 0.8,
        },
        "scores": {
            scorer: {
                "value": "C" if correct else "I",
                "answer": answer,
                "explanation": completion,
                "metadata": {},
            }
        },
        "metadata": metadata or {},
        "store": {},
        "events": [],
        "model_usage": {},
        "total_time": 1.1,
        "working_time": 0.9,
        "uuid": f"u-{sample_id}-{epoch}",
        "error_retries": [],
        "attachments": {},
    }


def _paradise_rows() -> list[dict[str, str]]:
    with PARADISE_TEST.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def paradise_eval_archive(
    path: Path, chosen: list[int], *, relog_first_as: int | None = None
) -> Path:
    """An .eval archive of Inspect's multiple_choice() solver + choice() scorer over PARADISE warnings."""
    rows = _paradise_rows()
    samples = []
    for row, pick in zip(rows, chosen):
        endings = [row[f"ending{k}"] for k in range(4)]
        prompt = f"Which warning belongs to the goal?\n\n{row['sent2']}\n\n" + "\n".join(
            f"{LETTERS[k]}) {e}" for k, e in enumerate(endings)
        )
        for epoch in (1, 2):  # a second epoch always answers A: it must be ignored
            letter = LETTERS[pick] if epoch == 1 else "A"
            samples.append(
                _sample(
                    int(row[""]),
                    epoch,
                    prompt,
                    LETTERS[int(row["label"])],
                    f"ANSWER: {letter}",
                    choices=endings,
                    answer=letter,
                    correct=letter == LETTERS[int(row["label"])],
                )
            )
    header = {
        "version": 2,
        "status": "success",
        "eval": _eval_spec("paradise_warning", len(rows)),
        "plan": {
            "name": "plan",
            "steps": [{"solver": "multiple_choice", "params": {}}],
            "config": {},
        },
        "results": {
            "total_samples": len(rows) * 2,
            "completed_samples": len(rows) * 2,
            "scores": [
                {
                    "name": "choice",
                    "scorer": "choice",
                    "metrics": {"accuracy": {"name": "accuracy", "value": 0.5}},
                }
            ],
        },
        "stats": {
            "started_at": "2026-11-22T00:10:00+00:00",
            "completed_at": "2026-11-22T00:11:00+00:00",
            "model_usage": {},
        },
    }
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "_journal/start.json",
            json.dumps({"version": 2, "eval": header["eval"], "plan": header["plan"]}),
        )
        for sample in samples:
            archive.writestr(
                f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample)
            )
        if (
            relog_first_as is not None
        ):  # Inspect re-logged sample 0 of epoch 1: the later member wins
            first = dict(
                samples[0],
                scores={
                    "choice": {"value": "I", "answer": LETTERS[relog_first_as], "explanation": ""}
                },
                output={**samples[0]["output"], "completion": f"ANSWER: {LETTERS[relog_first_as]}"},
            )
            archive.writestr(f"samples/{first['id']}_epoch_1.json", json.dumps(first))
        archive.writestr(
            "summaries.json",
            json.dumps(
                [{"id": s["id"], "epoch": s["epoch"], "scores": s["scores"]} for s in samples]
            ),
        )
        archive.writestr("reductions.json", json.dumps([]))
        archive.writestr("header.json", json.dumps(header))
    return path


def test_paradise_eval_archive_imports_the_answer_letters(tmp_path: Path) -> None:
    rows = _paradise_rows()
    chosen = [
        (int(r["label"]) + (i % 2)) % 4 for i, r in enumerate(rows)
    ]  # every other answer wrong
    log = paradise_eval_archive(
        tmp_path / "2026-11-22T00-10-00_paradise-warning_n8Ckq8mU.eval", chosen
    )

    imported = import_log(
        "inspect", log, "paradise-warning", split="test", data_dir=SAMPLE_DATA_ROOT
    )
    assert sorted((r["id"], r["label"]) for r in imported.records) == [
        (int(r[""]), c) for r, c in zip(rows, chosen)
    ]
    result = procbench.score(
        "paradise-warning",
        imported.write_jsonl(tmp_path / "preds.jsonl"),
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    assert result.metrics["accuracy"] == pytest.approx(
        sum(c == int(r["label"]) for c, r in zip(chosen, rows)) / len(rows)
    )

    second = import_log("inspect", log, "paradise-warning", epoch=2)
    assert {r["label"] for r in second.records} == {0}


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_relogged_sample_counts_once_with_its_last_version(tmp_path: Path) -> None:
    rows = _paradise_rows()
    chosen = [int(r["label"]) for r in rows]
    log = paradise_eval_archive(tmp_path / "relog.eval", chosen, relog_first_as=(chosen[0] + 2) % 4)
    imported = import_log(
        "inspect", log, "paradise-warning", split="test", data_dir=SAMPLE_DATA_ROOT
    )
    assert len(imported.records) == len(rows)
    assert (
        next(r for r in imported.records if r["id"] == int(rows[0][""]))["label"]
        == (chosen[0] + 2) % 4
    )


def test_answers_are_read_from_the_completion_when_no_scorer_extracted_one(tmp_path: Path) -> None:
    rows = _paradise_rows()
    log = paradise_eval_archive(tmp_path / "a.eval", [int(r["label"]) for r in rows])
    rewritten = tmp_path / "b.eval"
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(rewritten, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.startswith("samples/"):
                sample = json.loads(data)
                sample["scores"] = {"match": {"value": 0, "answer": None}}
                sample["output"]["completion"] = "The second option fits best.\n\nANSWER: (B)"
                data = json.dumps(sample).encode()
            target.writestr(info, data)
    imported = import_log("inspect", rewritten, "paradise-warning")
    assert {r["label"] for r in imported.records} == {1}


def _rewrite_sample(log: Path, out: Path, member: str, change) -> Path:  # type: ignore[no-untyped-def]
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == member:
                sample = json.loads(data)
                change(sample)
                data = json.dumps(sample).encode()
            target.writestr(info, data)
    return out


def test_options_in_another_order_are_mapped_back(tmp_path: Path) -> None:
    """Inspect's shuffle_choices logs the options in the order shown; the answer letter refers to that order (issue #18)."""
    rows = _paradise_rows()
    labels = [int(r["label"]) for r in rows]
    log = paradise_eval_archive(tmp_path / "a.eval", labels)
    member = f"samples/{rows[2]['']}_epoch_1.json"
    shuffled = _rewrite_sample(
        log,
        tmp_path / "shuffled.eval",
        member,
        lambda s: s.update(choices=list(reversed(s["choices"]))),
    )
    imported = import_log(
        "inspect", shuffled, "paradise-warning", split="test", data_dir=SAMPLE_DATA_ROOT
    )
    chosen = {r["id"]: r["label"] for r in imported.records}
    # the letter the log states for that item (the gold's, in the original order) now points at the reversed list: 3 - label
    assert chosen[int(rows[2][""])] == 3 - labels[2] and imported.unshuffled == 1
    assert all(
        chosen[int(r[""])] == label for k, (r, label) in enumerate(zip(rows, labels)) if k != 2
    )

    def other_option(sample: dict) -> None:
        sample["choices"] = [*sample["choices"][:3], "an ending no gold item has"]

    changed = _rewrite_sample(log, tmp_path / "changed.eval", member, other_option)
    with pytest.raises(
        ImportFailed, match="options are not the gold item's endings in the gold order"
    ):
        import_log("inspect", changed, "paradise-warning", split="test", data_dir=SAMPLE_DATA_ROOT)


def openpi_json_log(
    path: Path, answers_by_id: dict[str, list[str]], *, failed: str | None = None
) -> Path:
    """A .json log (samples inline) of a generate() task over OpenPI steps; ids are OpenPI's."""
    samples = []
    for item_id, answers in answers_by_id.items():
        sample = _sample(
            item_id,
            1,
            f"{item_id.split('||')[0]} step {item_id.split('||')[1]}. Now, what happens?",
            "gold",
            ", ".join(answers),
            metadata={"url": item_id.split("||")[0]},
        )
        if item_id == failed:
            sample["error"] = {
                "message": "RateLimitError: 429",
                "traceback": "",
                "traceback_ansi": "",
            }
            sample["output"] = {"model": "gpt-4o-mini", "choices": [], "completion": ""}
        samples.append(sample)
    log = {
        "version": 2,
        "status": "success" if failed is None else "error",
        "eval": _eval_spec("openpi_states", len(samples)),
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
        "results": {"total_samples": len(samples), "completed_samples": len(samples), "scores": []},
        "stats": {
            "started_at": "2026-11-22T00:10:00+00:00",
            "completed_at": "2026-11-22T00:12:00+00:00",
            "model_usage": {},
        },
        "samples": samples,
    }
    path.write_text(json.dumps(log, indent=2), encoding="utf-8")
    return path


def _openpi_reference() -> tuple[Path, dict[str, list[str]]]:
    reference = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"
    return reference, {
        json.loads(line)["id"]: json.loads(line)["answers"]
        for line in reference.read_text().splitlines()
    }


def test_openpi_json_log_scores_like_the_original_prediction_file(tmp_path: Path) -> None:
    reference, answers = _openpi_reference()
    log = openpi_json_log(tmp_path / "2026-11-22T00-10-00_openpi-states.json", answers)
    imported = import_log("inspect", log, "openpi", split="test", data_dir=SAMPLE_DATA_ROOT)
    assert {r["id"]: r["answers"] for r in imported.records} == answers
    ours = procbench.score(
        "openpi",
        imported.write_jsonl(tmp_path / "preds.jsonl"),
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    original = procbench.score("openpi", reference, split="test", data_dir=SAMPLE_DATA_ROOT)
    assert ours.metrics == original.metrics and ours.slices == original.slices


def test_failed_samples_and_foreign_files_are_reported(tmp_path: Path) -> None:
    _, answers = _openpi_reference()
    failed_id = next(iter(answers))
    with pytest.raises(ImportFailed, match="RateLimitError: 429"):
        import_log(
            "inspect", openpi_json_log(tmp_path / "err.json", answers, failed=failed_id), "openpi"
        )
    (tmp_path / "other.json").write_text(json.dumps({"results": {}}))
    with pytest.raises(ImportFailed, match="not an Inspect EvalLog"):
        import_log("inspect", tmp_path / "other.json", "openpi")
    header_only = json.loads(openpi_json_log(tmp_path / "x.json", answers).read_text())
    header_only.pop("samples")
    (tmp_path / "no_samples.json").write_text(json.dumps(header_only))
    with pytest.raises(ImportFailed, match="no samples"):
        import_log("inspect", tmp_path / "no_samples.json", "openpi")


def test_cli_imports_an_inspect_archive(tmp_path: Path) -> None:
    rows = _paradise_rows()
    log = paradise_eval_archive(tmp_path / "run.eval", [int(r["label"]) for r in rows])
    out = tmp_path / "preds.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "import",
            "inspect",
            str(log),
            "--task",
            "paradise-warning",
            "--out",
            str(out),
            "--split",
            "test",
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert result.exit_code == 0, result.output
    scored = CliRunner().invoke(
        app,
        [
            "score",
            "paradise-warning",
            "--split",
            "test",
            "--predictions",
            str(out),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            "--json",
        ],
    )
    assert json.loads(scored.stdout)["metrics"]["accuracy"] == 1.0
    missing = CliRunner().invoke(
        app,
        [
            "import",
            "inspect",
            str(tmp_path / "none.eval"),
            "--task",
            "paradise-warning",
            "--out",
            str(out),
        ],
    )
    assert missing.exit_code == 4 and "no log file" in missing.stderr
