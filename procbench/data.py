"""Fetching a benchmark's upstream files into the data root, verified against the spec's lock file.

A spec's ``fetch`` blocks say where its files are published (a raw GitHub URL pinned to a commit,
or a Hugging Face Hub dataset at a revision) and where they land under the data root; the lock
beside the spec (``specs/<task>.lock``, written by ``procbench data lock``, see :mod:`procbench.dsl.lock`)
lists every file they expand to with its size and sha256.  The checker puts those files in
``spec.fetch`` as :class:`FetchSpec`, which is what this module fetches and verifies.  Fetching a file:

1. a destination that already has the right size and sha256 is kept (no network);
2. URL files go through a content-addressed cache (``<cache>/blobs/sha256/<hex>``): a verified blob
   there is copied, otherwise the file is downloaded into ``<cache>/partial/<hex>.part``, resuming
   from what an earlier, interrupted attempt left (HTTP ``Range``), then verified and moved in;
3. Hub files go through ``huggingface_hub`` and its own cache (``HF_HUB_CACHE``), which also
   serves them offline once fetched.

A file whose size or sha256 does not match the lock is never put in place: the error names both
digests and the partial download is deleted so that the next attempt starts clean.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from procbench.dsl.model import FetchSpec
from procbench.paths import default_fetch_root  # noqa: F401 - re-exported: the fetch API names it
from procbench.runners.runtime.paths import OutsideDataRoot, under_data_root

DEFAULT_RETRIES = (
    2  # further attempts after an interrupted download, each resuming where the last stopped
)
TIMEOUT = httpx.Timeout(
    30.0, connect=10.0
)  # one connection and one read; the whole fetch has its own Deadline
MAX_REDIRECTS = (
    10  # GitHub's raw files and the Hub redirect once or twice; a loop is refused at the 11th
)
DEFAULT_DEADLINE_S = (
    3600.0  # the whole `data fetch` (every file); --deadline / PROCBENCH_FETCH_DEADLINE, 0 = none
)

Source = Literal["present", "cache", "downloaded", "hub"]


class FetchError(Exception):
    """A file could not be fetched (network, HTTP status, missing origin); the message says what to do."""


class DeadlinePassed(FetchError):
    """The whole fetch's deadline passed (``--deadline``, PROCBENCH_FETCH_DEADLINE): ``data fetch`` exits with EXIT_TIMEOUT."""


class IntegrityError(FetchError):
    """A fetched file's size or sha256 differs from the lock's; nothing was put in place."""


@dataclass(frozen=True)
class Deadline:
    """When a whole fetch must stop (time.monotonic()); a slow or trickling server cannot hold it past that."""

    seconds: float
    at: float

    @classmethod
    def after(cls, seconds: float | None) -> Deadline | None:
        return cls(seconds, time.monotonic() + seconds) if seconds else None

    def left(self) -> float:
        return self.at - time.monotonic()

    def timeout(self) -> httpx.Timeout:
        """The per-connection and per-read limits, cut to the time left."""
        left = max(self.left(), 0.001)
        return httpx.Timeout(min(30.0, left), connect=min(10.0, left))

    def check(self, what: str) -> None:
        if self.left() <= 0:
            raise DeadlinePassed(
                f"{what}: the fetch's deadline of {self.seconds:g} s passed (--deadline, PROCBENCH_FETCH_DEADLINE)"
            )


@dataclass(frozen=True)
class FetchItem:
    """One file to fetch, with the tasks that declare it."""

    spec: FetchSpec
    tasks: tuple[str, ...]

    @property
    def origin(self) -> str:
        s = self.spec
        if s.hub_repo:
            return f"hf://{s.repo_type}s/{s.hub_repo}@{s.revision or 'main'}/{s.hub_file}"
        return s.url


@dataclass(frozen=True)
class FetchResult:
    """What happened to one file: where it is now and where it came from."""

    path: Path
    relative_path: str
    source: Source
    size: int
    sha256: str
    resumed_from: int = (
        0  # bytes of an earlier interrupted download on disk when this fetch started
    )


@dataclass(frozen=True)
class FileStatus:
    """A declared file's state under a data root, checked without the network."""

    item: FetchItem
    path: Path
    state: Literal["ok", "missing", "mismatch"]
    detail: str = ""


# -- where things go -------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """``PROCBENCH_CACHE`` when set, else ``$XDG_CACHE_HOME/procbench`` (``~/.cache/procbench``)."""
    env = os.environ.get("PROCBENCH_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser().resolve() / "procbench"


def destination(root: Path, spec: FetchSpec) -> Path:
    """``root / spec.path``, refusing paths that would leave the data root."""
    relative = PurePosixPath(spec.path)
    if not spec.path or relative.is_absolute() or ".." in relative.parts or "\\" in spec.path:
        raise FetchError(
            f"fetch {spec.name!r}: path {spec.path!r} must be relative to the data root, with '/' and without '..'"
        )
    try:  # and, resolved, inside it: a folder of the data root that links elsewhere is not written through
        return under_data_root(Path(root), spec.path, f"fetch {spec.name!r}: path")
    except OutsideDataRoot as exc:
        raise FetchError(str(exc)) from None


def mirrored(url: str, mirror: str | None) -> str:
    """``https://host/p`` -> ``<mirror>/host/p`` (an organisation's mirror, or a test's loopback server)."""
    if not mirror:
        return url
    parts = urlsplit(url)
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"{mirror.rstrip('/')}/{parts.netloc}{rest}"


# -- choosing files -------------------------------------------------------------------------------


def plan(target: str, *, split: str | None = None) -> list[FetchItem]:
    """The files a benchmark (name as in ``benchmark = ...``, any case) or a task needs, one per path.

    ``split`` keeps the files needed for that split (blocks without ``splits`` are needed by all).
    Raises FetchError when nothing matches or two tasks declare one path with different digests.
    """
    from procbench.dsl.tasks import all_spec_paths, load_task

    if target.endswith(".spec") or Path(target).is_file():
        spec, runner = load_task(target)
        tasks = [(spec, runner.splits)]
    else:
        loaded = [load_task(path) for path in all_spec_paths()]
        tasks = [
            (spec, runner.splits)
            for spec, runner in loaded
            if target.lower() in (spec.name.lower(), spec.benchmark.lower())
        ]
        if not tasks:
            known = sorted(
                {spec.name for spec, _ in loaded}
                | {spec.benchmark for spec, _ in loaded if spec.benchmark}
            )
            raise FetchError(f"no benchmark or task named {target!r} (known: {', '.join(known)})")
    if split is not None and not any(split in splits for _, splits in tasks):
        raise FetchError(
            f"{target!r} has no split {split!r} (splits: {', '.join(sorted({s for _, ss in tasks for s in ss}))})"
        )
    by_path: dict[str, FetchItem] = {}
    for spec, _ in tasks:
        for block in spec.fetch:
            if split is not None and block.splits and split not in block.splits:
                continue
            known_item = by_path.get(block.path)
            if known_item is None:
                by_path[block.path] = FetchItem(block, (spec.name,))
            elif (known_item.spec.sha256, known_item.spec.size) != (block.sha256, block.size):
                raise FetchError(
                    f"{block.path}: tasks {known_item.tasks[0]!r} and {spec.name!r} declare different sha256/size for it"
                )
            else:
                by_path[block.path] = FetchItem(known_item.spec, (*known_item.tasks, spec.name))
    if not by_path:
        names = ", ".join(spec.name for spec, _ in tasks)
        raise FetchError(
            f"no fetch blocks for {target!r}{f' split {split!r}' if split else ''} (tasks: {names}); the spec does not say where its data is published"
        )
    return [by_path[p] for p in sorted(by_path)]


# -- verifying -----------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def mismatch(path: Path, spec: FetchSpec) -> str:
    """'' when ``path`` has the size and sha256 the lock records, else what differs."""
    size = path.stat().st_size
    if size != spec.size:
        return f"size {size} bytes, expected {spec.size}"
    digest = sha256_of(path)
    if digest != spec.sha256:
        return f"sha256 {digest}, expected {spec.sha256}"
    return ""


def status(items: Iterable[FetchItem], root: Path) -> list[FileStatus]:
    """Each declared file's state under ``root`` (present and verified, missing, or different)."""
    out = []
    for item in items:
        path = destination(root, item.spec)
        if not path.is_file():
            out.append(FileStatus(item, path, "missing"))
            continue
        problem = mismatch(path, item.spec)
        out.append(FileStatus(item, path, "mismatch" if problem else "ok", problem))
    return out


def _place(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` atomically (a reader never sees half a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.procbench-{os.getpid()}.tmp")
    try:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


# -- downloading ---------------------------------------------------------------------------------


class _Interrupted(Exception):
    """The connection ended before the whole file arrived; what arrived is kept for resuming."""


def _progress_bar(name: str, total: int, initial: int, show: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=name,
        file=sys.stderr,
        disable=not show,
        leave=False,
    )


def _announced_size(response: httpx.Response) -> int | None:
    """The whole file's size as the server states it (Content-Range total, or Content-Length of a 200)."""
    if response.status_code == 206:
        total = response.headers.get("Content-Range", "").rpartition("/")[2]
        return int(total) if total.isdigit() else None
    if response.headers.get("Content-Encoding", "identity") != "identity":
        return None  # the length is of the encoded body
    length = response.headers.get("Content-Length", "")
    return int(length) if length.isdigit() else None


def _download_once(
    client: httpx.Client,
    url: str,
    partial: Path,
    spec: FetchSpec,
    show_progress: bool,
    deadline: Deadline | None = None,
) -> int:
    """One GET into ``partial``, resuming from its current size; returns the offset it resumed from.

    With a ``deadline``, each connection and read waits at most the time left, and it is checked at every chunk: a
    server that trickles a byte at a time is stopped, what arrived kept for the next fetch to resume from."""
    offset = partial.stat().st_size if partial.exists() else 0
    if offset > spec.size:
        partial.unlink()
        offset = 0
    if offset == spec.size:
        partial.touch()  # an empty upstream file, or a download that had finished
        return offset
    headers = {"Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        with client.stream(
            "GET", url, headers=headers, timeout=deadline.timeout() if deadline else TIMEOUT
        ) as response:
            if response.status_code == 206 and response.headers.get("Content-Range", "").startswith(
                f"bytes {offset}-"
            ):
                mode = "ab"
            elif response.status_code == 200:
                offset, mode = 0, "wb"  # the server ignored Range: start over
            elif response.status_code == 416:
                partial.unlink(missing_ok=True)
                raise _Interrupted("the server refused to resume (416); starting over")
            elif response.status_code >= 500:
                raise _Interrupted(f"HTTP {response.status_code} from {url}")
            else:
                raise FetchError(f"HTTP {response.status_code} {response.reason_phrase} for {url}")
            announced = _announced_size(response)
            if announced is not None and announced != spec.size:
                raise IntegrityError(
                    f"{spec.path}: {url} has size {announced} bytes, expected {spec.size}; it was not put in place"
                )
            received = offset
            with (
                partial.open(mode) as handle,
                _progress_bar(
                    spec.path.rsplit("/", 1)[-1], spec.size, offset, show_progress
                ) as bar,
            ):
                for chunk in response.iter_bytes():
                    if deadline is not None and deadline.left() <= 0:
                        handle.flush()
                        deadline.check(
                            f"{spec.path}: {url} (stopped after {received} of {spec.size} bytes, kept in {partial})"
                        )
                    received += len(chunk)
                    if received > spec.size:
                        raise IntegrityError(
                            f"{spec.path}: {url} is larger than the {spec.size} bytes the lock records; it was not put in place"
                        )
                    handle.write(chunk)
                    bar.update(len(chunk))
    except httpx.TooManyRedirects:
        raise FetchError(
            f"{spec.path}: {url} redirects more than {MAX_REDIRECTS} times (a redirect loop?); nothing was downloaded"
        ) from None
    except httpx.TransportError as exc:
        raise _Interrupted(f"{type(exc).__name__}: {exc}") from exc
    except httpx.HTTPError as exc:  # the rest of httpx's errors (a bad URL or redirect target, an undecodable body): not retried
        raise FetchError(f"{spec.path}: {url}: {type(exc).__name__}: {exc}") from None
    if partial.stat().st_size < spec.size:
        raise _Interrupted(
            f"the connection closed after {partial.stat().st_size} of {spec.size} bytes"
        )
    return offset


def _download(
    url: str,
    partial: Path,
    spec: FetchSpec,
    *,
    retries: int,
    show_progress: bool,
    deadline: Deadline | None = None,
) -> int:
    """Download into ``partial`` with up to ``retries`` resumed attempts; returns the first resume offset."""
    partial.parent.mkdir(parents=True, exist_ok=True)
    first_offset = partial.stat().st_size if partial.exists() else 0
    last_error = ""
    with httpx.Client(
        timeout=TIMEOUT, follow_redirects=True, max_redirects=MAX_REDIRECTS
    ) as client:
        for _ in range(retries + 1):
            if deadline is not None:
                kept = partial.stat().st_size if partial.exists() else 0
                deadline.check(
                    f"{spec.path}: {url} ({kept} of {spec.size} bytes kept in {partial}{'; ' + last_error if last_error else ''})"
                )
            try:
                _download_once(client, url, partial, spec, show_progress, deadline)
                return first_offset
            except _Interrupted as exc:
                last_error = str(exc)
            except IntegrityError:
                partial.unlink(missing_ok=True)
                raise
    kept = partial.stat().st_size if partial.exists() else 0
    raise FetchError(
        f"download of {url} failed after {retries + 1} attempt(s): {last_error}; {kept} bytes are kept in {partial} and the next fetch resumes from there"
    )


def _fetch_url(
    spec: FetchSpec,
    target: Path,
    *,
    cache_dir: Path,
    mirror: str | None,
    retries: int,
    show_progress: bool,
    deadline: Deadline | None = None,
) -> FetchResult:
    blob = cache_dir / "blobs" / "sha256" / spec.sha256
    if blob.is_file() and not mismatch(blob, spec):
        _place(blob, target)
        return FetchResult(target, spec.path, "cache", spec.size, spec.sha256)
    blob.unlink(missing_ok=True)
    partial = cache_dir / "partial" / f"{spec.sha256}.part"
    url = mirrored(spec.url, mirror)
    resumed = _download(
        url, partial, spec, retries=retries, show_progress=show_progress, deadline=deadline
    )
    problem = mismatch(partial, spec)
    if problem:
        partial.unlink()
        raise IntegrityError(
            f"{spec.path}: downloaded file from {url} has {problem}; it was not put in place"
        )
    blob.parent.mkdir(parents=True, exist_ok=True)
    os.replace(partial, blob)
    _place(blob, target)
    return FetchResult(target, spec.path, "downloaded", spec.size, spec.sha256, resumed)


def _fetch_hub(
    spec: FetchSpec,
    target: Path,
    *,
    hub_endpoint: str | None,
    hub_cache: Path | None,
    show_progress: bool,
) -> FetchResult:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    # Read at call time (huggingface_hub reads these once, at import).
    options: dict[str, Any] = {
        "repo_type": spec.repo_type,
        "revision": spec.revision or None,
        "endpoint": hub_endpoint or os.environ.get("HF_ENDPOINT") or None,
        "cache_dir": hub_cache or os.environ.get("HF_HUB_CACHE") or None,
        "tqdm_class": None if show_progress else _silent_tqdm_class(),
    }
    try:
        # The Hugging Face cache first: offline it answers at once (the Hub client would retry for ~20 s).
        local = hf_hub_download(spec.hub_repo, spec.hub_file, local_files_only=True, **options)
    except LocalEntryNotFoundError:
        local = None
    if local is None and os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise FetchError(
            f"{spec.path}: {spec.hub_repo}/{spec.hub_file}@{spec.revision or 'main'} is not in the Hugging Face cache and HF_HUB_OFFLINE is set"
        )
    source: Source = "cache"
    try:
        if local is None or mismatch(Path(local), spec):
            source = "hub"
            local = hf_hub_download(
                spec.hub_repo, spec.hub_file, force_download=local is not None, **options
            )
    except LocalEntryNotFoundError as exc:
        raise FetchError(
            f"{spec.path}: {spec.hub_repo}/{spec.hub_file}@{spec.revision or 'main'} is not in the Hugging Face cache and the Hub cannot be reached "
            f"({exc.__class__.__name__})"
        ) from None
    except (HfHubHTTPError, httpx.HTTPError, OSError, ValueError) as exc:
        raise FetchError(
            f"{spec.path}: could not download {spec.hub_repo}/{spec.hub_file} from the Hub: {exc}"
        ) from None
    problem = mismatch(Path(local), spec)
    if problem:
        raise IntegrityError(
            f"{spec.path}: the Hub file {spec.hub_repo}/{spec.hub_file}@{spec.revision or 'main'} has {problem}; it was not put in place"
        )
    _place(Path(local), target)
    return FetchResult(target, spec.path, source, spec.size, spec.sha256)


def _silent_tqdm_class():
    from tqdm.auto import tqdm

    class Silent(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return Silent


def fetch_file(
    spec: FetchSpec,
    root: Path,
    *,
    cache_dir: Path | None = None,
    mirror: str | None = None,
    hub_endpoint: str | None = None,
    hub_cache: Path | None = None,
    retries: int = DEFAULT_RETRIES,
    show_progress: bool = False,
    deadline: Deadline | None = None,
) -> FetchResult:
    """Put one declared file under ``root``, verified; raises FetchError / IntegrityError.

    ``deadline``: when the whole fetch must stop (a Hub download is checked before it starts; the Hub client's own
    timeouts bound it once started)."""
    target = destination(Path(root), spec)
    if target.is_file() and not mismatch(target, spec):
        return FetchResult(target, spec.path, "present", spec.size, spec.sha256)
    if deadline is not None:
        deadline.check(spec.path)
    if spec.hub_repo:
        return _fetch_hub(
            spec,
            target,
            hub_endpoint=hub_endpoint,
            hub_cache=hub_cache,
            show_progress=show_progress,
        )
    if not spec.url:
        raise FetchError(f"fetch {spec.name!r} has no origin (url or hub_repo)")
    return _fetch_url(
        spec,
        target,
        cache_dir=Path(cache_dir or default_cache_dir()),
        mirror=mirror,
        retries=retries,
        show_progress=show_progress,
        deadline=deadline,
    )


@dataclass(frozen=True)
class FetchReport:
    """The outcome of fetching a set of files: those in place, and those that failed with why."""

    root: Path
    results: tuple[FetchResult, ...]
    failures: tuple[tuple[FetchItem, str], ...]
    timed_out: bool = False  # a failure was the deadline passing

    @property
    def ok(self) -> bool:
        return not self.failures


def fetch_all(
    items: Iterable[FetchItem],
    root: Path,
    *,
    on_result: Callable[[FetchItem, FetchResult | None, str], None] | None = None,
    deadline_s: float | None = DEFAULT_DEADLINE_S,
    **options: Any,
) -> FetchReport:
    """Fetch every item (one failure does not stop the others) within ``deadline_s`` seconds in all (None or 0: no
    limit); ``options`` go to :func:`fetch_file`."""
    results, failures, timed_out = [], [], False
    deadline = Deadline.after(deadline_s)
    for item in items:
        try:
            result = fetch_file(item.spec, root, deadline=deadline, **options)
        except FetchError as exc:
            failures.append((item, str(exc)))
            timed_out = timed_out or isinstance(exc, DeadlinePassed)
            if on_result:
                on_result(item, None, str(exc))
            continue
        results.append(result)
        if on_result:
            on_result(item, result, "")
    return FetchReport(Path(root), tuple(results), tuple(failures), timed_out)
