"""``procbench data fetch`` against real HTTP servers on 127.0.0.1 (files, Range, a fake Hub) — never the network."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import Result
from typer.testing import CliRunner

from procbench.dsl.model import FetchSpec
from procbench import data as fetching
from procbench.api import load_task
from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT

SAMPLE_FILE = SAMPLE_DATA_ROOT / "paradise" / "src" / "data" / "tip_test.csv"
HUB_COMMIT = "0123456789abcdef0123456789abcdef01234567"
CLOSED_PORT_URL = (
    "http://127.0.0.1:9"  # discard port: nothing listens, connections are refused at once
)


@dataclass
class Loopback:
    """A file server on 127.0.0.1 with Range support, request logging, induced faults and a fake Hub."""

    root: Path
    hub_files: dict[str, bytes] = field(
        default_factory=dict
    )  # "/datasets/<repo>/resolve/<rev>/<file>" -> bytes
    drop_after: int | None = (
        None  # send only this many body bytes, then close (while drops_left > 0)
    )
    drops_left: int = 0
    ignore_range: bool = False
    requests: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # (method, path, Range header)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(state: Loopback) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _body(self) -> tuple[bytes | None, dict[str, str]]:
            path = unquote(urlsplit(self.path).path)
            if path in state.hub_files:
                content = state.hub_files[path]
                return content, {
                    "X-Repo-Commit": HUB_COMMIT,
                    "ETag": f'"{hashlib.sha1(content).hexdigest()}"',
                }
            candidate = (state.root / path.lstrip("/")).resolve()
            if candidate.is_file() and candidate.is_relative_to(state.root.resolve()):
                return candidate.read_bytes(), {}
            return None, {}

        def _respond(self, send_body: bool) -> None:
            range_header = self.headers.get("Range", "")
            state.requests.append((self.command, unquote(urlsplit(self.path).path), range_header))
            content, extra = self._body()
            if content is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = (
                int(range_header[len("bytes=") :].split("-")[0])
                if range_header.startswith("bytes=") and not state.ignore_range
                else 0
            )
            if start >= len(content) > 0:
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = content[start:]
            self.send_response(206 if start else 200)
            if start:
                self.send_header(
                    "Content-Range", f"bytes {start}-{len(content) - 1}/{len(content)}"
                )
            self.send_header("Content-Length", str(len(body)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            if not send_body:
                return
            if state.drop_after is not None and state.drops_left > 0:
                state.drops_left -= 1
                self.wfile.write(body[: state.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._respond(True)

        def do_HEAD(self) -> None:
            self._respond(False)

    return Handler


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Loopback]:
    state = Loopback(root=tmp_path / "served")
    state.root.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = httpd.server_address[1]
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _no_real_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process calls that reach for the Hub get a refused loopback port and an empty cache, never the network.

    Hub offline mode is switched off for these tests even when another test module switched it on
    process-wide (huggingface_hub reads HF_HUB_OFFLINE once, at import).
    """
    import huggingface_hub.constants

    monkeypatch.setenv("HF_ENDPOINT", CLOSED_PORT_URL)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-default"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("PROCBENCH_MIRROR", raising=False)
    monkeypatch.delenv("PROCBENCH_DATA", raising=False)


def _spec_for(
    content: bytes, *, url: str = "", path: str = "bench/file.csv", **hub: str
) -> FetchSpec:
    return FetchSpec(
        name="file",
        path=path,
        sha256=hashlib.sha256(content).hexdigest(),
        size=len(content),
        url=url,
        **hub,
    )


def _serve(server: Loopback, content: bytes, name: str = "upstream/file.csv") -> str:
    target = server.root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return f"{server.url}/{name}"


# -- URL files -----------------------------------------------------------------------------------


def test_download_is_verified_placed_and_then_served_offline(
    server: Loopback, tmp_path: Path
) -> None:
    content = SAMPLE_FILE.read_bytes()
    spec = _spec_for(content, url=_serve(server, content))
    root, cache = tmp_path / "data", tmp_path / "cache"

    first = fetching.fetch_file(spec, root, cache_dir=cache)
    assert first.source == "downloaded" and (root / "bench/file.csv").read_bytes() == content
    assert (cache / "blobs" / "sha256" / spec.sha256).read_bytes() == content

    offline = FetchSpec(**{**spec.__dict__, "url": f"{CLOSED_PORT_URL}/upstream/file.csv"})
    assert fetching.fetch_file(offline, root, cache_dir=cache).source == "present"
    (root / "bench/file.csv").unlink()
    again = fetching.fetch_file(offline, root, cache_dir=cache)
    assert again.source == "cache" and (root / "bench/file.csv").read_bytes() == content
    assert len(server.requests) == 1  # only the first fetch touched the server


def test_interrupted_download_resumes_with_a_range_request(
    server: Loopback, tmp_path: Path
) -> None:
    content = SAMPLE_FILE.read_bytes()
    spec = _spec_for(content, url=_serve(server, content))
    root, cache = tmp_path / "data", tmp_path / "cache"
    server.drop_after, server.drops_left = 1000, 1

    with pytest.raises(fetching.FetchError, match="1000 bytes are kept") as failure:
        fetching.fetch_file(spec, root, cache_dir=cache, retries=0)
    assert not isinstance(failure.value, fetching.IntegrityError)
    partial = cache / "partial" / f"{spec.sha256}.part"
    assert partial.stat().st_size == 1000 and not (root / "bench/file.csv").exists()

    result = fetching.fetch_file(spec, root, cache_dir=cache, retries=0)
    assert result.source == "downloaded" and result.resumed_from == 1000
    assert server.requests[-1] == ("GET", "/upstream/file.csv", "bytes=1000-")
    assert (root / "bench/file.csv").read_bytes() == content and not partial.exists()


def test_a_dropped_connection_is_resumed_within_one_fetch(server: Loopback, tmp_path: Path) -> None:
    content = SAMPLE_FILE.read_bytes()
    spec = _spec_for(content, url=_serve(server, content))
    server.drop_after, server.drops_left = 777, 2

    result = fetching.fetch_file(spec, tmp_path / "data", cache_dir=tmp_path / "cache", retries=2)
    assert result.source == "downloaded"
    assert [r[2] for r in server.requests] == ["", "bytes=777-", "bytes=1554-"]
    assert (tmp_path / "data/bench/file.csv").read_bytes() == content


def test_a_server_that_ignores_range_restarts_the_file(server: Loopback, tmp_path: Path) -> None:
    content = SAMPLE_FILE.read_bytes()
    spec = _spec_for(content, url=_serve(server, content))
    server.drop_after, server.drops_left, server.ignore_range = 500, 1, True

    fetching.fetch_file(spec, tmp_path / "data", cache_dir=tmp_path / "cache", retries=1)
    assert (tmp_path / "data/bench/file.csv").read_bytes() == content


@pytest.mark.parametrize("tamper", ["sha256", "size_smaller", "size_larger"])
def test_a_file_that_does_not_match_is_not_left_in_place(
    server: Loopback, tmp_path: Path, tamper: str
) -> None:
    content = SAMPLE_FILE.read_bytes()
    spec = _spec_for(content, url=_serve(server, content))
    if tamper == "sha256":
        spec = FetchSpec(
            **{**spec.__dict__, "sha256": hashlib.sha256(b"something else").hexdigest()}
        )
    else:
        spec = FetchSpec(
            **{**spec.__dict__, "size": spec.size + (-10 if tamper == "size_smaller" else 10)}
        )
    root, cache = tmp_path / "data", tmp_path / "cache"

    with pytest.raises(fetching.IntegrityError) as failure:
        fetching.fetch_file(spec, root, cache_dir=cache, retries=0)
    message = str(failure.value)
    assert "bench/file.csv" in message and ("expected" in message or "larger than" in message)
    assert not (root / "bench/file.csv").exists()
    assert not list((cache / "partial").glob("*")) and not (cache / "blobs").exists()


def test_http_errors_and_unsafe_paths_are_reported(server: Loopback, tmp_path: Path) -> None:
    spec = _spec_for(b"x", url=f"{server.url}/missing.csv")
    with pytest.raises(fetching.FetchError, match="HTTP 404"):
        fetching.fetch_file(spec, tmp_path, cache_dir=tmp_path / "cache")
    with pytest.raises(fetching.FetchError, match="must be relative"):
        fetching.fetch_file(
            _spec_for(b"x", url=f"{server.url}/x", path="../outside.csv"), tmp_path / "data"
        )


def test_mirror_rewrites_the_host_into_the_path() -> None:
    url = "https://raw.githubusercontent.com/GGLAB-KU/paradise/59f7a40/src/data/tip_test.csv"
    assert (
        fetching.mirrored(url, "http://127.0.0.1:8000/")
        == "http://127.0.0.1:8000/raw.githubusercontent.com/GGLAB-KU/paradise/59f7a40/src/data/tip_test.csv"
    )
    assert fetching.mirrored(url, None) == url


# -- Hub files -----------------------------------------------------------------------------------


def _hub_spec(content: bytes) -> FetchSpec:
    return _spec_for(
        content,
        path="paradise/src/data/tip_test.csv",
        hub_repo="GGLab/PARADISE",
        hub_file="tip_test.csv",
        revision="337abd1",
    )


def test_hub_file_through_a_fake_endpoint_then_from_the_hugging_face_cache(
    server: Loopback, tmp_path: Path
) -> None:
    content = SAMPLE_FILE.read_bytes()
    server.hub_files["/datasets/GGLab/PARADISE/resolve/337abd1/tip_test.csv"] = content
    spec, root, hub_cache = _hub_spec(content), tmp_path / "data", tmp_path / "hf"

    first = fetching.fetch_file(spec, root, hub_endpoint=server.url, hub_cache=hub_cache)
    assert first.source == "hub" and (root / spec.path).read_bytes() == content
    assert ("GET", "/datasets/GGLab/PARADISE/resolve/337abd1/tip_test.csv", "") in server.requests

    (root / spec.path).unlink()
    offline = fetching.fetch_file(spec, root, hub_endpoint=CLOSED_PORT_URL, hub_cache=hub_cache)
    assert offline.source == "cache" and (root / spec.path).read_bytes() == content


def _hand_made_hub_cache(hub_cache: Path, content: bytes) -> None:
    """huggingface_hub's cache layout: refs/<revision> -> commit, snapshots/<commit>/<file> -> blob."""
    repo = hub_cache / "datasets--GGLab--PARADISE"
    blob = repo / "blobs" / hashlib.sha1(content).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(content)
    (repo / "refs").mkdir()
    (repo / "refs" / "337abd1").write_text(HUB_COMMIT)
    snapshot = repo / "snapshots" / HUB_COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "tip_test.csv").symlink_to(os.path.relpath(blob, snapshot))


def test_hub_file_from_a_hand_made_cache_without_any_server(tmp_path: Path) -> None:
    content = SAMPLE_FILE.read_bytes()
    _hand_made_hub_cache(tmp_path / "hf", content)
    result = fetching.fetch_file(
        _hub_spec(content),
        tmp_path / "data",
        hub_endpoint=CLOSED_PORT_URL,
        hub_cache=tmp_path / "hf",
    )
    assert result.source == "cache"
    assert (tmp_path / "data/paradise/src/data/tip_test.csv").read_bytes() == content


def test_hub_file_with_the_wrong_content_is_refused(server: Loopback, tmp_path: Path) -> None:
    content = SAMPLE_FILE.read_bytes()
    tampered = content[:-6] + b"XXXX\r\n"  # same size, other bytes
    _hand_made_hub_cache(tmp_path / "hf", tampered)
    server.hub_files["/datasets/GGLab/PARADISE/resolve/337abd1/tip_test.csv"] = tampered
    with pytest.raises(fetching.IntegrityError, match="sha256"):
        fetching.fetch_file(
            _hub_spec(content),
            tmp_path / "data",
            hub_endpoint=server.url,
            hub_cache=tmp_path / "hf",
        )
    assert not (tmp_path / "data/paradise/src/data/tip_test.csv").exists()
    assert any(
        method == "GET" for method, _, _ in server.requests
    )  # the stale cache entry sent it online


# -- the shipped specs ---------------------------------------------------------------------------


def test_plan_follows_benchmarks_tasks_splits_and_variants() -> None:
    paradise_test = fetching.plan("PARADISE", split="test")
    assert {item.spec.path.rsplit("/", 1)[-1] for item in paradise_test} == {
        "tip_test.csv",
        "warning_test.csv",
        "tip_test0.5.csv",
        "tip_test0.75.csv",
        "warning_test0.5.csv",
        "warning_test0.75.csv",
        "reverse_tip_test.csv",
        "reverse_warning_test.csv",
    }
    rq3 = next(i for i in paradise_test if i.spec.path.endswith("tip_test0.5.csv"))
    assert rq3.tasks == ("paradise-tip",) and "test_mlm" in rq3.spec.splits
    hub = next(i for i in paradise_test if i.spec.path.endswith("/tip_test.csv"))
    assert hub.spec.hub_repo == "GGLab/PARADISE" and hub.origin.startswith(
        "hf://datasets/GGLab/PARADISE@"
    )
    assert [i.spec.path for i in fetching.plan("openpi-head", split="dev")] == [
        i.spec.path for i in fetching.plan("openpi", split="dev")
    ]
    assert {t for i in fetching.plan("OpenPI") for t in i.tasks} == {"openpi", "openpi-head"}
    with pytest.raises(fetching.FetchError, match="no split 'train'"):
        fetching.plan("paradise-tip", split="train")
    with pytest.raises(fetching.FetchError, match="known: "):
        fetching.plan("no-such-benchmark")


def test_every_fetch_block_matches_the_staged_upstream_files(data_root: Path) -> None:
    # the specs that say where their data is published (a new task may keep its data elsewhere: no fetch blocks)
    spec_paths = [
        p for p in sorted(PROJECT_ROOT.joinpath("specs").glob("*.spec")) if load_task(p)[0].fetch
    ]
    items = {item.spec.path: item for p in spec_paths for item in fetching.plan(str(p))}
    assert len(items) >= 90
    states = fetching.status(items.values(), data_root)
    assert [(s.item.spec.path, s.state, s.detail) for s in states if s.state != "ok"] == []
    for item in items.values():
        assert item.spec.hub_repo or item.spec.url.startswith("https://raw.githubusercontent.com/")
        if item.spec.url:  # pinned to a 40-hex commit, as SOURCE.md names it
            commit = item.spec.url.split("/")[5]
            assert (
                len(commit) == 40
                and commit in (data_root / item.spec.path.split("/")[0] / "SOURCE.md").read_text()
            )


def test_every_file_a_spec_reads_is_declared_in_its_fetch_blocks(data_root: Path) -> None:
    """Read each split's gold under an audit hook and compare the files opened with the fetch blocks."""
    opened: list[str] = []
    active = [True]
    root = data_root.resolve()

    def hook(event: str, args: tuple) -> None:
        if active[0] and event == "open" and args and isinstance(args[0], (str, os.PathLike)):
            path = Path(os.fsdecode(args[0])).resolve()
            if path.is_relative_to(root) and path.is_file():
                opened.append(path.relative_to(root).as_posix())

    sys.addaudithook(
        hook
    )  # audit hooks cannot be removed: this one is switched off when the test ends
    try:
        for spec_file in sorted(PROJECT_ROOT.joinpath("specs").glob("*.spec")):
            spec, runner = load_task(spec_file)
            declared = {b.path: b for b in spec.fetch}
            for split in runner.splits:
                opened.clear()
                try:
                    runner.read_gold(root, split)
                except FileNotFoundError:
                    continue  # a split not staged (PAGED test): nothing to compare
                undeclared = sorted(
                    {
                        p
                        for p in opened
                        if p not in declared
                        or (declared[p].splits and split not in declared[p].splits)
                    }
                )
                assert undeclared == [], (
                    f"{spec.name}/{split} reads files without a fetch block for that split"
                )
    finally:
        active[0] = False


# -- the command line ----------------------------------------------------------------------------


def _cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def test_cli_fetches_paradise_from_a_mirror_and_the_hub_cache_then_scores_offline(
    server: Loopback, tmp_path: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = fetching.plan("paradise-tip", split="test")
    for item in items:  # lay the upstream files out as the mirror would serve them
        if item.spec.url:
            served = (
                server.root
                / urlsplit(item.spec.url).netloc
                / unquote(urlsplit(item.spec.url).path).lstrip("/")
            )
            served.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_root / item.spec.path, served)
    hub_item = next(i for i in items if i.spec.hub_repo)
    _hand_made_hub_cache(tmp_path / "hf", (data_root / hub_item.spec.path).read_bytes())
    env = {
        "PROCBENCH_MIRROR": server.url,
        "HF_HUB_CACHE": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "PROCBENCH_CACHE": str(tmp_path / "cache"),
    }
    dest = tmp_path / "fetched"

    # The real command in its own process, configured only through the environment.
    first = subprocess.run(
        [
            str(PROJECT_ROOT / ".venv/bin/procbench"),
            "data",
            "fetch",
            "paradise-tip",
            "--split",
            "test",
            "--to",
            str(dest),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        cwd=PROJECT_ROOT,
    )
    assert first.returncode == 0, first.stderr
    assert "3 verified (2 downloaded, 1 from cache, 0 already present), 0 failed" in first.stdout
    assert f"--data-dir {dest}" in first.stdout
    for item in items:
        assert (dest / item.spec.path).read_bytes() == (data_root / item.spec.path).read_bytes()

    # No network any more: the mirror is a refused port and the Hub is offline.
    for key, value in {**env, "PROCBENCH_MIRROR": CLOSED_PORT_URL}.items():
        monkeypatch.setenv(key, value)
    assert (
        "3 already present"
        in _cli("data", "fetch", "paradise-tip", "--split", "test", "--to", str(dest)).stdout
    )
    shutil.rmtree(dest)
    again = _cli("data", "fetch", "paradise-tip", "--split", "test", "--to", str(dest))
    assert again.exit_code == 0 and "3 from cache" in again.stdout
    assert (
        _cli("data", "status", "paradise-tip", "--split", "test", "--data-dir", str(dest)).exit_code
        == 0
    )

    predictions = tmp_path / "zeros.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "label": 0}) + "\n" for i in range(500)))
    scored = _cli(
        "score",
        "paradise-tip",
        "--split",
        "test",
        "--data-dir",
        str(dest),
        "--predictions",
        str(predictions),
        "--json",
    )
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["n_items"] == 500


def test_cli_exits_10_and_leaves_nothing_when_the_upstream_file_differs(
    server: Loopback, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mirror serves other bytes of the right size: the digest the task declares (its lock) refuses them."""
    (item,) = fetching.plan("paradise-reverse-tip")
    parts = urlsplit(item.spec.url)
    served = server.root / parts.netloc / unquote(parts.path).lstrip("/")
    served.parent.mkdir(parents=True)
    served.write_bytes(b"x" * item.spec.size)
    monkeypatch.setenv("PROCBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROCBENCH_MIRROR", server.url)

    result = _cli("data", "fetch", "paradise-reverse-tip", "--to", str(tmp_path / "data"))
    assert result.exit_code == 10
    assert (
        "FAILED" in result.stderr
        and f"expected {item.spec.sha256}" in result.stderr
        and "not put in place" in result.stderr
    )
    assert hashlib.sha256(b"x" * item.spec.size).hexdigest() in result.stderr
    assert not (tmp_path / "data" / item.spec.path).exists() and not list(
        (tmp_path / "cache").rglob("*.part")
    )
    missing = _cli("data", "status", "paradise-reverse-tip", "--data-dir", str(tmp_path / "data"))
    assert missing.exit_code == 4 and "missing" in missing.stdout
