"""A hostile OpenAI-compatible judge on 127.0.0.1 (never the network), answering raw bytes: the attack tests
control the whole reply body and status, not only the verdict text.  It counts requests and refuses
(HTTP 503) past ``max_requests``, so a client that never stops still ends."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Hostile:
    reply: Callable[[int], tuple[int, bytes]]  # request number (1-based) -> (status, body)
    max_requests: int = 400
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def verdict(text: str) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()


def nested(depth: int) -> bytes:
    """A syntactically valid reply body nested ``depth`` levels deep (about 2 bytes a level)."""
    return b'{"choices": ' + b"[" * depth + b"]" * depth + b"}"


@contextmanager
def serving(judge: Hostile) -> Iterator[str]:
    """The judge's base URL (``…/v1``) while the block runs."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with judge.lock:
                judge.requests += 1
                number = judge.requests
            status, body = (
                (503, b"too many requests to the fake judge")
                if number > judge.max_requests
                else judge.reply(number)
            )
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
