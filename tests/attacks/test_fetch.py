"""`procbench data fetch` against hostile servers on 127.0.0.1 (never the network): a redirect loop and a server that
trickles a byte at a time are each a one-line FAILED with exit 5, what arrived kept for a later resume."""

from __future__ import annotations

import hashlib
import http.server
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from typer.testing import CliRunner

from procbench.dsl.model import FetchSpec
from procbench import data as fetching
from procbench.cli import app

SERVE_AT_MOST_S = (
    20.0  # the trickling handler gives up by itself: a test never leaves a thread running for long
)


@dataclass
class Hostile:
    """What the loopback server does: "loop" (302 to itself), "chain" (``hops`` redirects, then ``body``), "trickle"
    (the announced length, then one byte every ``pause`` seconds)."""

    mode: str
    body: bytes = b""
    hops: int = 0
    pause: float = 0.05
    requests: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(state: Hostile) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = unquote(urlsplit(self.path).path)
            state.requests.append(path)
            hop = len(state.requests)
            if state.mode == "loop" or (state.mode == "chain" and hop <= state.hops):
                self.send_response(302)
                self.send_header("Location", path if state.mode == "loop" else f"/hop{hop}{path}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            if state.mode == "chain":
                self.wfile.write(state.body)
                return
            stop = time.monotonic() + SERVE_AT_MOST_S
            try:
                for byte in state.body:
                    if time.monotonic() > stop:
                        break
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(state.pause)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up: what the test expects
            self.close_connection = True

    return Handler


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    state = Hostile(mode="loop")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def _cli_fetch(
    server: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[int, str, FetchSpec]:
    """`procbench data fetch paradise-reverse-tip` with the hostile server as its mirror (as tests/test_data_fetch.py does)."""
    (item,) = fetching.plan("paradise-reverse-tip")
    monkeypatch.setenv("PROCBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROCBENCH_MIRROR", server.url)
    result = CliRunner().invoke(
        app,
        [
            "data",
            "fetch",
            "paradise-reverse-tip",
            "--to",
            str(tmp_path / "data"),
            "--quiet",
            *extra,
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    return result.exit_code, result.output, item.spec


def test_a_redirect_loop_is_one_failed_line_and_exit_10(
    hostile: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile.mode = "loop"
    code, output, spec = _cli_fetch(hostile, tmp_path, monkeypatch)
    assert code == 10  # fetch failed (procbench.exit_codes)
    failed = [line.strip() for line in output.splitlines() if "redirects more than" in line]
    assert failed == [
        f"{spec.path}: {fetching.mirrored(spec.url, hostile.url)} redirects more than 10 times (a redirect loop?); nothing was downloaded"
    ]
    assert (
        len(hostile.requests) == fetching.MAX_REDIRECTS + 1
    )  # given up at the limit, never retried
    assert not (tmp_path / "data" / spec.path).exists()


def test_a_few_redirects_are_followed(hostile: Hostile, tmp_path: Path) -> None:
    """The limit is on loops, not on the one or two redirects real hosts send."""
    hostile.mode, hostile.hops, hostile.body = "chain", 3, b"id,label\n1,0\n"
    spec = FetchSpec(
        name="f",
        path="bench/f.csv",
        sha256=hashlib.sha256(hostile.body).hexdigest(),
        size=len(hostile.body),
        url=f"{hostile.url}/f.csv",
    )
    result = fetching.fetch_file(
        spec, tmp_path / "data", cache_dir=tmp_path / "cache", deadline=fetching.Deadline.after(60)
    )
    assert (
        result.source == "downloaded"
        and (tmp_path / "data" / "bench" / "f.csv").read_bytes() == hostile.body
    )
    assert hostile.requests == [
        "/f.csv",
        "/hop1/f.csv",
        "/hop2/hop1/f.csv",
        "/hop3/hop2/hop1/f.csv",
    ]


def test_a_trickling_server_is_stopped_at_the_deadline_and_the_bytes_kept(
    hostile: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each byte arrives well within the read timeout, so only an overall deadline stops the download."""
    (item,) = fetching.plan("paradise-reverse-tip")
    hostile.mode, hostile.body = "trickle", b"x" * item.spec.size
    code, output, spec = _cli_fetch(hostile, tmp_path, monkeypatch, "--deadline", "0.5")
    assert code == 124, output  # the timeout status (procbench.exit_codes)
    (failed,) = [line.strip() for line in output.splitlines() if "deadline" in line]
    assert (
        failed.startswith(f"{spec.path}: ")
        and "the fetch's deadline of 0.5 s passed (--deadline, PROCBENCH_FETCH_DEADLINE)" in failed
    )
    partial = tmp_path / "cache" / "partial" / f"{spec.sha256}.part"
    assert 0 < partial.stat().st_size < spec.size  # kept for the next fetch to resume from
    assert not (tmp_path / "data" / spec.path).exists()


def test_the_deadline_is_a_setting_with_a_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fetching.DEFAULT_DEADLINE_S == 3600.0
    result = CliRunner().invoke(app, ["data", "fetch", "--help"])
    assert (
        "--deadline" in result.output
        and "PROCBENCH_FETCH_DEADLINE" in result.output
        and "3600" in result.output
    )
    monkeypatch.setenv("PROCBENCH_FETCH_DEADLINE", "-1")
    refused = CliRunner().invoke(app, ["data", "fetch", "paradise-reverse-tip"])
    assert (
        refused.exit_code == 2 and "Traceback" not in refused.output
    )  # a usage error, before anything is fetched


def test_a_data_root_folder_linking_elsewhere_is_not_written_through(
    hostile: Hostile, tmp_path: Path
) -> None:
    hostile.mode, hostile.hops, hostile.body = "chain", 0, b"id,label\n1,0\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "data"
    root.mkdir()
    (root / "bench").symlink_to(outside, target_is_directory=True)
    spec = FetchSpec(
        name="f",
        path="bench/f.csv",
        sha256=hashlib.sha256(hostile.body).hexdigest(),
        size=len(hostile.body),
        url=f"{hostile.url}/f.csv",
    )
    with pytest.raises(fetching.FetchError, match="outside the data root"):
        fetching.fetch_file(spec, root, cache_dir=tmp_path / "cache")
    assert list(outside.iterdir()) == [] and hostile.requests == []  # refused before any request
