"""``procbench judge`` against a loopback OpenAI-compatible server, and ``procbench baseline``."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.api import load_task
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.pmllm.judge import DEFAULT_IMAGE_TEMPLATE, DEFAULT_TEXT_TEMPLATE

runner = CliRunner()


def test_the_spec_carries_upstreams_judge_prompts() -> None:
    spec, _ = load_task("pm-llm-benchmark")
    assert spec.template("judge") == DEFAULT_TEXT_TEMPLATE
    assert spec.template("judge_image") == DEFAULT_IMAGE_TEMPLATE


class _Judge(BaseHTTPRequestHandler):
    prompts: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = body["messages"][0]["content"]
        text = (
            content
            if isinstance(content, str)
            else next(part["text"] for part in content if part.get("type") == "text")
        )
        type(self).prompts.append(text)
        reply = {
            "choices": [
                {"message": {"role": "assistant", "content": "7.5/10.0 - decent but imprecise."}}
            ]
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def judge_server():
    _Judge.prompts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_judge_writes_verdicts_that_score_and_reruns_hit_the_cache(
    judge_server: str, tmp_path: Path
) -> None:
    source = SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl"
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": r["id"], "answer": r["answer"]}) + "\n"
            for r in map(json.loads, source.read_text().splitlines())
        )
    )
    out = tmp_path / "judged.jsonl"
    args = [
        "judge",
        "pm-llm-benchmark",
        "--predictions",
        str(answers),
        "--out",
        str(out),
        "--base-url",
        judge_server,
        "--model",
        "tiny-judge",
        "--api-key",
        "k",
        "--cache",
        str(tmp_path / "cache"),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    n = len(_Judge.prompts)
    assert n > 0 and "0 from the cache" in first.output
    assert all(
        p.startswith("Given the following question:\n\n,")
        or p.startswith("Given the attached image")
        for p in _Judge.prompts
    )
    second = runner.invoke(app, args)
    assert second.exit_code == 0 and len(_Judge.prompts) == n  # every verdict came from the cache
    judged = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(
        r["verdict"] == "7.5/10.0 - decent but imprecise." for r in judged if r["answer"].strip()
    )
    scored = runner.invoke(
        app,
        [
            "score",
            "pm-llm-benchmark",
            "--split",
            "main",
            "--predictions",
            str(out),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            "--json",
        ],
    )
    assert scored.exit_code == 0, scored.output
    # grade 7.5 normalises to 7.25 for every judged question
    per_question = 7.25
    metrics = json.loads(scored.stdout)["metrics"]
    assert metrics["total"] == pytest.approx(
        per_question * sum(1 for r in judged if r["answer"].strip()) / 10
    )


def test_judge_without_an_endpoint_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("PROCBENCH_JUDGE_BASE_URL", "PROCBENCH_JUDGE_MODEL"):
        monkeypatch.delenv(var, raising=False)
    source = SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl"
    result = runner.invoke(
        app,
        [
            "judge",
            "pm-llm-benchmark",
            "--predictions",
            str(source),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert result.exit_code == 5 and "no judge configured" in result.output


def test_random_baseline_writes_a_valid_prediction_file(tmp_path: Path) -> None:
    out = tmp_path / "random.jsonl"
    made = runner.invoke(
        app,
        [
            "baseline",
            "paradise-random",
            "--task",
            "tip",
            "--split",
            "test",
            "--out",
            str(out),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert made.exit_code == 0, made.output
    scored = runner.invoke(
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
    assert scored.exit_code == 0, scored.output
    assert 0.0 <= json.loads(scored.stdout)["metrics"]["accuracy"] <= 1.0
