"""``procbench export hub-dataset``: the board as a dataset folder, and its upload to a loopback fake of the Hub API."""

from __future__ import annotations

import base64
import gzip
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
import yaml
from huggingface_hub import DatasetCard
from typer.testing import CliRunner

from procbench.api import load_task
from procbench.cli import app
from procbench.export.hub_dataset import PublishError, push_folder, render_card, write_dataset
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.submissions import SubmissionRequest, load_reported, submit
from procbench.submissions.store import writer

CLOSED_PORT_URL = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _hub_online_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another module may have switched huggingface_hub to offline mode process-wide (it reads HF_HUB_OFFLINE at import)."""
    import huggingface_hub.constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


@pytest.fixture(scope="module")
def board_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store: PARADISE tip and OpenPI sample submissions, OpenPI's paper rows, one hidden submission."""
    db = tmp_path_factory.mktemp("store") / "board.duckdb"
    stored = {}
    for task, files in {
        "paradise-tip": ["sample-strong.jsonl", "sample-weak.jsonl", "sample-middling.csv"],
        "openpi": ["strong-model.jsonl", "template-guesser.jsonl"],
    }.items():
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
            stored[(task, name)] = outcome.submission_id
    spec, runner = load_task("openpi")
    load_reported(spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db)
    with writer(db) as con:
        con.execute(
            "UPDATE submissions SET hidden = TRUE WHERE submission_id = ?",
            [stored[("paradise-tip", "sample-weak.jsonl")]],
        )
    return db


def _board(db: Path, task: str) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return pl.from_arrow(
            con.sql(
                "SELECT submission_id, slice, slice_value, metric, value FROM board WHERE task = ?",
                params=[task],
            ).to_arrow_table()
        )  # type: ignore[return-value]


def test_the_folder_holds_the_board_per_task_and_split(board_db: Path, tmp_path: Path) -> None:
    folder = write_dataset(board_db, tmp_path / "dataset")
    assert set(folder.tasks) == {"paradise-tip", "openpi"}
    for task in folder.tasks:
        exported = pl.read_parquet(tmp_path / "dataset" / "data" / task / "test.parquet")
        board = _board(board_db, task)
        assert set(exported["submission_id"]) == set(board["submission_id"])
        for row in board.iter_rows(named=True):  # every figure of the board, in its metric column
            match = exported.filter(
                (pl.col("submission_id") == row["submission_id"])
                & (pl.col("slice") == row["slice"])
                & (pl.col("slice_value") == row["slice_value"])
            )
            assert match.height == 1 and match[row["metric"]][0] == row["value"]
    paradise = pl.read_parquet(tmp_path / "dataset/data/paradise-tip/test.parquet")
    assert "sample-weak" not in set(paradise["model"])  # hidden on the board, absent here
    assert paradise.columns[:4] == ["task", "split", "slice", "slice_value"] and paradise.columns[
        -4:
    ] == [
        "accuracy",
        "weighted_p",
        "weighted_r",
        "weighted_f1",
    ]
    assert folder.rows == sum(pl.read_parquet(f).height for f in folder.files)


def test_the_card_and_metrics_describe_configs_metrics_and_licences(
    board_db: Path, tmp_path: Path
) -> None:
    write_dataset(board_db, tmp_path / "dataset")
    card = (tmp_path / "dataset" / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    configs = {c["config_name"]: c["data_files"] for c in header["configs"]}
    assert configs == {
        "openpi": [{"split": "test", "path": "data/openpi/test.parquet"}],
        "paradise-tip": [{"split": "test", "path": "data/paradise-tip/test.parquet"}],
        "details_openpi": [{"split": "test", "path": "details/openpi/test/*.parquet"}],
        "details_paradise-tip": [{"split": "test", "path": "details/paradise-tip/test/*.parquet"}],
    }
    assert all(
        list(tmp_path.joinpath("dataset").glob(files[0]["path"])) for files in configs.values()
    )
    # openpi.spec says license = "MIT"; paradise-tip's spec defers to upstream, whose copy is tagged MIT
    assert (
        header["license"] == "mit"
        and "license_name" not in header
        and "leaderboard" in header["tags"]
    )
    assert DatasetCard(card).data.license == "mit"  # the Hub library reads the card as the Hub does
    assert (
        "| OpenPI | MIT |" in card
        and "| PARADISE | MIT | the Hugging Face copy GGLab/PARADISE is tagged MIT" in card
    )
    assert (
        "`rouge_f1` (primary) | ROUGE-L F1 (×100) | ROUGE |" in card
        and "@inproceedings{tandon-etal-2020-dataset" in card
    )
    metrics = json.loads((tmp_path / "dataset" / "metrics.json").read_text())
    assert metrics["paradise-tip"]["primary"] == "accuracy"
    assert [m["name"] for m in metrics["openpi"]["metrics"]] == [
        m.name for m in load_task("openpi")[0].metrics
    ]
    assert metrics["openpi"]["splits"]["test"]["submissions"] == len(
        set(_board(board_db, "openpi")["submission_id"])
    )
    assert metrics["paradise-tip"]["splits"]["test"]["best"]["model"] == "sample-strong"


def _raw(db: Path, sql: str, params: list[Any]) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())  # type: ignore[return-value]


def test_details_hold_every_public_item_score_and_label_per_submission(
    board_db: Path, tmp_path: Path
) -> None:
    folder = write_dataset(board_db, tmp_path / "dataset")
    for task in ("openpi", "paradise-tip"):
        visible = _raw(
            board_db,
            "SELECT DISTINCT s.submission_id, s.model, s.fingerprint FROM submissions s JOIN item_scores i USING (submission_id) "
            "WHERE s.task = ? AND s.split = 'test' AND NOT s.hidden",
            [task],
        )
        files = {
            p.name
            for p in folder.details
            if p.parent == tmp_path / "dataset" / "details" / task / "test"
        }
        assert files == {f"{sid}.parquet" for sid in visible["submission_id"]} and files
        for sid, model, fingerprint in visible.iter_rows():
            details = pl.read_parquet(
                tmp_path / "dataset" / "details" / task / "test" / f"{sid}.parquet"
            )
            assert details.columns[:6] == ["submission_id", "model", "team", "task", "split", "id"]
            assert set(details["model"]) == {model} and details["id"].is_unique().all()
            raw = _raw(
                board_db,
                "SELECT item_id, metric, value FROM item_scores WHERE submission_id = ?",
                [sid],
            )
            assert details.height == raw["item_id"].n_unique()
            by_item = {
                str(row["id"]): row for row in details.iter_rows(named=True)
            }  # PARADISE's ids are row indices: Int64
            for (
                item_id,
                metric,
                value,
            ) in (
                raw.iter_rows()
            ):  # every stored per-item figure, in its column (class indices 0-3 are their labels)
                assert by_item[item_id][metric] == value
            labels = _raw(
                board_db,
                "SELECT item_id, dimension, value FROM item_labels WHERE task = ? AND split = 'test' AND fingerprint = ?",
                [task, fingerprint],
            )
            for item_id, dimension, value in labels.iter_rows():
                assert (
                    by_item[item_id][dimension] == value
                )  # named by the dimension, as to_polars() names it
    hidden = _raw(board_db, "SELECT submission_id FROM submissions WHERE hidden", [])[
        "submission_id"
    ].to_list()
    assert hidden and not [
        p for p in folder.details if p.stem in hidden
    ]  # a hidden submission has no details


def test_a_hidden_split_exports_no_details(board_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "hidden.duckdb"
    db.write_bytes(board_db.read_bytes())
    with writer(db) as con:
        con.execute("UPDATE tasks SET hidden = TRUE WHERE task = 'openpi'")
    folder = write_dataset(db, tmp_path / "dataset")
    assert folder.details and all(p.parent.parent.name == "paradise-tip" for p in folder.details)
    assert not (tmp_path / "dataset" / "details" / "openpi").exists()
    configs = [
        c["config_name"]
        for c in yaml.safe_load((tmp_path / "dataset" / "README.md").read_text().split("---\n")[1])[
            "configs"
        ]
    ]
    assert configs == ["openpi", "paradise-tip", "details_paradise-tip"]


def test_details_load_with_the_datasets_library(board_db: Path, tmp_path: Path) -> None:
    folder = write_dataset(board_db, tmp_path / "dataset")
    script = (
        "import json, sys, datasets\n"
        "rows = datasets.load_dataset(sys.argv[1], 'details_paradise-tip', split='test', cache_dir=sys.argv[2])\n"
        "print(json.dumps(sorted({(r['submission_id'], r['id']) for r in rows})))\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    args = [sys.executable, "-c", script, str(folder.root), str(tmp_path / "cache")]
    run = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    files = [p for p in folder.details if "paradise-tip" in p.parts]
    expected = sorted(
        {
            (sid, item)
            for p in files
            for sid, item in pl.read_parquet(p).select("submission_id", "id").iter_rows()
        }
    )
    assert [tuple(r) for r in json.loads(run.stdout.strip().splitlines()[-1])] == expected


def _info(
    task: str, spec_license: str, benchmark: str, hub_id: str | None, url: str = ""
) -> dict[str, Any]:
    return {
        "task": task,
        "title": task,
        "benchmark": benchmark,
        "primary": "accuracy",
        "url": url,
        "citation": "",
        "spec_license": spec_license,
        "license": hub_id,
        "data_licence": spec_license,
        "data_licence_source": url,
        "metrics": [],
        "splits": {},
    }


def test_card_licences_come_from_the_specs(board_db: Path) -> None:
    from procbench.export.hub_dataset import _task_info

    with duckdb.connect(str(board_db), read_only=True) as con:
        spec_json = con.execute(
            "SELECT any_value(spec_json) FROM current_tasks WHERE task = 'openpi'"
        ).fetchall()[0][0]
    row = {
        "task": "openpi",
        "title": "t",
        "benchmark": "OpenPI",
        "primary_metric": "rouge_f1",
        "spec_json": spec_json,
    }
    assert json.loads(spec_json)["license"] == "MIT" and _task_info(row)["license"] == "mit"
    renamed = {
        **row,
        "benchmark": "elsewhere",
        "spec_json": json.dumps({**json.loads(spec_json), "license": "CC-BY-SA-4.0"}),
    }
    assert _task_info(renamed)["license"] == "cc-by-sa-4.0"  # the spec's name, as the Hub spells it
    two = render_card(
        {"a": _info("a", "Apache-2.0", "A", "apache-2.0"), "b": _info("b", "MIT", "B", "mit")}
    )
    assert DatasetCard(two).data.license == ["apache-2.0", "mit"]
    unknown = render_card(
        {
            "a": _info("a", "MIT", "A", "mit"),
            "c": _info("c", "Research use only", "C", None, url="https://example.org/c"),
        }
    )
    data = DatasetCard(unknown).data.to_dict()
    assert (
        data["license"] == ["mit", "other"]
        and data["license_name"] == "research-use-only"
        and data["license_link"] == "https://example.org/c"
    )


class FakeHub(http.server.BaseHTTPRequestHandler):
    """The four calls `create_repo` + `upload_folder` make (small files, uploaded inline)."""

    protocol_version = "HTTP/1.1"
    commits: list[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, obj: dict[str, Any], code: int = 200) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        if self.path == "/api/repos/create":
            return self._reply(
                {"url": f"{base}/datasets/me/procbench-board", "name": "me/procbench-board"}
            )
        if self.path == "/api/validate-yaml":
            return self._reply({"errors": [], "warnings": []})
        if self.path.startswith("/api/datasets/me/procbench-board/preupload/"):
            return self._reply(
                {
                    "files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                        for f in json.loads(body)["files"]
                    ]
                }
            )
        if self.path.startswith("/api/datasets/me/procbench-board/commit/"):
            FakeHub.commits.append(
                [json.loads(line) for line in body.decode().splitlines() if line.strip()]
            )
            return self._reply(
                {
                    "commitUrl": f"{base}/datasets/me/procbench-board/commit/{'a' * 40}",
                    "commitOid": "a" * 40,
                    "pullRequestUrl": None,
                }
            )
        self._reply({"error": "not found"}, 404)


@pytest.fixture
def fake_hub() -> Iterator[str]:
    FakeHub.commits = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_push_uploads_every_file_of_the_folder(
    board_db: Path, tmp_path: Path, fake_hub: str
) -> None:
    folder = write_dataset(board_db, tmp_path / "dataset")
    url = push_folder(
        folder.root, "me/procbench-board", endpoint=fake_hub, token="hf_loopback_test"
    )
    assert url.endswith("/datasets/me/procbench-board/commit/" + "a" * 40)
    (commit,) = FakeHub.commits
    uploaded = {
        op["value"]["path"]: base64.b64decode(op["value"]["content"])
        for op in commit
        if op["key"] == "file"
    }
    on_disk = {
        p.relative_to(folder.root).as_posix(): p.read_bytes()
        for p in folder.root.rglob("*")
        if p.is_file()
    }
    assert uploaded == on_disk


def test_push_without_the_hub_fails_cleanly(
    board_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_dataset(board_db, tmp_path / "dataset")
    with pytest.raises(PublishError, match="could not reach the Hub"):
        push_folder(
            folder.root, "me/procbench-board", endpoint=CLOSED_PORT_URL, token="hf_loopback_test"
        )
    monkeypatch.setenv("HF_ENDPOINT", CLOSED_PORT_URL)
    monkeypatch.setenv("HF_TOKEN", "hf_loopback_test")
    result = CliRunner().invoke(
        app,
        [
            "export",
            "hub-dataset",
            str(tmp_path / "cli"),
            "--db",
            str(board_db),
            "--push",
            "me/procbench-board",
        ],
    )
    assert result.exit_code == 10 and "nothing was uploaded" in result.stderr
    assert (
        tmp_path / "cli" / "README.md"
    ).is_file()  # the folder is written before the push is tried
    assert (
        CliRunner()
        .invoke(
            app,
            ["export", "hub-dataset", str(tmp_path / "x"), "--db", str(tmp_path / "none.duckdb")],
        )
        .exit_code
        == 4
    )


# One sample file per task with sample submissions, and the split its items are of (PAGED's samples are
# dev documents; PM-LLM-Benchmark has one split).
SAMPLED = {
    "openpi": ("strong-model.jsonl", "test"),
    "paged": ("careful-extractor.jsonl", "dev"),
    "paradise-reverse-tip": ("sample-middling.csv", "test"),
    "paradise-reverse-warning": ("sample-middling.csv", "test"),
    "paradise-tip": ("sample-middling.csv", "test"),
    "paradise-warning": ("sample-middling.csv", "test"),
    "pm-llm-benchmark": ("acme-large.jsonl", "main"),
    "propara": ("noisy-tracker.tsv", "test"),
    "propara-naacl18": ("noisy-grid.tsv", "test"),
}


def test_details_are_named_and_typed_as_to_polars(tmp_path: Path) -> None:
    """Issue #33.6: a submission's details file holds to_polars()'s frame of the same file (names, dtypes, values per item)."""
    import procbench

    assert set(SAMPLED) == {
        p.name for p in SAMPLE_SUBMISSIONS_DIR.iterdir() if p.is_dir()
    }  # every task with samples
    db = tmp_path / "board.duckdb"
    stored = {}
    for task, (name, split) in SAMPLED.items():
        spec, runner = load_task(task)
        path = SAMPLE_SUBMISSIONS_DIR / task / name
        outcome = submit(
            SubmissionRequest(split=split, predictions=path, model="m", team="tests"),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
        stored[task] = outcome.submission_id
    write_dataset(db, tmp_path / "dataset")
    seen_types: set[pl.DataType] = set()
    for task, (name, split) in SAMPLED.items():
        frame = procbench.score(
            task, SAMPLE_SUBMISSIONS_DIR / task / name, split=split, data_dir=SAMPLE_DATA_ROOT
        ).to_polars()
        details = pl.read_parquet(
            tmp_path / "dataset" / "details" / task / split / f"{stored[task]}.parquet"
        )
        assert details.columns[:5] == ["submission_id", "model", "team", "task", "split"], task
        assert (
            set(details["submission_id"]) == {stored[task]}
            and set(details["task"]) == {task}
            and set(details["split"]) == {split}
        )
        shared = [c for c in frame.columns if c in details.columns]
        # every item column of to_polars is in the details (the store keeps every per-item value and label)
        assert shared == frame.columns, (task, sorted(set(frame.columns) - set(details.columns)))
        assert sorted(details.columns[5:]) == sorted(frame.columns), task
        assert {c: details.schema[c] for c in shared} == {c: frame.schema[c] for c in shared}, task
        seen_types |= {frame.schema[c] for c in shared}
        assert details.height == frame.height and sorted(details["id"].to_list()) == sorted(
            frame["id"].to_list()
        )
        exported = {r["id"]: r for r in details.iter_rows(named=True)}
        for row in frame.iter_rows(named=True):
            other = exported[row["id"]]
            for column, value in row.items():
                if isinstance(value, float):
                    assert other[column] == pytest.approx(value, abs=1e-12, rel=0), (
                        task,
                        row["id"],
                        column,
                    )
                else:
                    assert other[column] == value, (task, row["id"], column)
    # the samples exercise every kind of column: string and integer ids, string labels, float values, integer class labels
    assert {pl.String, pl.Int64, pl.Float64} <= seen_types


def test_a_label_named_like_a_bookkeeping_column_keeps_its_prefix() -> None:
    from procbench.export.hub_dataset import DETAIL_KEYS, detail_label

    assert [detail_label(k) for k in DETAIL_KEYS] == [
        "label_submission_id",
        "label_model",
        "label_team",
        "label_task",
        "label_split",
    ]
    assert [detail_label(d) for d in ("domain", "explicitness", "id_like")] == [
        "domain",
        "explicitness",
        "id_like",
    ]
