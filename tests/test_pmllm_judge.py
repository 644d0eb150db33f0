"""The judge runner against a local OpenAI-compatible server (threaded http.server on 127.0.0.1; never the network)."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.pmllm.answers import Answer
from procbench.runners.pmllm.judge import (
    COT_SENTENCE,
    DEFAULT_TEXT_TEMPLATE,
    SEVERITY_SENTENCE,
    JudgeError,
    JudgeSettings,
    import_verdicts,
    judge_answers,
    render_prompt,
    sanitise_verdict,
    write_verdicts,
)
from procbench.runners.pmllm.questions import load_questions, read_questions
from procbench.runners.pmllm.scoring import aggregate_sums, score_answers

QUESTIONS = load_questions(SAMPLE_DATA_ROOT)
TEXT_IDS = [q for q, item in QUESTIONS.items() if item.image is None]
IMAGE_ID = next(q for q, item in QUESTIONS.items() if item.image is not None)


@dataclass
class FakeJudge:
    """Server state: every request body, the peak number in flight, and how to answer."""

    reply: Callable[[dict[str, Any], int], tuple[int, str]]
    delay_s: float = 0.0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _server(judge: FakeJudge) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with judge.lock:
                judge.bodies.append(body)
                judge.headers.append(dict(self.headers))
                attempt = sum(b == body for b in judge.bodies)
                judge.in_flight += 1
                judge.peak = max(judge.peak, judge.in_flight)
            time.sleep(judge.delay_s)
            status, text = judge.reply(body, attempt)
            with judge.lock:
                judge.in_flight -= 1
            payload = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": text}}]}
            ).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server


@pytest.fixture
def serve() -> Iterator[Callable[[FakeJudge], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(judge: FakeJudge) -> str:
        return _started(_server(judge), servers)

    yield start
    _stop(servers)


def _started(server: ThreadingHTTPServer, servers: list[ThreadingHTTPServer]) -> str:
    """Serve in a daemon thread (stopped by the fixture); the base URL an OpenAI-compatible client takes."""
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    servers.append(server)
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _stop(servers: list[ThreadingHTTPServer]) -> None:
    for server in servers:
        server.shutdown()
        server.server_close()


def _answers(ids: list[str]) -> dict[str, Answer]:
    return {q: Answer(q, f"answer to {q}") for q in ids}


def _settings(url: str, **options: Any) -> JudgeSettings:
    return JudgeSettings(
        base_url=url, model="judge-x", api_key="secret", backoff_s=0.001, **options
    )


def always(text: str, status: int = 200) -> Callable[[dict[str, Any], int], tuple[int, str]]:
    return lambda body, attempt: (status, text)


def test_default_prompt_is_the_comma_joined_pieces_of_metrics_4_2() -> None:
    head = ["Given the following question:\n\n", "Q?"]
    ask = "\n\nHow would you grade the following answer from 1.0 (minimum) to 10.0 (maximum)? Please put the grade at the beginning of the response. "
    tail = ["\n\n", "A."]
    assert render_prompt(DEFAULT_TEXT_TEMPLATE, question="Q?", answer="A.") == ",".join(
        [*head, ask, SEVERITY_SENTENCE, *tail]
    )
    assert render_prompt(DEFAULT_TEXT_TEMPLATE, question="Q?", answer="A.", cot=True) == ",".join(
        [*head, ask, COT_SENTENCE, SEVERITY_SENTENCE, *tail]
    )
    assert render_prompt(
        DEFAULT_TEXT_TEMPLATE, question="Q?", answer="A.", severe=False
    ) == ",".join([*head, ask, *tail])
    assert SEVERITY_SENTENCE.startswith(
        "Please evaluate with the utmost strictness."
    ) and SEVERITY_SENTENCE.endswith("nearly flawless.")
    assert COT_SENTENCE.startswith("Please ignore the initial part") and COT_SENTENCE.endswith(
        "considered for the grade."
    )
    assert (
        render_prompt("{{ answer }}|{{ question }}", question="{{ x }}", answer="a") == "a|{{ x }}"
    )  # values are not re-parsed


def test_second_run_is_served_from_the_cache(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("8.0/10.0 solid"))
    settings = _settings(serve(judge))
    first = judge_answers(QUESTIONS, _answers(TEXT_IDS), settings, cache_dir=tmp_path)
    assert first.requests == len(judge.bodies) == len(TEXT_IDS) and first.cache_hits == 0
    second = judge_answers(QUESTIONS, _answers(TEXT_IDS), settings, cache_dir=tmp_path)
    assert (
        len(judge.bodies) == len(TEXT_IDS)
        and second.requests == 0
        and second.cache_hits == len(TEXT_IDS)
    )
    assert second.answers == first.answers
    assert {v.grade for v in second.verdicts.values()} == {8.0}
    stored = json.loads(next((tmp_path / "judge-x").glob("*.json")).read_text())
    assert (
        stored["verdict"] == "8.0/10.0 solid"
        and stored["grade"] == 8.0
        and stored["judge"] == "judge-x"
    )


def test_server_errors_and_timeouts_are_retried(serve, tmp_path: Path) -> None:
    judge = FakeJudge(lambda body, attempt: (500, "busy") if attempt == 1 else (200, "7.0/10"))
    run = judge_answers(
        QUESTIONS, _answers(TEXT_IDS[:3]), _settings(serve(judge)), cache_dir=tmp_path
    )
    assert run.requests == len(judge.bodies) == 6
    assert all(a.verdict == "7.0/10" for a in run.answers.values())
    slow = FakeJudge(lambda body, attempt: (200, "6.0/10"))
    slow.delay_s = 0.3
    with pytest.raises(JudgeError, match=r"no complete reply within 0\.05 s"):
        judge_answers(
            QUESTIONS,
            _answers(TEXT_IDS[:1]),
            _settings(serve(slow), timeout_s=0.05, max_retries=1),
            cache_dir=tmp_path / "t",
        )
    assert len(slow.bodies) == 2


def test_client_errors_are_not_retried(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("bad key", status=401))
    with pytest.raises(JudgeError, match="HTTP 401"):
        judge_answers(
            QUESTIONS, _answers(TEXT_IDS[:1]), _settings(serve(judge)), cache_dir=tmp_path
        )
    assert len(judge.bodies) == 1


def test_a_verdict_without_a_grade_counts_as_one(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("I cannot grade this answer."))
    run = judge_answers(
        QUESTIONS, _answers(TEXT_IDS[:1]), _settings(serve(judge)), cache_dir=tmp_path
    )
    assert run.verdicts[TEXT_IDS[0]].grade == 1.0
    gold = read_questions(SAMPLE_DATA_ROOT, "main")
    scored = {i.item_id: i.values for i in score_answers(gold, run.answers)}
    assert scored[TEXT_IDS[0]] == {"grade": 1.0, "score": 1.0, "judged": 1.0}
    assert aggregate_sums(score_answers(gold, run.answers))["total"] == pytest.approx(0.1)


def test_concurrency_limit_is_respected_and_progress_reported(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("9.0/10"), delay_s=0.05)
    seen: list[tuple[int, int]] = []
    judge_answers(
        QUESTIONS,
        _answers(TEXT_IDS),
        _settings(serve(judge), concurrency=2),
        cache_dir=tmp_path,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert judge.peak == 2
    assert sorted(seen) == [(i, len(TEXT_IDS)) for i in range(1, len(TEXT_IDS) + 1)]


def test_request_shape_cot_prompt_image_and_key(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("8.5/10"))
    answers = _answers([TEXT_IDS[0], IMAGE_ID])
    judge_answers(QUESTIONS, answers, _settings(serve(judge)), cot=True, cache_dir=tmp_path)
    by_kind = {isinstance(b["messages"][0]["content"], list): b for b in judge.bodies}
    text = by_kind[False]["messages"][0]["content"]
    assert COT_SENTENCE in text and QUESTIONS[TEXT_IDS[0]].text in text
    parts = by_kind[True]["messages"][0]["content"]
    assert parts[0]["text"].startswith("Given the attached image, how would you grade")
    assert COT_SENTENCE not in parts[0]["text"]
    url = parts[1]["image_url"]["url"]
    assert (
        base64.b64decode(url.removeprefix("data:image/png;base64,"))
        == QUESTIONS[IMAGE_ID].image.read_bytes()
    )  # type: ignore[union-attr]
    assert all(
        b["model"] == "judge-x" and len(b["messages"]) == 1 and "temperature" not in b
        for b in judge.bodies
    )
    assert {h["Authorization"] for h in judge.headers} == {"Bearer secret"}


def test_existing_verdicts_and_empty_answers_are_not_sent(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("5.0/10"))
    answers = {
        TEXT_IDS[0]: Answer(TEXT_IDS[0], "a", "9.0/10"),
        TEXT_IDS[1]: Answer(TEXT_IDS[1], ""),
        TEXT_IDS[2]: Answer(TEXT_IDS[2], "b"),
    }
    run = judge_answers(QUESTIONS, answers, _settings(serve(judge)), cache_dir=tmp_path)
    assert len(judge.bodies) == 1 and set(run.verdicts) == {TEXT_IDS[2]}
    assert run.answers[TEXT_IDS[0]].verdict == "9.0/10" and run.answers[TEXT_IDS[1]].verdict is None


def test_settings_come_from_arguments_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROCBENCH_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("PROCBENCH_JUDGE_MODEL", raising=False)
    with pytest.raises(JudgeError, match="PROCBENCH_JUDGE_BASE_URL"):
        JudgeSettings.from_env()
    monkeypatch.setenv("PROCBENCH_JUDGE_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("PROCBENCH_JUDGE_MODEL", "env-judge")
    monkeypatch.setenv("PROCBENCH_JUDGE_API_KEY", "k")
    settings = JudgeSettings.from_env(concurrency=3)
    assert (settings.endpoint, settings.model, settings.api_key, settings.concurrency) == (
        "http://127.0.0.1:9/v1/chat/completions",
        "env-judge",
        "k",
        3,
    )
    assert JudgeSettings.from_env(model="arg-judge").model == "arg-judge"


def test_verdicts_are_sanitised_like_upstream() -> None:
    assert sanitise_verdict("8.0/10 ✅ good — “quoted” 😀 ≤") == "8.0/10  good — “quoted”  "


def test_verdicts_round_trip_through_the_upstream_layout(tmp_path: Path) -> None:
    folder = write_verdicts(
        {TEXT_IDS[0]: Answer(TEXT_IDS[0], "a", "6.0/10")}, tmp_path, "m", "judge/x:1"
    )
    assert folder.name == "evaluation-judgex1"
    assert import_verdicts(_answers(TEXT_IDS[:2]), folder, "m") == {
        TEXT_IDS[0]: Answer(TEXT_IDS[0], f"answer to {TEXT_IDS[0]}", "6.0/10"),
        TEXT_IDS[1]: Answer(TEXT_IDS[1], f"answer to {TEXT_IDS[1]}"),
    }


# -- untrusted replies (issue #17): a deadline per request, a size cap, no bad reply cached -------------------------


@dataclass
class RawJudge:
    """A server that writes its own bytes: ``respond(handler, attempt)`` with attempt = 1, 2, ... over all requests."""

    respond: Callable[[BaseHTTPRequestHandler, int], None]
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def serve_raw() -> Iterator[Callable[[RawJudge], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(judge: RawJudge) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers["Content-Length"]))
                with judge.lock:
                    judge.requests += 1
                    attempt = judge.requests
                try:
                    judge.respond(self, attempt)
                except OSError:
                    pass  # the client hung up (its deadline)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        return _started(server, servers)

    yield start
    _stop(servers)


def _reply(
    text: str | None = "7.0/10", *, finish: str | None = "stop", refusal: str | None = None
) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if refusal is not None:
        message["refusal"] = refusal
    return json.dumps({"choices": [{"message": message, "finish_reason": finish}]}).encode()


def _send(handler: BaseHTTPRequestHandler, payload: bytes, *, length: int | None = None) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload) if length is None else length))
    handler.end_headers()
    handler.wfile.write(payload)


def _trickle(data: bytes, step_s: float = 0.05) -> Iterator[bytes]:
    for k in range(len(data)):
        time.sleep(step_s)
        yield data[k : k + 1]


def _cached(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in folder.rglob("*.json")] if folder.exists() else []


def trickle_body(handler: BaseHTTPRequestHandler, attempt: int) -> None:
    """A valid reply, one byte every 50 ms (a few seconds in all: a client without a deadline gets it)."""
    payload = _reply()
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.flush()
    for byte in _trickle(payload):
        handler.wfile.write(byte)
        handler.wfile.flush()


def trickle_headers(handler: BaseHTTPRequestHandler, attempt: int) -> None:
    """The status line and headers themselves trickle in, one byte every 50 ms."""
    payload = _reply()
    head = f"HTTP/1.1 200 OK\r\nX-Padding: {'x' * 40}\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
    for byte in _trickle(head):
        handler.wfile.write(byte)
        handler.wfile.flush()
    handler.wfile.write(payload)
    handler.close_connection = True


@pytest.mark.parametrize("respond", [trickle_body, trickle_headers], ids=["body", "headers"])
def test_a_trickling_server_meets_the_overall_deadline(respond, serve_raw, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each read arrives well within the 0.3 s timeout, but the reply as a whole does not: refused after the retries."""
    judge = RawJudge(respond)
    settings = _settings(serve_raw(judge), timeout_s=0.3, max_retries=1)
    with pytest.raises(JudgeError, match=r"no complete reply within 0\.3 s"):
        judge_answers(QUESTIONS, _answers(TEXT_IDS[:1]), settings, cache_dir=tmp_path)
    assert judge.requests == 2 and _cached(tmp_path) == []


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "read-to-close"])
def test_a_reply_over_the_size_cap_is_not_read_nor_cached(
    declared: bool, serve_raw, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    big = _reply("8.0/10 " + "x" * 50_000)

    def respond(handler: BaseHTTPRequestHandler, attempt: int) -> None:
        if declared:
            _send(handler, big)
        else:  # HTTP/1.0 style: no length, the body ends when the connection closes
            handler.send_response(200)
            handler.end_headers()
            handler.wfile.write(big)
            handler.close_connection = True

    judge = RawJudge(respond)
    with pytest.raises(JudgeError, match="size cap"):
        judge_answers(
            QUESTIONS,
            _answers(TEXT_IDS[:1]),
            _settings(serve_raw(judge), max_reply_bytes=10_000, max_retries=1),
            cache_dir=tmp_path,
        )
    assert judge.requests == 2 and _cached(tmp_path) == []


BAD_REPLIES = {
    "empty": _reply(""),
    "blank": _reply("  \n "),
    "null content": _reply(None),
    "refusal": _reply(None, refusal="I can't help with grading this."),
    "content filter": _reply("", finish="content_filter"),
    "cut off": _reply("The answer is thorough, but", finish="length"),
}


@pytest.mark.parametrize("kind", list(BAD_REPLIES))
def test_empty_refused_and_cut_off_replies_are_retried_and_never_cached(
    kind: str, serve_raw, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # the first reply is bad, the second a verdict: the verdict is what is kept and cached
    judge = RawJudge(
        lambda handler, attempt: _send(
            handler, BAD_REPLIES[kind] if attempt == 1 else _reply("7.0/10 fine")
        )
    )
    settings = _settings(serve_raw(judge))
    run = judge_answers(QUESTIONS, _answers(TEXT_IDS[:1]), settings, cache_dir=tmp_path)
    assert judge.requests == 2 and run.verdicts[TEXT_IDS[0]].grade == 7.0
    assert [entry["verdict"] for entry in _cached(tmp_path)] == ["7.0/10 fine"]
    # a judge that only ever replies badly: refused after the retries, nothing cached, asked again next time
    always_bad = RawJudge(lambda handler, attempt: _send(handler, BAD_REPLIES[kind]))
    settings = _settings(serve_raw(always_bad), max_retries=2)
    for _ in range(2):
        with pytest.raises(JudgeError, match="after 3 attempts"):
            judge_answers(QUESTIONS, _answers(TEXT_IDS[:1]), settings, cache_dir=tmp_path / "bad")
    assert always_bad.requests == 6 and _cached(tmp_path / "bad") == []


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda entry: "{not json",
        lambda entry: "\udcff",
        lambda entry: json.dumps([entry]),
        lambda entry: json.dumps({**entry, "grade": "high"}),
        lambda entry: json.dumps({k: v for k, v in entry.items() if k != "verdict"}),
        lambda entry: json.dumps(
            {**entry, "verdict": "", "grade": 1.0}
        ),  # an empty reply an older version cached
        lambda entry: json.dumps({**entry, "grade": 10.0}),  # a grade the verdict does not carry
    ],
    ids=[
        "not json",
        "not utf-8",
        "a list",
        "grade not a number",
        "no verdict",
        "empty verdict",
        "grade mismatch",
    ],
)
def test_a_corrupted_cache_entry_is_a_miss_and_is_rewritten(corrupt, serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    judge = FakeJudge(always("6.0/10 adequate"))
    settings = _settings(serve(judge))
    judge_answers(QUESTIONS, _answers(TEXT_IDS[:1]), settings, cache_dir=tmp_path)
    (path,) = tmp_path.rglob("*.json")
    text = corrupt(json.loads(path.read_text()))
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    run = judge_answers(QUESTIONS, _answers(TEXT_IDS[:1]), settings, cache_dir=tmp_path)
    assert run.requests == 1 and run.cache_hits == 0 and run.verdicts[TEXT_IDS[0]].grade == 6.0
    assert json.loads(path.read_text())["verdict"] == "6.0/10 adequate"
    assert (
        judge_answers(QUESTIONS, _answers(TEXT_IDS[:1]), settings, cache_dir=tmp_path).cache_hits
        == 1
    )


def test_cli_judge_passes_its_timeout_to_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import procbench.runners.pmllm.judge as judge_module
    from procbench.cli import app
    from procbench.paths import SAMPLE_SUBMISSIONS_DIR

    seen: list[JudgeSettings] = []

    def fake_judge_answers(questions, answers, settings, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(settings)
        return judge_module.JudgeRun(dict(answers), {}, 0, 0)

    monkeypatch.setattr(judge_module, "judge_answers", fake_judge_answers)
    source = SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl"
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": r["id"], "answer": r["answer"]}) + "\n"
            for r in map(json.loads, source.read_text().splitlines())
        )
    )
    base = [
        "judge",
        "pm-llm-benchmark",
        "--predictions",
        str(answers),
        "--out",
        str(tmp_path / "o.jsonl"),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "j",
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
    ]
    result = CliRunner().invoke(app, [*base, "--timeout", "7.5"])
    assert result.exit_code == 0, result.output
    assert seen[-1].timeout_s == 7.5
    assert (
        CliRunner().invoke(app, [*base, "--timeout", "0"]).exit_code == 2
    )  # below the minimum: a usage error


def test_the_default_size_cap_refuses_a_reply_of_several_megabytes(serve, tmp_path: Path) -> None:
    judge = FakeJudge(always("9.0/10 " + "y" * 5_000_000))  # 5 MB: no verdict is that long
    with pytest.raises(JudgeError, match="size cap"):
        judge_answers(
            QUESTIONS,
            _answers(TEXT_IDS[:1]),
            _settings(serve(judge), max_retries=0),
            cache_dir=tmp_path,
        )
    assert len(judge.bodies) == 1 and _cached(tmp_path) == []
