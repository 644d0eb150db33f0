"""LLM-as-a-judge for PM-LLM-Benchmark answers.

Two ways to get verdicts:

* import the ones upstream already produced (``evaluation-<judge>/<model>_<question id>.txt``):
  :func:`import_verdicts`;
* ask a judge through any OpenAI-compatible Chat Completions endpoint: :func:`judge_answers`, with
  the prompt of docs/metrics.md §4.2 rendered from a Jinja2 template (a parameter, so that a spec can carry
  its own), a concurrency limit, retries with exponential backoff on 5xx/429, timeouts and
  connection errors, a progress callback, and an on-disk cache keyed by (judge model, sha256 of
  the request content) so that a rerun makes no request.

Replies are untrusted (issue #17): each request has one overall deadline (``timeout_s``, enforced
while the reply trickles in, headers included) and a size cap (``max_reply_bytes``, read no further);
an empty reply, a refusal and one cut off at the length limit (``finish_reason: length``) are retried
like a server error and never cached as a verdict; a cache entry that does not read back as a valid
verdict is a cache miss.

Deviation from upstream, by necessity: upstream calls the OpenAI Responses API (reasoning effort
"medium" for text questions with gpt-5.4) and falls back to Chat Completions; here only Chat
Completions is spoken, and ``reasoning_effort`` is sent only when set.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from procbench.runners.pmllm.answers import Answer
from procbench.runners.pmllm.grading import extract_grade
from procbench.runners.pmllm.naming import clean_model_name, judge_folder, parse_result_file_name
from procbench.runners.pmllm.questions import Question
from procbench.runners.pmllm.textio import read_text
from procbench.runners.runtime.predictions import loads_bounded
from procbench.runners.runtime.judge_terms import JudgeError
from procbench.runners.runtime.templates import RenderRefused, environment, render

if TYPE_CHECKING:
    import httpx  # imported where a judge is called: scoring and intake never reach the network (issue #31)

ENV_BASE_URL = "PROCBENCH_JUDGE_BASE_URL"
ENV_MODEL = "PROCBENCH_JUDGE_MODEL"
ENV_API_KEY = "PROCBENCH_JUDGE_API_KEY"
ENV_CACHE = "PROCBENCH_JUDGE_CACHE"

COT_SENTENCE = (
    "Please ignore the initial part of the answer, as it may contain the 'flow of thought' and could be verbose, "
    "repetitive, or even incorrect. If the model corrects itself later in the answer, do not penalize it for its "
    "earlier flawed reasoning. Only the final statements or conclusions should be considered for the grade."
)
SEVERITY_SENTENCE = (
    "Please evaluate with the utmost strictness. Be hypercritical of any inaccuracies, unclarities, or logical flaws. "
    "Even minor issues should result in a significantly lower score. Only award a very high score if the answer is "
    "nearly flawless."
)
# docs/metrics.md §4.2: seven pieces joined by "," (an upstream quirk), pieces 4 and 5 conditional.
DEFAULT_TEXT_TEMPLATE = (
    "Given the following question:\n\n"
    ",{{ question }}"
    ",\n\nHow would you grade the following answer from 1.0 (minimum) to 10.0 (maximum)? "
    "Please put the grade at the beginning of the response. "
    "{% if cot %}," + COT_SENTENCE + "{% endif %}"
    "{% if severe %}," + SEVERITY_SENTENCE + "{% endif %}"
    ",\n\n"
    ",{{ answer }}"
)
DEFAULT_IMAGE_TEMPLATE = (
    "Given the attached image, how would you grade the following answer from 1.0 (minimum) to 10.0 (maximum)?"
    "\n\n{{ answer }}"
)
RETRYABLE_STATUS = frozenset({429, *range(500, 600)})
MAX_REPLY_BYTES = 4 << 20  # a verdict is a few KB; reasoning text included, far below this


class _BadReply(Exception):
    """A reply that is no verdict (too slow, too large, empty, refused, cut off): retried, never cached."""


class _Stopped(Exception):
    """Another question failed for good: this one is not asked (again); the first failure is what is raised."""


@lru_cache(maxsize=16)
def _compiled(template: str) -> jinja2.Template:
    return environment().from_string(
        template
    )  # the shared sandbox: a template comes from a spec (untrusted)


class JudgeTemplateRefused(JudgeError, RenderRefused):
    """The judge template failed at render: a JudgeError, so `judge` and intake report it as a message, and the sandbox's SecurityError."""


def render_prompt(
    template: str, *, question: str, answer: str, cot: bool = False, severe: bool = True
) -> str:
    """The judge prompt from a Jinja2 template; variables: question, answer, cot, severe (procbench.runners.runtime.templates.JUDGE_VARIABLES)."""
    try:
        return render(
            _compiled(template),
            "the judge template",
            question=question,
            answer=answer,
            cot=cot,
            severe=severe,
        )
    except RenderRefused as exc:
        raise JudgeTemplateRefused(str(exc)) from None
    except (
        jinja2.TemplateError
    ) as exc:  # at compile: a filter or test Jinja2 does not know (`check` refuses it first)
        raise JudgeTemplateRefused(
            f"the judge template could not be compiled: {exc.message}"
        ) from None


def sanitise_verdict(text: str) -> str:
    """What upstream stores: the reply without characters outside the BMP or not encodable in Windows-1252."""
    kept = []
    for char in text:
        if ord(char) > 0xFFFF:
            continue
        try:
            char.encode("cp1252")
        except UnicodeEncodeError:
            continue
        kept.append(char)
    return "".join(kept)


@dataclass(frozen=True)
class JudgeSettings:
    """Where and how to ask the judge. ``from_env`` fills blanks from PROCBENCH_JUDGE_* variables."""

    base_url: str
    model: str
    api_key: str = ""
    concurrency: int = 4
    max_retries: int = 5
    backoff_s: float = 2.0
    timeout_s: float = (
        600.0  # overall deadline of one request (each retry has its own), not per read
    )
    max_reply_bytes: int = MAX_REPLY_BYTES
    reasoning_effort: str | None = None
    severe: bool = True
    template: str = DEFAULT_TEXT_TEMPLATE
    image_template: str = DEFAULT_IMAGE_TEMPLATE

    @classmethod
    def from_env(
        cls,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        **options: Any,
    ) -> JudgeSettings:
        url = base_url or os.environ.get(ENV_BASE_URL, "")
        name = model or os.environ.get(ENV_MODEL, "")
        if not url or not name:
            raise JudgeError(
                f"no judge configured: pass base_url and model, or set {ENV_BASE_URL} and {ENV_MODEL}"
            )
        key = api_key if api_key is not None else os.environ.get(ENV_API_KEY, "")
        return cls(base_url=url, model=name, api_key=key, **options)

    @property
    def endpoint(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


@dataclass(frozen=True)
class JudgeRequest:
    """One question to grade: the rendered prompt, plus the image for visual questions."""

    question_id: str
    prompt: str
    image: bytes | None = None

    @property
    def digest(self) -> str:
        """sha256 of the rendered prompt (and of the image bytes, for visual questions)."""
        hasher = hashlib.sha256(self.prompt.encode("utf-8"))
        if self.image is not None:
            hasher.update(b"\0image\0" + hashlib.sha256(self.image).digest())
        return hasher.hexdigest()

    def message_content(self) -> str | list[dict[str, Any]]:
        if self.image is None:
            return self.prompt
        url = "data:image/png;base64," + base64.b64encode(self.image).decode("ascii")
        return [
            {"type": "text", "text": self.prompt},
            {"type": "image_url", "image_url": {"url": url}},
        ]


@dataclass(frozen=True)
class Verdict:
    """A judge's reply, stored with the grade read from it."""

    judge: str
    prompt_sha256: str
    text: str
    grade: float
    cached: bool = False


@dataclass(frozen=True)
class JudgeRun:
    answers: dict[str, Answer]
    verdicts: dict[str, Verdict]
    requests: int
    cache_hits: int


def build_request(
    question: Question, answer: Answer, settings: JudgeSettings, *, cot: bool
) -> JudgeRequest:
    if question.image is not None:
        prompt = render_prompt(
            settings.image_template,
            question=question.text,
            answer=answer.answer,
            cot=cot,
            severe=settings.severe,
        )
        return JudgeRequest(question.question_id, prompt, Path(question.image).read_bytes())
    prompt = render_prompt(
        settings.template,
        question=question.text,
        answer=answer.answer,
        cot=cot,
        severe=settings.severe,
    )
    return JudgeRequest(question.question_id, prompt)


def default_cache_dir() -> Path:
    return Path(os.environ.get(ENV_CACHE) or Path.home() / ".cache" / "procbench" / "judge")


@dataclass(frozen=True)
class VerdictCache:
    """Verdicts on disk: ``<root>/<clean judge>/<sha256>.json``."""

    root: Path
    max_bytes: int = (
        8 * MAX_REPLY_BYTES
    )  # an entry larger than this is not read (a reply is capped below it)

    def _path(self, judge: str, digest: str) -> Path:
        return self.root / clean_model_name(judge) / f"{digest}.json"

    def get(self, judge: str, digest: str) -> Verdict | None:
        """The cached verdict, or None: absent, unreadable, corrupted, or not a verdict (e.g. an empty reply an
        older version cached) are all misses, so the question is asked again and the entry overwritten."""
        path = self._path(judge, digest)
        try:
            if not path.is_file() or path.stat().st_size > self.max_bytes:
                return None
            record = json.loads(path.read_text(encoding="utf-8"))
            text, grade = record["verdict"], float(record["grade"])
            valid = (
                record["judge"] == judge
                and record["prompt_sha256"] == digest
                and isinstance(text, str)
                and bool(text.strip())
                and grade == extract_grade(text)
            )
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            return None
        return Verdict(judge, digest, text, grade, cached=True) if valid else None

    def put(self, verdict: Verdict) -> None:
        path = self._path(verdict.judge, verdict.prompt_sha256)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "judge": verdict.judge,
            "prompt_sha256": verdict.prompt_sha256,
            "grade": verdict.grade,
            "verdict": verdict.text,
        }
        temporary = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        temporary.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        temporary.replace(path)


@dataclass
class _Counter:
    done: int = 0
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopped: threading.Event = field(
        default_factory=threading.Event
    )  # issue #29: set at the first permanent failure


def _reply_text(payload: Any) -> str:
    """The verdict text of a Chat Completions reply; _BadReply when the reply carries no usable verdict."""
    choice = payload["choices"][0]
    message = choice["message"]
    finish = choice.get("finish_reason")
    if message.get("refusal") or finish == "content_filter":
        raise _BadReply(
            f"the judge refused to answer ({str(message.get('refusal') or finish)[:200]})"
        )
    if finish == "length":
        raise _BadReply("the reply was cut off at the length limit (finish_reason: length)")
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if not isinstance(content, str) and content is not None:
        raise TypeError(f"content is a {type(content).__name__}")
    if not content or not content.strip():
        raise _BadReply("the reply was empty")
    return content


def _post(
    client: httpx.Client,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    settings: JudgeSettings,
) -> tuple[int, bytes]:
    """(status, body bytes) of one request, within ``settings.timeout_s`` overall and ``settings.max_reply_bytes``.

    httpx's timeouts bound each read, not the request: a server sending a byte every few seconds would
    never time out.  A watchdog shuts down the request's socket at the deadline (which also ends a
    trickle of headers), and the body is read in chunks, stopping at the deadline or the size cap.
    """
    import httpx

    deadline = time.monotonic() + settings.timeout_s
    sockets: list[socket.socket] = []
    expired = threading.Event()

    def trace(event: str, info: dict[str, Any]) -> None:
        if event == "connection.connect_tcp.complete" and info.get("return_value") is not None:
            sock = info["return_value"].get_extra_info("socket")
            if sock is not None:
                sockets.append(sock)

    def expire() -> None:
        expired.set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(settings.timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    too_slow = f"no complete reply within {settings.timeout_s:g} s (the request's deadline)"
    try:
        with client.stream(
            "POST",
            url,
            json=body,
            headers=headers,
            timeout=settings.timeout_s,
            extensions={"trace": trace},
        ) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > settings.max_reply_bytes:
                raise _BadReply(
                    f"the reply is {int(declared)} bytes, more than {settings.max_reply_bytes} (the reply size cap)"
                )
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > settings.max_reply_bytes:
                    raise _BadReply(
                        f"the reply is more than {settings.max_reply_bytes} bytes (the reply size cap)"
                    )
                if time.monotonic() > deadline or expired.is_set():
                    raise _BadReply(too_slow)
                chunks.append(chunk)
            if expired.is_set():
                raise _BadReply(too_slow)
            return response.status_code, b"".join(chunks)
    except httpx.TransportError as error:
        if expired.is_set() or isinstance(error, httpx.TimeoutException):
            raise _BadReply(f"{too_slow} ({type(error).__name__})") from None
        raise
    finally:
        watchdog.cancel()


def _ask(
    client: httpx.Client,
    request: JudgeRequest,
    settings: JudgeSettings,
    counter: _Counter,
    sleep: Callable[[float], None],
) -> str:
    import httpx

    body: dict[str, Any] = {
        "model": settings.model,
        "messages": [{"role": "user", "content": request.message_content()}],
    }
    if settings.reasoning_effort:
        body["reasoning_effort"] = settings.reasoning_effort
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    failure = ""
    for attempt in range(settings.max_retries + 1):
        if attempt:
            # Exponential backoff with a little jitter so that parallel workers do not retry in step.
            sleep(settings.backoff_s * 2 ** (attempt - 1) * (1 + random.random() / 10))
        if counter.stopped.is_set():
            raise _Stopped()
        with counter.lock:
            counter.requests += 1
        try:
            status, raw = _post(client, settings.endpoint, body, headers, settings)
        except (httpx.TimeoutException, httpx.TransportError) as error:
            failure = f"{type(error).__name__}: {error}"
            continue
        except _BadReply as error:
            failure = str(error)
            continue
        shown = raw[:500].decode("utf-8", "replace")
        if status in RETRYABLE_STATUS:
            failure = f"HTTP {status}"
            continue
        if status >= 400:
            raise JudgeError(f"{request.question_id}: judge returned HTTP {status}: {shown}")
        try:
            # issue #29: depth-bounded (procbench.runners.runtime.predictions.MAX_JSON_DEPTH): a deeply nested reply is refused, never a RecursionError
            return _reply_text(loads_bounded(raw))
        except _BadReply as error:
            failure = str(error)
            continue
        except (
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            AttributeError,
            RecursionError,
        ) as error:
            raise JudgeError(
                f"{request.question_id}: unexpected reply from the judge ({error}): {shown}"
            ) from None
    raise JudgeError(
        f"{request.question_id}: judge failed after {settings.max_retries + 1} attempts (last: {failure})"
    )


def judge_answers(
    questions: Mapping[str, Question],
    answers: Mapping[str, Answer],
    settings: JudgeSettings,
    *,
    cot: bool = False,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> JudgeRun:
    """Grade every non-empty answer that has no verdict yet; returns the answers with verdicts filled in.

    ``cot``: add the chain-of-thought sentence (models with the CoT penalty). ``progress(done, total)``
    is called after each question, cache hits included.
    """
    cache = VerdictCache(cache_dir if cache_dir is not None else default_cache_dir())
    pending = [
        build_request(questions[qid], answer, settings, cot=cot)
        for qid, answer in answers.items()
        if answer.verdict is None and not answer.is_empty and qid in questions
    ]
    counter = _Counter()
    verdicts: dict[str, Verdict] = {}

    def grade(request: JudgeRequest, http: httpx.Client) -> None:
        verdict = cache.get(settings.model, request.digest)
        if verdict is None:
            text = sanitise_verdict(_ask(http, request, settings, counter, sleep))
            verdict = Verdict(settings.model, request.digest, text, extract_grade(text))
            cache.put(verdict)
        with counter.lock:
            verdicts[request.question_id] = verdict
            counter.done += 1
            done = counter.done
        if progress is not None:
            progress(done, len(pending))

    own_client = client is None
    # No keep-alive: every request opens its own connection, whose socket the deadline's watchdog can shut down.
    if client is None:
        import httpx

        client = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
    http = client
    try:
        with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
            futures = [pool.submit(grade, request, http) for request in pending]
            # issue #29: the first permanent failure (a 4xx, a question past its retries) ends the run: questions not
            # started are cancelled and those in flight stop before their next request, so a judge answering 500
            # costs one question's retries per worker, not every question's
            wait(futures, return_when=FIRST_EXCEPTION)
            counter.stopped.set()
            for future in futures:
                future.cancel()
            failures = [
                f.exception() for f in futures if not f.cancelled() and f.exception() is not None
            ]
            first = next((e for e in failures if not isinstance(e, _Stopped)), None)
            if first is not None:
                raise first
    finally:
        if own_client:
            http.close()
    judged = {
        qid: replace(a, verdict=verdicts[qid].text) if qid in verdicts else a
        for qid, a in answers.items()
    }
    hits = sum(v.cached for v in verdicts.values())
    return JudgeRun(judged, verdicts, counter.requests, hits)


def import_verdicts(
    answers: Mapping[str, Answer], verdict_dir: Path, model: str
) -> dict[str, Answer]:
    """Fill verdicts from upstream's ``evaluation-<judge>/<model>_<question id>.txt`` files (others kept as they are)."""
    folder = Path(verdict_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"verdict folder not found: {folder}")
    found = {}
    for path in folder.iterdir():
        parsed = parse_result_file_name(path.name)
        if parsed is not None and parsed.model == model and "__init__" not in path.name:
            found[parsed.question_id] = path
    return {
        qid: replace(a, verdict=read_text(found[qid])) if qid in found else a
        for qid, a in answers.items()
    }


def write_verdicts(answers: Mapping[str, Answer], root: Path, model: str, judge: str) -> Path:
    """Write verdicts in upstream's layout, ``<root>/evaluation-<judge>/<model>_<question id>.txt``."""
    folder = Path(root) / judge_folder(judge)
    folder.mkdir(parents=True, exist_ok=True)
    for qid, answer in answers.items():
        if answer.verdict is not None:
            (folder / f"{model}_{qid}.txt").write_text(answer.verdict, encoding="utf-8")
    return folder
