"""``procbench export eee`` / ``procbench import eee``: the board as Every Eval Ever records, and records back onto a board.

Every record and every instance line is validated with ``jsonschema`` against the EEE 0.3.0 schema files in
``../shared/formats/every-eval-ever`` (read there at test time; skipped with a reason when absent).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.api import load_task
from procbench.cli import app
from procbench.export.eee import export_eee
from procbench.imports.eee import EeeRefused, import_eee, parse_result_id, result_id
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, load_reported, provenance, submit
from tests.test_submissions_support import (
    STRONG,
    counts,
    dev_predictions,
    hidden_test_spec,
    submit_openpi,
)

SCHEMAS = PROJECT_ROOT.parent / "shared" / "formats" / "every-eval-ever"
cli = CliRunner()


@pytest.fixture(scope="module")
def validators() -> tuple[jsonschema.Draft7Validator, jsonschema.Draft7Validator]:
    files = [SCHEMAS / "eval.schema.json", SCHEMAS / "instance_level_eval.schema.json"]
    if not all(f.is_file() for f in files):
        pytest.skip(f"the EEE schema files are absent: place them in {SCHEMAS}")
    aggregate, instance = (json.loads(f.read_text(encoding="utf-8")) for f in files)
    return jsonschema.Draft7Validator(aggregate), jsonschema.Draft7Validator(instance)


def _query(db: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


@pytest.fixture(scope="module")
def board_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store on the bundled samples: PARADISE tip (two JSON-lines files, one CSV), OpenPI (two files), one hidden submission."""
    db = tmp_path_factory.mktemp("eee-store") / "board.duckdb"
    hidden = ""
    files_of = {
        "paradise-tip": ["sample-strong.jsonl", "sample-weak.jsonl", "sample-middling.csv"],
        "openpi": ["strong-model.jsonl", "template-guesser.jsonl"],
    }
    for task, files in files_of.items():
        spec, runner = load_task(task)
        for name in files:
            outcome = submit(
                SubmissionRequest(
                    split="test",
                    predictions=SAMPLE_SUBMISSIONS_DIR / task / name,
                    model=name.split(".")[0],
                    team="tests",
                ),
                spec,
                runner,
                data_root=SAMPLE_DATA_ROOT,
                db_path=db,
            )
            hidden = outcome.submission_id if name == "sample-weak.jsonl" else hidden
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE submissions SET hidden = TRUE WHERE submission_id = ?", [hidden])
    return db


@pytest.fixture(scope="module")
def exported(board_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("eee-out")
    export_eee(board_db, folder)
    return folder


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    """submission id -> record."""
    out = {}
    for path in sorted(folder.rglob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        out[record["eval_library"]["additional_details"]["submission_id"]] = record | {
            "_path": str(path)
        }
    return out


def _validate(
    validators: tuple[jsonschema.Draft7Validator, jsonschema.Draft7Validator], folder: Path
) -> tuple[int, int]:
    aggregate, instance = validators
    n_records = n_lines = 0
    for path in sorted(folder.rglob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        errors = [e.message for e in aggregate.iter_errors(record)]
        assert not errors, f"{path.name}: {errors[:3]}"
        n_records += 1
        detailed = record.get("detailed_evaluation_results")
        if detailed:
            samples = folder / detailed["file_path"]
            assert samples == path.with_name(path.stem + "_samples.jsonl") and samples.is_file()
            lines = samples.read_text(encoding="utf-8").splitlines()
            assert len(lines) == detailed["total_rows"]
            for line in lines:
                value = json.loads(line)
                errors = [e.message for e in instance.iter_errors(value)]
                assert not errors, f"{samples.name}: {errors[:3]}"
                assert value["evaluation_id"] == record["evaluation_id"]
                n_lines += 1
    return n_records, n_lines


def test_every_record_and_instance_line_is_valid_eee(
    validators: Any, board_db: Path, exported: Path
) -> None:
    n_records, n_lines = _validate(validators, exported)
    visible = _query(board_db, "SELECT count(DISTINCT submission_id) FROM board")[0][0]
    assert n_records == visible == 4  # the hidden submission is not exported
    # PARADISE's sample test split has 8 items, OpenPI's 22: one line per item of every submission with items
    assert n_lines == 2 * 8 + 2 * 22


def test_records_hold_the_boards_numbers_items_and_provenance(
    board_db: Path, exported: Path
) -> None:
    records = _records(exported)
    board = _query(
        board_db,
        "SELECT submission_id, slice, slice_value, metric, value, slice_n_items, fingerprint FROM board",
    )
    current = _query(
        board_db, "SELECT task, split, fingerprint, data_kind, data_digest FROM current_tasks"
    )
    tasks = {(t, s): (fp, kind, digest) for t, s, fp, kind, digest in current}
    assert set(records) == {row[0] for row in board}
    for sid, slice_name, slice_value, metric, value, n, fingerprint in board:
        record = records[sid]
        details = record["eval_library"]["additional_details"]
        task, split = details["task"], details["split"]
        result = next(
            r
            for r in record["evaluation_results"]
            if r["evaluation_result_id"] == result_id(task, split, metric, slice_name, slice_value)
        )
        assert result["score_details"]["score"] == value
        assert result["score_details"]["uncertainty"]["num_samples"] == n
        assert details["fingerprint"] == fingerprint == tasks[(task, split)][0]
        assert (
            details["data_kind"] == tasks[(task, split)][1] == "sample"
            and details["data_digest"] == ""
        )
        assert record["source_metadata"]["source_type"] == "evaluation_run"
        assert record["source_metadata"]["evaluator_relationship"] == "third_party"


def test_intervals_are_the_boards_own(
    board_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the interval floor the record carries the board's interval and its method; below it, none and why."""
    from procbench.leaderboard import analysis, queries
    from procbench.leaderboard.model import TaskInfo

    records = _records(_export(board_db, tmp_path / "default"))
    for record in records.values():
        whole = [
            r
            for r in record["evaluation_results"]
            if "slice" not in r["score_details"].get("details", {})
        ]
        assert whole and all(
            "confidence_interval" not in r["score_details"]["uncertainty"] for r in whole
        )
        assert all(
            "only" in r["score_details"]["details"]["no_interval"] for r in whole
        )  # 8 and 22 items: under the floor of 30
    monkeypatch.setenv(analysis.MIN_INTERVAL_ENV, "5")
    records = _records(_export(board_db, tmp_path / "floor5"))
    compared = 0
    for sid, record in records.items():
        details = record["eval_library"]["additional_details"]
        info = TaskInfo.from_row(queries.task_row(board_db, details["task"], details["split"]))  # type: ignore[arg-type]
        for result in record["evaluation_results"]:
            _, _, slice_name, _, metric = parse_result_id(result["evaluation_result_id"])  # type: ignore[misc]
            if slice_name:
                continue
            board = analysis.uncertainty(board_db, info, sid, metric)
            ci = result["score_details"]["uncertainty"].get("confidence_interval")
            if board.interval is None:
                assert ci is None
                continue
            assert (ci["lower"], ci["upper"], ci["confidence_level"]) == (
                board.interval.low,
                board.interval.high,
                board.interval.confidence,
            )
            assert (
                result["score_details"]["uncertainty"]["num_bootstrap_samples"]
                == board.interval.n_resamples
                == 1000
            )
            assert "bootstrap" in ci["method"] and "seed" in ci["method"]
            compared += 1
    assert compared > 10


def _export(db: Path, folder: Path, **kwargs: Any) -> Path:
    export_eee(db, folder, **kwargs)
    return folder


def test_a_hidden_split_has_aggregates_but_no_instance_file(
    validators: Any, tmp_path: Path
) -> None:
    db = tmp_path / "hidden.duckdb"
    spec_file = hidden_test_spec(tmp_path)
    submit_openpi(db, STRONG, spec_file=spec_file, split="test")
    submit_openpi(db, dev_predictions(tmp_path), spec_file=spec_file, split="dev")
    folder = _export(db, tmp_path / "out")
    _validate(validators, folder)
    records = list(_records(folder).values())
    by_split = {r["eval_library"]["additional_details"]["split"]: r for r in records}
    assert set(by_split) == {"dev", "test"}
    assert (
        "detailed_evaluation_results" not in by_split["test"]
        and "detailed_evaluation_results" in by_split["dev"]
    )
    assert [p.name for p in folder.rglob("*_samples.jsonl")] == [
        Path(by_split["dev"]["detailed_evaluation_results"]["file_path"]).name
    ]
    for result in by_split["test"][
        "evaluation_results"
    ]:  # only what the board shows: slices of at least 5 items
        assert result["score_details"]["uncertainty"]["num_samples"] >= 5
    text = "\n".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())
    for (item,) in _query(
        db,
        "SELECT DISTINCT item_id FROM item_scores i JOIN submissions s USING (submission_id) WHERE s.split = 'test'",
    ):
        assert item not in text  # no item of the hidden split is named anywhere


def test_paper_rows_are_documentation_records(
    validators: Any, data_root: Path, tmp_path: Path
) -> None:
    """Over the real OpenPI test split the board shows the spec's reported rows; each is a documentation-sourced record."""
    db = tmp_path / "real.duckdb"
    spec, runner = load_task("openpi")
    load_reported(spec, runner, data_root=data_root, db_path=db)
    folder = _export(db, tmp_path / "out", task="openpi")
    n_records, n_lines = _validate(validators, folder)
    assert (
        n_lines == 0
        and n_records
        == _query(db, "SELECT count(DISTINCT submission_id) FROM board WHERE task = 'openpi'")[0][0]
        > 0
    )
    reported = {
        (row.system, s, v, m): float(x)
        for row in spec.reported
        for s, v in [row.slice or ("", "")]
        for m, x in row.values
        if row.split == "test"
    }
    seen = 0
    for record in _records(folder).values():
        assert record["source_metadata"]["source_type"] == "documentation"
        assert record["eval_library"]["additional_details"][
            "data_digest"
        ] == provenance.lock_digest(spec, "test")
        for result in record["evaluation_results"]:
            _, _, s, v, m = parse_result_id(result["evaluation_result_id"])  # type: ignore[misc]
            assert (
                result["score_details"]["score"]
                == reported[(record["model_info"]["name"], s, v, m)]
            )
            assert (
                "uncertainty" not in result["score_details"]
            )  # a paper's figure: no items to resample
            seen += 1
    assert seen == len(reported)


def test_round_trip_rescores_to_the_original_numbers(
    board_db: Path, exported: Path, tmp_path: Path
) -> None:
    """A record whose instances hold the predictions goes through intake again and gives back the board's numbers."""
    fresh = tmp_path / "fresh.duckdb"
    originals = {
        sid: r
        for sid, r in _records(exported).items()
        if r.get("detailed_evaluation_results", {}).get("additional_details", {}).get("rescorable")
        == "true"
    }
    assert len(originals) == 3  # the CSV file's instances cannot carry a prediction line per item
    for sid, record in originals.items():
        done = import_eee(Path(record["_path"]), db_path=fresh, data_root=SAMPLE_DATA_ROOT)
        assert done.how == "rescored" and done.created and not done.warnings
        figures = "SELECT slice, slice_value, metric, value FROM board WHERE submission_id = ?"
        before = {(s, v, m): x for s, v, m, x in _query(board_db, figures, [sid])}
        after = {(s, v, m): x for s, v, m, x in _query(fresh, figures, [done.submission_id])}
        assert after == before
        row = _query(
            fresh,
            "SELECT is_reference, model FROM submissions WHERE submission_id = ?",
            [done.submission_id],
        )
        assert row == [(False, record["model_info"]["name"])]


def test_a_record_without_instances_becomes_an_unranked_external_row(
    board_db: Path, exported: Path, tmp_path: Path
) -> None:
    db = tmp_path / "copy.duckdb"
    shutil.copy(board_db, db)
    csv = next(
        r for r in _records(exported).values() if r["model_info"]["name"] == "sample-middling"
    )
    assert csv["detailed_evaluation_results"]["additional_details"]["rescorable"] == "false"
    before = counts(db)
    done = import_eee(Path(csv["_path"]), db_path=db, data_root=SAMPLE_DATA_ROOT)
    assert (
        done.how == "external"
        and done.created
        and any("not re-scorable" in w for w in done.warnings)
    )
    row = _query(
        db,
        "SELECT is_reference, team, n_items, reported_on, metadata_json FROM submissions WHERE submission_id = ?",
        [done.submission_id],
    )[0]
    assert row[:4] == (
        True,
        "reference",
        0,
        "",
    )  # the record declares the sample data ('' digest): no sample board shows it
    assert (
        json.loads(row[4])["external"] == "every-eval-ever"
        and json.loads(row[4])["source_type"] == "evaluation_run"
    )
    figures = "SELECT slice, slice_value, metric, value FROM aggregates WHERE submission_id = ?"
    stored = {(s, v, m): x for s, v, m, x in _query(db, figures, [done.submission_id])}
    claimed = {
        parse_result_id(r["evaluation_result_id"])[2:]: r["score_details"]["score"]
        for r in csv["evaluation_results"]
    }  # type: ignore[index]
    assert stored == claimed
    after = counts(db)
    assert (
        after["item_scores"] == before["item_scores"]
        and after["raw_files"] == before["raw_files"]
        and after["submissions"] == before["submissions"] + 1
    )
    again = import_eee(Path(csv["_path"]), db_path=db, data_root=SAMPLE_DATA_ROOT)
    assert again.submission_id == done.submission_id and not again.created


def test_a_foreign_record_is_shown_over_the_locked_data(data_root: Path, tmp_path: Path) -> None:
    """A record from another harness (no procbench provenance) is taken as computed on the task's locked split, like a paper row."""
    db = tmp_path / "real.duckdb"
    spec, runner = load_task("openpi")
    load_reported(spec, runner, data_root=data_root, db_path=db)
    record = _foreign_record(score=42.0, unit="percent")
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    done = import_eee(path, db_path=db, data_root=data_root, task="openpi", split="test")
    assert done.how == "external"
    shown = _query(
        db,
        "SELECT metric, value, is_reference FROM board WHERE submission_id = ?",
        [done.submission_id],
    )
    assert shown == [("rouge_f1", 0.42, True)]
    from procbench.leaderboard import boardview, queries
    from procbench.leaderboard.model import TaskInfo

    view = boardview.build(db, TaskInfo.from_row(queries.task_row(db, "openpi", "test")))  # type: ignore[arg-type]
    ranks = dict(zip(view.export["submission_id"], view.export["rank"]))
    assert ranks[done.submission_id] is None  # listed with its source, unranked
    assert [r for sid, r in ranks.items() if sid != done.submission_id] == [
        1
    ]  # the paper row keeps its rank; the external row takes no place
    source = dict(zip(view.export["submission_id"], view.export["source"]))[done.submission_id]
    assert source == "Every Eval Ever: Other Lab"


def _foreign_record(score: float = 0.5, unit: str = "proportion") -> dict[str, Any]:
    return {
        "schema_version": "0.3.0",
        "evaluation_id": "other/openpi/some-model/1700000000",
        "retrieved_timestamp": "1700000000",
        "source_metadata": {
            "source_type": "evaluation_run",
            "source_organization_name": "Other Lab",
            "evaluator_relationship": "first_party",
        },
        "model_info": {
            "name": "some-model",
            "id": "lab/some-model",
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "eval_library": {"name": "other-harness", "version": "1.0"},
        "evaluation_results": [
            {
                "evaluation_name": "openpi",
                "source_data": {"dataset_name": "OpenPI", "source_type": "other"},
                "metric_config": {
                    "metric_id": "rouge_f1",
                    "lower_is_better": False,
                    "metric_unit": unit,
                },
                "score_details": {"score": score},
            },
            {
                "evaluation_name": "something else",
                "source_data": {"dataset_name": "OpenPI", "source_type": "other"},
                "metric_config": {"metric_id": "perplexity", "lower_is_better": True},
                "score_details": {"score": 3.0},
            },
        ],
    }


def _refused(db: Path, path: Path, **kwargs: Any) -> str:
    before = counts(db)
    with pytest.raises(EeeRefused) as caught:
        import_eee(path, db_path=db, data_root=SAMPLE_DATA_ROOT, **kwargs)
    assert counts(db) == before
    message = str(caught.value)
    assert "\n" not in message and message
    return message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: "{not json", "not valid JSON"),
        (lambda r: "[1, 2]", "must be an object"),
        (
            lambda r: {k: v for k, v in r.items() if k != "model_info"},
            "model_info must be an object",
        ),
        (lambda r: r | {"schema_version": "0.1.0"}, "is not 0.3.x"),
        (
            lambda r: r
            | {"source_metadata": r["source_metadata"] | {"evaluator_relationship": "friend"}},
            "evaluator_relationship",
        ),
        (lambda r: r | {"evaluation_results": []}, "non-empty list"),
        (
            lambda r: r
            | {
                "evaluation_results": [
                    r["evaluation_results"][0] | {"score_details": {"score": "high"}}
                ]
            },
            "finite number",
        ),
        (lambda r: json.dumps(r).replace('"score": 0.5', '"score": NaN'), "finite number"),
        (
            lambda r: r | {"evaluation_results": [r["evaluation_results"][1]]},
            "none of its 1 results is a metric of openpi",
        ),
        (lambda r: "[" * 5000 + "]" * 5000, "nested"),
        (lambda r: b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_malformed_records_are_one_line_refusals_that_store_nothing(
    board_db: Path, tmp_path: Path, change: Any, expected: str
) -> None:
    db = tmp_path / "copy.duckdb"
    shutil.copy(board_db, db)
    value = change(_foreign_record())
    path = tmp_path / "record.json"
    path.write_bytes(
        value
        if isinstance(value, bytes)
        else (value if isinstance(value, str) else json.dumps(value)).encode("utf-8")
    )
    assert expected in _refused(db, path, task="openpi")


def test_unknown_tasks_paths_and_huge_records_are_refused(
    board_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "copy.duckdb"
    shutil.copy(board_db, db)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(_foreign_record()), encoding="utf-8")
    assert "unknown task 'no-such-task'" in _refused(db, path, task="no-such-task")
    assert "is not a task name" in _refused(db, path, task="../specs/openpi")
    assert "does not say which procbench task" in _refused(db, path)
    assert "has no split 'train'" in _refused(db, path, task="openpi", split="train")
    from procbench.imports import eee

    monkeypatch.setattr(eee, "MAX_RECORD_BYTES", 100)
    assert "over the limit of 100 bytes" in _refused(db, path, task="openpi")


def test_hostile_instances_are_refused_or_imported_unranked(
    board_db: Path, exported: Path, tmp_path: Path
) -> None:
    db = tmp_path / "copy.duckdb"
    shutil.copy(board_db, db)
    record = next(
        r for r in _records(exported).values() if r["model_info"]["name"] == "strong-model"
    )
    folder = tmp_path / "rec"
    folder.mkdir()
    rec_path = folder / Path(record["_path"]).name
    samples = Path(record["_path"]).with_name(Path(record["_path"]).stem + "_samples.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines()
    rec_path.write_text(
        json.dumps({k: v for k, v in record.items() if k != "_path"}), encoding="utf-8"
    )
    (folder / samples.name).write_text(
        "\n".join(lines[:-1] + [lines[-1].replace(record["evaluation_id"], "someone-else")]) + "\n",
        encoding="utf-8",
    )
    assert "evaluation_id differs" in _refused(db, rec_path)
    (folder / samples.name).write_text("\n".join(lines[:-1] + ["{broken"]) + "\n", encoding="utf-8")
    assert "line 22: not valid JSON" in _refused(db, rec_path)
    # a prediction that smuggles a second line in: not re-scorable, so the figures become an external row
    bad = json.loads(lines[0])
    bad["output"]["raw"] = ['{"id": "x"}\n{"id": "y"}']
    (folder / samples.name).write_text(
        "\n".join([json.dumps(bad)] + lines[1:]) + "\n", encoding="utf-8"
    )
    done = import_eee(rec_path, db_path=db, data_root=SAMPLE_DATA_ROOT)
    assert done.how == "external"


def test_predictions_the_task_refuses_store_nothing(
    board_db: Path, exported: Path, tmp_path: Path
) -> None:
    from procbench.runners.runtime._types import InvalidPredictions

    db = tmp_path / "copy.duckdb"
    shutil.copy(board_db, db)
    record = next(
        r for r in _records(exported).values() if r["model_info"]["name"] == "strong-model"
    )
    folder = tmp_path / "rec"
    folder.mkdir()
    rec_path = folder / Path(record["_path"]).name
    rec_path.write_text(
        json.dumps({k: v for k, v in record.items() if k != "_path"}), encoding="utf-8"
    )
    samples = Path(record["_path"]).with_name(Path(record["_path"]).stem + "_samples.jsonl")
    lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line["output"]["raw"] = ['{"id": "not-an-item", "answers": []}']
    (folder / samples.name).write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    before = counts(db)
    with pytest.raises(InvalidPredictions):
        import_eee(rec_path, db_path=db, data_root=SAMPLE_DATA_ROOT)
    assert counts(db) == before


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=12), inner, max_size=5),
        max_leaves=30,
    )
)
def test_any_json_value_is_imported_or_refused_in_one_line(
    board_db: Path, tmp_path_factory: pytest.TempPathFactory, value: Any
) -> None:
    folder = tmp_path_factory.mktemp("hyp")
    db = folder / "copy.duckdb"
    shutil.copy(board_db, db)
    path = folder / "record.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    before = counts(db)
    try:
        import_eee(path, db_path=db, data_root=SAMPLE_DATA_ROOT, task="openpi")
    except EeeRefused as exc:
        assert "\n" not in str(exc)
        assert counts(db) == before
    else:  # only a record with the schema's required parts gets this far
        assert isinstance(value, dict) and {
            "source_metadata",
            "model_info",
            "evaluation_results",
        } <= set(value)


@settings(max_examples=40, deadline=None)
@given(
    st.text(min_size=1, max_size=30).filter(
        lambda t: "/" not in t and "[" not in t and "]" not in t
    ),
    st.text(max_size=10).filter(lambda t: "=" not in t and "]" not in t and "/" not in t),
)
def test_result_ids_read_back(name: str, value: str) -> None:
    assert parse_result_id(result_id("openpi", "test", name)) == ("openpi", "test", "", "", name)
    assert parse_result_id(result_id("openpi", "test", name, "domain", value)) == (
        "openpi",
        "test",
        "domain",
        value,
        name,
    )


def test_the_command_line(board_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "eee"
    result = cli.invoke(app, ["export", "eee", "openpi", "--db", str(board_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 record(s), 2 per-instance file(s) (44 line(s))" in result.output
    record = sorted(out.rglob("*.json"))[0]
    fresh = tmp_path / "fresh.duckdb"
    result = cli.invoke(
        app, ["import", "eee", str(record), "--db", str(fresh), "--data-dir", str(SAMPLE_DATA_ROOT)]
    )
    assert result.exit_code == 0, result.output
    assert "re-scored by the board (ranked)" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    result = cli.invoke(app, ["import", "eee", str(bad), "--db", str(fresh), "--task", "openpi"])
    assert result.exit_code == 8  # invalid input (procbench.exit_codes)
    assert (
        result.output.splitlines()[0].startswith("error: bad.json: not valid JSON")
        and "nothing was stored" in result.output
    )
    result = cli.invoke(
        app, ["export", "eee", "no-such-task", "--db", str(board_db), "--out", str(out)]
    )
    assert result.exit_code == 4 and "no board of task 'no-such-task'" in result.output
