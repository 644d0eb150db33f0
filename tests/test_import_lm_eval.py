"""Importing lm-evaluation-harness ``--log_samples`` files: hand-built fixtures in the harness's layout."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import procbench
from procbench.cli import app
from procbench.imports import ImportFailed, ImportOptions, import_log, mapping_for
from procbench.imports.convert import to_records
from procbench.imports.lm_eval import parse_record
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

PARADISE_TEST = SAMPLE_DATA_ROOT / "paradise" / "src" / "data" / "tip_test.csv"
OPENPI_TEST = SAMPLE_DATA_ROOT / "openpi" / "data" / "gold" / "test"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _paradise_rows() -> list[dict[str, Any]]:
    """The rows as `datasets` loads the CSV (pandas names the unnamed index column "Unnamed: 0")."""
    with PARADISE_TEST.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [
        {
            ("Unnamed: 0" if k == "" else k): (int(v) if k in ("", "label") else v)
            for k, v in row.items()
        }
        for row in rows
    ]


def paradise_samples(
    choose: list[int], *, new_layout: bool, lengths_flip: int | None = None
) -> list[dict[str, Any]]:
    """A multiple_choice task's log: log-likelihood -1.0 for the chosen ending, lower for the others.

    With ``lengths_flip`` = k, item k gets a second-best option that wins once normalised by length
    (acc_norm differs from acc there), as long endings do in practice.
    """
    lines = []
    for doc_id, (row, chosen) in enumerate(zip(_paradise_rows(), choose)):
        context = f"Goal: {row['sent2']}\nTip:"
        endings = [row[f"ending{k}"] for k in range(4)]
        lls = [-1.0 if k == chosen else -9.0 - k for k in range(4)]
        if (
            lengths_flip == doc_id
        ):  # a longer option, less likely in total but more likely per character
            runner_up = max((k for k in range(4) if k != chosen), key=lambda k: len(endings[k]))
            ratio = len(endings[runner_up]) / len(endings[chosen])
            assert ratio > 1, "the flipped item needs a longer option than the chosen one"
            lls[runner_up] = (-1.0 - ratio) / 2
        acc = float(max(range(4), key=lambda k: (lls[k], -k)) == row["label"])
        norm = [ll / len(e) for ll, e in zip(lls, endings)]
        acc_norm = float(max(range(4), key=lambda k: (norm[k], -k)) == row["label"])
        if new_layout:  # lm-eval >= 0.4.3: arguments keyed gen_args_i, responses as strings
            arguments: Any = {
                f"gen_args_{k}": {"arg_0": context, "arg_1": f" {e}"} for k, e in enumerate(endings)
            }
            resps: Any = [[[str(ll), "False"]] for ll in lls]
            filtered: Any = [[str(ll), "False"] for ll in lls]
        else:
            arguments = [[context, f" {e}"] for e in endings]
            resps = [[[ll, False]] for ll in lls]
            filtered = [[ll, False] for ll in lls]
        lines.append(
            {
                "doc_id": doc_id,
                "doc": row,
                "target": row["label"],
                "arguments": arguments,
                "resps": resps,
                "filtered_resps": filtered,
                "filter": "none",
                "metrics": ["acc", "acc_norm"],
                "doc_hash": _hash(json.dumps(row, indent=2)),
                "prompt_hash": _hash(context),
                "target_hash": _hash(str(row["label"])),
                "acc": acc,
                "acc_norm": acc_norm,
            }
        )
    return lines


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("new_layout", [False, True])
def test_paradise_multiple_choice_log_scores_as_the_harness_counted(
    tmp_path: Path, new_layout: bool
) -> None:
    rows = _paradise_rows()
    choose = [
        (row["label"] + (1 if i % 3 == 0 else 0)) % 4 for i, row in enumerate(rows)
    ]  # every third item wrong
    log = _write(
        tmp_path / "samples_paradise_tip_2026-11-22T00-00-00.jsonl",
        paradise_samples(choose, new_layout=new_layout),
    )

    imported = import_log("lm-eval", log, "paradise-tip", split="test", data_dir=SAMPLE_DATA_ROOT)
    assert [r["label"] for r in imported.records] == choose and [
        r["id"] for r in imported.records
    ] == list(range(len(rows)))
    result = procbench.score(
        "paradise-tip",
        imported.write_jsonl(tmp_path / "preds.jsonl"),
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    logged_acc = [json.loads(line)["acc"] for line in log.read_text().splitlines()]
    assert result.metrics["accuracy"] == pytest.approx(sum(logged_acc) / len(logged_acc))
    assert result.metrics["accuracy"] == pytest.approx(
        sum(c == r["label"] for c, r in zip(choose, rows)) / len(rows)
    )


def test_acc_norm_picks_per_character_like_the_harness(tmp_path: Path) -> None:
    rows = _paradise_rows()
    choose = [row["label"] for row in rows]
    lines = paradise_samples(choose, new_layout=True, lengths_flip=2)
    log = _write(tmp_path / "samples.jsonl", lines)
    plain = import_log("lm-eval", log, "paradise-tip", split="test", data_dir=SAMPLE_DATA_ROOT)
    normed = import_log(
        "lm-eval",
        log,
        "paradise-tip",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
        options=ImportOptions(choice_rule="acc_norm"),
    )
    assert [r["label"] == row["label"] for r, row in zip(plain.records, rows)] == [
        bool(line["acc"]) for line in lines
    ]
    assert [r["label"] == row["label"] for r, row in zip(normed.records, rows)] == [
        bool(line["acc_norm"]) for line in lines
    ]
    assert plain.records != normed.records


def openpi_samples(answers_by_id: dict[str, list[str]]) -> list[dict[str, Any]]:
    """A generate_until task over upstream's formatted_for_gpt2 rows: one generation per step."""
    questions = {
        json.loads(line)["id"]: json.loads(line)
        for line in (OPENPI_TEST / "id_answers.jsonl").read_text().splitlines()
    }
    lines = []
    for doc_id, (item_id, answers) in enumerate(answers_by_id.items()):
        doc = {
            "id": item_id,
            "question": f"step {doc_id}. Now, what happens?",
            "answer": ", ".join(questions[item_id]["answers"]),
        }
        generation = ", ".join(answers)
        lines.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": doc["answer"],
                "arguments": [
                    [doc["question"], {"until": ["\n"], "max_gen_toks": 256, "do_sample": False}]
                ],
                "resps": [[generation + "\n"]],
                "filtered_resps": [generation],
                "filter": "none",
                "metrics": ["bleu"],
                "doc_hash": _hash(json.dumps(doc)),
                "prompt_hash": _hash(doc["question"]),
                "target_hash": _hash(doc["answer"]),
                "bleu": 0.0,
            }
        )
    return lines


def test_openpi_generations_score_like_the_original_prediction_file(tmp_path: Path) -> None:
    reference = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"
    answers = {
        json.loads(line)["id"]: json.loads(line)["answers"]
        for line in reference.read_text().splitlines()
    }
    log = _write(tmp_path / "samples_openpi_gen.jsonl", openpi_samples(answers))

    imported = import_log("lm-eval", log, "openpi", split="test", data_dir=SAMPLE_DATA_ROOT)
    assert {r["id"]: r["answers"] for r in imported.records} == answers
    ours = procbench.score(
        "openpi",
        imported.write_jsonl(tmp_path / "preds.jsonl"),
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    original = procbench.score("openpi", reference, split="test", data_dir=SAMPLE_DATA_ROOT)
    assert ours.metrics == original.metrics and ours.slices == original.slices


def test_raw_resps_are_used_on_request(tmp_path: Path) -> None:
    reference = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"
    answers = {
        json.loads(line)["id"]: json.loads(line)["answers"]
        for line in reference.read_text().splitlines()
    }
    lines = openpi_samples(answers)
    lines[0]["resps"] = [
        [
            "location of kettle was on shelf before and on stove afterwards, other was a before and b afterwards\n"
        ]
    ]
    imported = import_log("lm-eval", _write(tmp_path / "s.jsonl", lines), "openpi", raw=True)
    assert imported.records[0]["answers"] == [
        "location of kettle was on shelf before and on stove afterwards",
        "other was a before and b afterwards",
    ]


def test_problems_are_all_listed_with_their_lines(tmp_path: Path) -> None:
    rows = _paradise_rows()
    lines = paradise_samples([row["label"] for row in rows], new_layout=False)
    lines[1]["doc"]["sent2"] = "Bake Bread"  # another task's item
    lines[3]["doc"]["Unnamed: 0"] = 999  # not a test row
    lines[4]["filtered_resps"] = lines[4]["filtered_resps"][:3]  # three options
    log = tmp_path / "bad.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines) + "{not json\n")
    with pytest.raises(ImportFailed) as failure:
        import_log("lm-eval", log, "paradise-tip", split="test", data_dir=SAMPLE_DATA_ROOT)
    text = failure.value.render()
    assert f"line {len(lines) + 1}: not valid JSON" in text
    with pytest.raises(ImportFailed) as failure:
        import_log(
            "lm-eval",
            _write(tmp_path / "bad2.jsonl", lines),
            "paradise-tip",
            split="test",
            data_dir=SAMPLE_DATA_ROOT,
        )
    text = failure.value.render()
    assert "line 2: item 1: its goal 'Bake Bread'" in text
    assert "line 4: item 999 is not an item of this split" in text
    assert "line 5: item 4: 3 option log-likelihoods, the task has 4 options" in text
    assert len(failure.value.problems) == 3


def test_several_filters_need_a_choice(tmp_path: Path) -> None:
    reference = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"
    answers = {
        json.loads(line)["id"]: json.loads(line)["answers"]
        for line in reference.read_text().splitlines()
    }
    lines = openpi_samples(answers)
    strict = [
        {**line, "filter": "strict-match", "filtered_resps": ["There will be no change."]}
        for line in lines
    ]
    log = _write(tmp_path / "two_filters.jsonl", lines + strict)
    with pytest.raises(ImportFailed, match="several filters \\(none, strict-match\\)"):
        import_log("lm-eval", log, "openpi")
    chosen = import_log(
        "lm-eval",
        log,
        "openpi",
        filter_name="strict-match",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    assert {tuple(r["answers"]) for r in chosen.records} == {("There will be no change.",)}


def test_a_partial_log_imports_with_a_warning_and_the_scorer_decides(tmp_path: Path) -> None:
    rows = _paradise_rows()
    lines = paradise_samples([row["label"] for row in rows], new_layout=True)[
        :5
    ]  # run with --limit 5
    imported = import_log(
        "lm-eval",
        _write(tmp_path / "limited.jsonl", lines),
        "paradise-tip",
        split="test",
        data_dir=SAMPLE_DATA_ROOT,
    )
    assert len(imported.records) == 5
    assert imported.warnings and f"{len(rows) - 5} of {len(rows)} items" in imported.warnings[0]


@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_characters=",", blacklist_categories=("Cs",)),
            min_size=1,
        ).filter(str.strip),
        min_size=1,
        max_size=8,
    )
)
def test_generated_lists_round_trip_through_the_separator(answers: list[str]) -> None:
    record = {
        "doc_id": 0,
        "doc": {"id": "x||1"},
        "filtered_resps": [", ".join(answers)],
        "resps": [[", ".join(answers)]],
    }
    output = parse_record(record, "line 1")
    imported = to_records([output], mapping_for("openpi"))  # type: ignore[list-item]
    assert imported.records[0]["answers"] == [a.strip() for a in answers]


@given(st.lists(st.floats(min_value=-1e6, max_value=0, allow_nan=False), min_size=4, max_size=4))
def test_multiple_choice_takes_the_first_highest_log_likelihood(lls: list[float]) -> None:
    record = {"doc_id": 3, "doc": {}, "filtered_resps": [[str(ll), "False"] for ll in lls]}
    imported = to_records([parse_record(record, "line 1")], mapping_for("paradise-tip"))  # type: ignore[list-item]
    assert imported.records == ({"id": 3, "label": lls.index(max(lls))},)


def test_cli_import_writes_the_file_or_lists_the_problems(tmp_path: Path) -> None:
    rows = _paradise_rows()
    log = _write(
        tmp_path / "samples.jsonl",
        paradise_samples([row["label"] for row in rows], new_layout=True),
    )
    out = tmp_path / "preds.jsonl"
    ok = CliRunner().invoke(
        app,
        [
            "import",
            "lm-eval",
            str(log),
            "--task",
            "paradise-tip",
            "--out",
            str(out),
            "--split",
            "test",
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert f"{len(rows)} prediction(s)" in ok.stdout
    scored = CliRunner().invoke(
        app,
        [
            "score",
            "paradise-tip",
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

    wrong_split = CliRunner().invoke(
        app,
        [
            "import",
            "lm-eval",
            str(log),
            "--task",
            "paradise-tip",
            "--out",
            str(tmp_path / "x.jsonl"),
            "--split",
            "dev",
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert wrong_split.exit_code == 8 and "no prediction file was written" in wrong_split.stderr
    assert not (tmp_path / "x.jsonl").exists()
    unmapped = CliRunner().invoke(
        app,
        ["import", "lm-eval", str(log), "--task", "propara", "--out", str(tmp_path / "y.jsonl")],
    )
    assert unmapped.exit_code == 3 and "no import mapping for task 'propara'" in unmapped.stderr
