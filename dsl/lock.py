"""Fetch lock files: the concrete upstream files a spec's ``fetch`` blocks stand for, with their digests.

A spec says where a benchmark's files are published in a few lines::

    fetch { url = "https://raw.githubusercontent.com/org/repo/<commit>/"  into = "bench/"
            files = ["data/{split}.jsonl", "questions/*.txt"] }

and the lock beside it (``<spec stem>.lock``, JSON, written by ``procbench data lock <task>`` from a
local copy of the files) lists every file those lines expand to, with its size and sha256, which
``procbench data fetch`` verifies downloads against.  The digests are machine-written and the spec
stays readable (one URL prefix instead of one block per file).

Expansion rules:

* ``url`` + file is the download address; ``into`` + file is the path under the data root.
* ``{split}`` in a file expands over the block's ``splits`` (default: the task's splits); each
  expanded file belongs to its split.
* A file without ``{split}`` belongs to the block's ``splits``, or to every split when the block has
  none (recorded as ``splits = []``, which ``procbench data fetch --split`` reads as "needed by all").
* A glob (``*``, ``?``, ``[...]``; ``**`` for any number of folders) expands against the local copy
  when locking and against the lock's entries when reading it.  Wildcards do not match names that
  start with ``.`` (editor and partial-download files).

Pure: no network, no procbench imports; the checker reads locks through :func:`read_lock`.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from procbench.dsl.model import FetchSpec
from procbench.runners.runtime import digests
from procbench.runners.runtime.paths import (
    relative_path_problems,
)  # one rule for specs, cached plans and the runtime

SPLIT = "{split}"
LOCK_FORMAT = 1
LOCK_SUFFIX = ".lock"
REPO_TYPES = ("dataset", "model", "space")
_GLOB_CHARS = re.compile(r"[*?\[]")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ENTRY_KEYS = (
    "path",
    "url",
    "hub_repo",
    "hub_file",
    "revision",
    "repo_type",
    "splits",
    "size",
    "sha256",
)


class LockError(Exception):
    """A lock cannot be written or read: ``problems`` lists every reason, ``hint`` says what to do."""

    def __init__(self, headline: str, problems: Sequence[str] = (), hint: str = ""):
        self.headline = headline
        self.problems = tuple(problems)
        self.hint = hint
        lines = [headline, *(f"  - {p}" for p in self.problems)]
        if hint:
            lines.append(f"  hint: {hint}")
        super().__init__("\n".join(lines))


class Origin(Protocol):
    """What a bound ``fetch`` block offers; :class:`FetchOrigin` or the checker's own block type."""

    @property
    def name(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def hub_repo(self) -> str: ...
    @property
    def revision(self) -> str: ...
    @property
    def repo_type(self) -> str: ...
    @property
    def into(self) -> str: ...
    @property
    def files(self) -> tuple[str, ...]: ...
    @property
    def splits(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class FetchOrigin:
    """One ``fetch`` block: a place the task's upstream files are published, and which files."""

    name: str = ""  # the block's label; "" for an unlabelled block
    url: str = ""  # base address the files are relative to (a raw GitHub URL pinned to a commit)
    hub_repo: str = ""  # or a Hugging Face Hub repository, "owner/name"
    revision: str = ""  # Hub revision (commit or tag); URLs pin theirs in the address
    repo_type: str = "dataset"
    into: str = ""  # folder under the data root the files land in, mirroring the origin's layout
    files: tuple[str, ...] = ()
    splits: tuple[
        str, ...
    ] = ()  # the splits these files belong to (default: {split} decides, else all)


@dataclass(frozen=True)
class PlannedFile:
    """One concrete file an origin stands for (no digest yet)."""

    path: str  # under the data root
    file: str  # relative to the origin (the Hub file name, or the tail of the URL)
    url: str = ""
    hub_repo: str = ""
    revision: str = ""
    repo_type: str = ""
    splits: tuple[str, ...] = ()
    origin: str = ""  # the block's label, for messages

    @property
    def hub_file(self) -> str:
        return self.file if self.hub_repo else ""


# -- checking a block ---------------------------------------------------------------------------


def describe(origin: Origin) -> str:
    return f"fetch block {origin.name!r}" if origin.name else "the fetch block"


def _path_problems(what: str, value: str, *, folder: bool = False) -> list[str]:
    """Why ``value`` could not be a path inside the data root ('' allowed for a folder: the root itself)."""
    return relative_path_problems(what, value, folder=folder)


def data_path_problems(what: str, value: str) -> list[str]:
    """Why a spec's data path (a source, a membership file) would not stay under the data root."""
    return _path_problems(what, value)


def path_problems(origins: Iterable[Origin]) -> list[str]:
    """Every ``into`` and file that would not stay under the data root ('..', absolute, backslashes)."""
    problems = []
    for origin in origins:
        problems += _path_problems(f"{describe(origin)}: into", origin.into, folder=True)
        for file in origin.files:
            problems += _path_problems(f"{describe(origin)}: file", file)
    return problems


def origin_problems(origin: Origin, task_splits: Sequence[str]) -> list[str]:
    """Everything wrong with one block, as messages the checker can attach to it."""
    where = describe(origin)
    problems: list[str] = []
    if bool(origin.url) == bool(origin.hub_repo):
        problems.append(
            f'{where} needs exactly one origin: url = "https://.../<commit>/" or hub_repo = "owner/name"'
        )
    if origin.url:
        if not origin.url.startswith(("https://", "http://")):
            problems.append(f"{where}: url {origin.url!r} must be an http(s) address")
        if origin.revision:
            problems.append(
                f"{where}: revision applies to hub_repo; pin a URL's commit in the address itself"
            )
    if origin.hub_repo and not re.fullmatch(r"[\w.-]+/[\w.-]+", origin.hub_repo):
        problems.append(f'{where}: hub_repo {origin.hub_repo!r} must be "owner/name"')
    if origin.repo_type not in REPO_TYPES:
        problems.append(
            f"{where}: repo_type {origin.repo_type!r} must be one of {', '.join(REPO_TYPES)}"
        )
    problems += _path_problems(f"{where}: into", origin.into, folder=True)
    if _PLACEHOLDER.search(origin.into) or _GLOB_CHARS.search(origin.into):
        problems.append(
            f"{where}: into {origin.into!r} must be a plain folder; only files may use {{split}} or globs"
        )
    if not origin.files:
        problems.append(f'{where} lists no files; add files = ["path/relative/to/the/origin"]')
    for name, count in _counts(origin.files).items():
        if count > 1:
            problems.append(f"{where} lists {name!r} {count} times")
    for file in origin.files:
        problems += _path_problems(f"{where}: file", file)
        if file.endswith("/"):
            problems.append(
                f"{where}: file {file!r} names a folder; list its files or use a glob ({file}*)"
            )
        for placeholder in _PLACEHOLDER.findall(file):
            if placeholder != SPLIT:
                problems.append(
                    f"{where}: file {file!r} uses {placeholder}; the only placeholder is {SPLIT}"
                )
    for split in origin.splits:
        if split not in task_splits:
            problems.append(
                f"{where}: splits names {split!r}, which is not a split of the task (splits: {', '.join(task_splits)})"
            )
    for split, count in _counts(origin.splits).items():
        if count > 1:
            problems.append(f"{where}: splits lists {split!r} {count} times")
    if any(SPLIT in f for f in origin.files) and not (origin.splits or task_splits):
        problems.append(f"{where}: {SPLIT} expands over the task's splits, and it declares none")
    return problems


def _counts(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


# -- expanding ----------------------------------------------------------------------------------


def is_glob(file: str) -> bool:
    return bool(_GLOB_CHARS.search(file))


def glob_match(pattern: str, path: str) -> bool:
    """Whether ``path`` (relative, '/'-separated) matches ``pattern`` segment by segment.

    ``*`` ``?`` ``[...]`` stay within one segment; a ``**`` segment matches any number of them;
    a wildcard never matches a leading '.' unless the pattern segment starts with one.
    """
    return _match(pattern.split("/"), path.split("/"))


def _match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(
            _match(rest, parts[i:])
            for i in range(len(parts) + 1)
            if all(not p.startswith(".") for p in parts[:i])
        )
    if not parts:
        return False
    name = parts[0]
    if name.startswith(".") and not head.startswith(".") and is_glob(head):
        return False
    return fnmatch.fnmatchcase(name, head) and _match(rest, parts[1:])


def join_url(base: str, file: str) -> str:
    return (base if base.endswith("/") else base + "/") + quote(file, safe="/")


def join_path(into: str, file: str) -> str:
    folder = into.strip("/")
    return f"{folder}/{file}" if folder else file


def _patterns(origin: Origin, task_splits: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Each file entry with {split} filled in, and the splits each result belongs to."""
    block_splits = tuple(s for s in task_splits if s in origin.splits) if origin.splits else ()
    out: list[tuple[str, tuple[str, ...]]] = []
    for file in origin.files:
        if SPLIT in file:
            out += [
                (file.replace(SPLIT, split), (split,))
                for split in (block_splits or tuple(task_splits))
            ]
        else:
            out.append((file, block_splits))
    return out


def _planned(origin: Origin, file: str, splits: tuple[str, ...]) -> PlannedFile:
    path = join_path(origin.into, file)
    if origin.hub_repo:
        return PlannedFile(
            path,
            file,
            hub_repo=origin.hub_repo,
            revision=origin.revision,
            repo_type=origin.repo_type or "dataset",
            splits=splits,
            origin=origin.name,
        )
    return PlannedFile(
        path, file, url=join_url(origin.url, file), splits=splits, origin=origin.name
    )


GlobResolver = Callable[
    [Origin, str], list[str]
]  # (origin, glob) -> matching files relative to the origin


def _expand(
    origins: Sequence[Origin], task_splits: Sequence[str], resolve: GlobResolver | None
) -> tuple[list[PlannedFile], list[str]]:
    planned: list[PlannedFile] = []
    problems: list[str] = []
    for origin in origins:
        found = origin_problems(origin, task_splits)
        if found:
            problems += found
            continue
        for pattern, splits in _patterns(origin, task_splits):
            if not is_glob(pattern):
                planned.append(_planned(origin, pattern, splits))
            elif resolve is None:
                problems.append(
                    f"{describe(origin)}: {pattern!r} is a glob; it expands against a local copy of the files (give a data root)"
                )
            else:
                matches = resolve(origin, pattern)
                if not matches:
                    problems.append(
                        f"{describe(origin)}: {pattern!r} matches no file under {join_path(origin.into, '') or '.'}"
                    )
                planned += [_planned(origin, m, splits) for m in matches]
    names = {o.name for o in origins}
    if len(names) < len(origins):
        repeated = sorted(n for n in names if sum(o.name == n for o in origins) > 1)
        problems.append(
            f"fetch blocks share a label: {', '.join(repr(n) if n else '(unlabelled)' for n in repeated)}; label each block differently"
        )
    by_path: dict[str, PlannedFile] = {}
    for item in planned:
        earlier = by_path.setdefault(item.path, item)
        if earlier is not item:
            which = (
                "the same fetch block"
                if earlier.origin == item.origin
                else f"fetch blocks {earlier.origin!r} and {item.origin!r}"
            )
            problems.append(
                f"{item.path} is declared twice (by {which}); give each file one entry (a second block with `splits` for files shared by some splits)"
            )
    return sorted(by_path.values(), key=lambda p: p.path), problems


def _local_resolver(root: Path) -> GlobResolver:
    def resolve(origin: Origin, pattern: str) -> list[str]:
        base = root / join_path(origin.into, "") if origin.into.strip("/") else root
        fixed = []  # walk only below the pattern's literal folders
        for part in pattern.split("/")[:-1]:
            if is_glob(part):
                break
            fixed.append(part)
        start = base.joinpath(*fixed)
        if not start.is_dir():
            return []
        found = []
        for folder, _, names in os.walk(start, followlinks=True):
            for name in names:
                relative = Path(folder, name).relative_to(base).as_posix()
                if glob_match(pattern, relative) and Path(folder, name).is_file():
                    found.append(relative)
        return sorted(found)

    return resolve


def expand(
    origin: Origin, task_splits: Sequence[str], data_root: str | os.PathLike[str] | None = None
) -> tuple[PlannedFile, ...]:
    """The concrete files one block stands for; globs need ``data_root`` (the local copy). Raises LockError."""
    planned, problems = _expand(
        [origin], task_splits, _local_resolver(Path(data_root)) if data_root is not None else None
    )
    if problems:
        raise LockError(f"{describe(origin)} cannot be expanded", problems)
    return tuple(planned)


# -- the lock file ------------------------------------------------------------------------------


def lock_path(spec_path: str | os.PathLike[str]) -> Path:
    """``specs/openpi.spec`` -> ``specs/openpi.lock``: a lock belongs to its spec file."""
    return Path(spec_path).with_suffix(LOCK_SUFFIX)


def _hint(task: str) -> str:
    return f"run `procbench data lock {task}` with the task's files under the data root (--data-dir), then commit the lock"


def _entry(item: PlannedFile, size: int, sha256: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": item.path}
    if item.hub_repo:
        entry.update(
            hub_repo=item.hub_repo,
            hub_file=item.hub_file,
            revision=item.revision,
            repo_type=item.repo_type,
        )
    else:
        entry["url"] = item.url
    entry.update(splits=list(item.splits), size=size, sha256=sha256)
    return entry


def write_lock(
    task_name: str,
    origins: Sequence[Origin],
    task_splits: Sequence[str],
    data_root: str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The lock for a task's fetch blocks, hashed from the local copy under ``data_root``.

    Written to ``path`` (atomically, in :func:`lock_text` form) when given.  Raises LockError naming
    every block problem, every glob that matches nothing and every declared file that is missing.
    """
    if not origins:
        raise LockError(
            f"{task_name} has no fetch blocks: there is nothing to lock",
            hint="a task without fetch blocks needs no lock",
        )
    root = Path(data_root)
    planned, problems = _expand(origins, task_splits, _local_resolver(root))
    missing = [item.path for item in planned if not (root / item.path).is_file()]
    problems += [f"missing: {p}" for p in missing]
    if problems:
        raise LockError(
            f"cannot lock {task_name} from {root}: {len(problems)} problem(s)",
            problems,
            "fetch or copy the missing files into the data root (or point --data-dir at a copy that has them)"
            if missing
            else "fix the fetch blocks",
        )
    entries = []
    for item in planned:
        local = root / item.path
        entries.append(_entry(item, local.stat().st_size, digests.file_sha256(str(local))))
    lock = {
        "generated": f"by `procbench data lock {task_name}` from the spec's fetch blocks and the files under a data root; do not edit, regenerate",
        "format": LOCK_FORMAT,
        "task": task_name,
        "files": entries,
    }
    if path is not None:
        target = Path(path)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(lock_text(lock), encoding="utf-8")
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)
    return lock


def lock_text(lock: Mapping[str, Any]) -> str:
    """The one textual form of a lock: fixed key order, files sorted by path, one key per line.

    Stable so that regenerating an unchanged lock changes no byte and a changed file is a small diff.
    """

    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    files = sorted(lock.get("files", ()), key=lambda e: str(e.get("path", "")))
    header = [
        f"  {dump(k)}: {dump(lock.get(k, d))}"
        for k, d in (("generated", ""), ("format", LOCK_FORMAT), ("task", ""))
    ]
    entries = [
        "    {\n"
        + ",\n".join(f"      {dump(k)}: {dump(e[k])}" for k in _ENTRY_KEYS if k in e)
        + "\n    }"
        for e in files
    ]
    body = '  "files": [\n' + ",\n".join(entries) + "\n  ]" if entries else '  "files": []'
    return "{\n" + ",\n".join([*header, body]) + "\n}\n"


def identity(file: PlannedFile | FetchSpec) -> tuple[Any, ...]:
    """What the lock must agree on with the spec for one file (split order does not matter)."""
    return (
        file.path,
        file.url,
        file.hub_repo,
        file.hub_file,
        file.revision,
        file.repo_type,
        frozenset(file.splits),
    )


def parse_lock(raw: Any) -> tuple[list[FetchSpec], list[str]]:
    """A lock's entries (named by their path; ``repo_type`` as written) and everything malformed in it."""
    if not isinstance(raw, dict):
        return [], ["the lock is not a JSON object"]
    problems = []
    if raw.get("format") != LOCK_FORMAT:
        problems.append(
            f"format is {raw.get('format')!r}; this procbench reads format {LOCK_FORMAT}"
        )
    files = raw.get("files")
    if not isinstance(files, list):
        return [], [*problems, "`files` is missing or not a list"]
    entries, seen = [], set()
    for index, item in enumerate(files):
        where = f"files[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where} is not an object")
            continue
        path = item.get("path")
        if not isinstance(path, str):
            problems.append(f"{where} has no path")
            continue
        where = f"{where} ({path})"
        found = _path_problems(f"{where} path", path)
        unknown = sorted(set(item) - set(_ENTRY_KEYS))
        if unknown:
            found.append(f"{where} has unknown keys {', '.join(unknown)}")
        text = {
            k: item.get(k, "") for k in ("url", "hub_repo", "hub_file", "revision", "repo_type")
        }
        if any(not isinstance(v, str) for v in text.values()):
            found.append(
                f"{where}: url, hub_repo, hub_file, revision and repo_type must be strings"
            )
        elif bool(text["url"]) == bool(text["hub_repo"] and text["hub_file"]):
            found.append(f"{where} needs either url, or hub_repo and hub_file")
        size, sha = item.get("size"), item.get("sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            found.append(f"{where}: size {size!r} is not a byte count")
        if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
            found.append(f"{where}: sha256 {sha!r} is not 64 lowercase hex digits")
        splits = item.get("splits", [])
        if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
            found.append(f"{where}: splits must be a list of split names")
        if path in seen:
            found.append(f"{where} appears twice")
        seen.add(path)
        if found:
            problems += found
            continue
        entries.append(
            FetchSpec(
                name=path,
                path=path,
                sha256=sha,  # type: ignore[arg-type]
                size=size,  # type: ignore[arg-type]
                splits=tuple(splits),
                **{k: str(v) for k, v in text.items()},
            )
        )
    return entries, problems


def _lock_resolver(entries: Sequence[FetchSpec]) -> GlobResolver:
    def resolve(origin: Origin, pattern: str) -> list[str]:
        prefix = join_path(origin.into, "")
        return sorted(
            e.path[len(prefix) :]
            for e in entries
            if e.path.startswith(prefix) and glob_match(pattern, e.path[len(prefix) :])
        )

    return resolve


@dataclass(frozen=True)
class Declared:
    """What a spec's fetch blocks declare, as the checker handed it to :func:`read_lock`."""

    lock: Path
    origins: tuple[Origin, ...]
    task_splits: tuple[str, ...]


_DECLARED: ContextVar[dict[Path, Declared] | None] = ContextVar(
    "procbench_lock_declared", default=None
)


@contextmanager
def declarations_only() -> Iterator[dict[Path, Declared]]:
    """Within it, :func:`read_lock` records what it was asked to check (by resolved lock path) and returns ``()``.

    For ``procbench data lock``: it checks a spec to learn its fetch blocks and splits, then writes the
    lock that checking would otherwise insist on reading (missing or stale is why it is being written).
    """
    found: dict[Path, Declared] = {}
    token = _DECLARED.set(found)
    try:
        yield found
    finally:
        _DECLARED.reset(token)


def collecting() -> bool:
    """Whether :func:`declarations_only` is active: a caller that skips :func:`read_lock` when no lock
    exists yet must still call it then, or ``procbench data lock`` cannot learn what to write."""
    return _DECLARED.get() is not None


def read_lock(
    path: str | os.PathLike[str], origins: Sequence[Origin], task_splits: Sequence[str]
) -> tuple[FetchSpec, ...]:
    """The files a task's fetch blocks stand for, with the lock's digests, as :class:`FetchSpec`.

    A task without fetch blocks needs no lock (returns ``()``).  Raises LockError when the lock is
    missing, malformed, or stale: the files the blocks declare differ from the lock's (each added,
    removed or changed file is named).
    """
    if not origins:
        return ()
    path = Path(path)
    capture = _DECLARED.get()
    if capture is not None:
        capture[path.resolve()] = Declared(path, tuple(origins), tuple(task_splits))
        return ()
    task = path.stem
    if not path.is_file():
        raise LockError(
            f"{path} is missing: the spec has fetch blocks, and their sizes and digests live in the lock",
            hint=_hint(task),
        )
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LockError(f"{path} is not a readable lock file", [str(exc)], _hint(task)) from None
    if isinstance(raw, dict) and isinstance(raw.get("task"), str) and raw["task"]:
        task = raw["task"]
    entries, problems = parse_lock(raw)
    if problems:
        raise LockError(f"{path} is malformed", problems, _hint(task))
    planned, problems = _expand(origins, task_splits, _lock_resolver(entries))
    if problems:
        raise LockError(
            f"{path} cannot be checked: the fetch blocks have problems",
            problems,
            "fix the fetch blocks, then " + _hint(task),
        )
    locked = {e.path: e for e in entries}
    declared = {p.path: p for p in planned}
    stale = [
        f"added: {p} (in the fetch blocks, not in the lock)"
        for p in sorted(declared.keys() - locked.keys())
    ]
    stale += [
        f"removed: {p} (in the lock, no longer in the fetch blocks)"
        for p in sorted(locked.keys() - declared.keys())
    ]
    for p in sorted(declared.keys() & locked.keys()):
        if identity(declared[p]) != identity(locked[p]):
            stale.append(f"changed: {p} ({_difference(declared[p], locked[p])})")
    if stale:
        raise LockError(
            f"{path} is stale: the spec's fetch blocks and the lock list different files",
            stale,
            _hint(task),
        )
    return tuple(
        FetchSpec(
            name=item.file,
            path=item.path,
            sha256=locked[item.path].sha256,
            size=locked[item.path].size,
            url=item.url,
            hub_repo=item.hub_repo,
            hub_file=item.hub_file,
            revision=item.revision,
            repo_type=item.repo_type or "dataset",
            splits=item.splits,
        )
        for item in planned
    )


def _difference(declared: PlannedFile, locked: FetchSpec) -> str:
    parts = []
    for name in ("url", "hub_repo", "hub_file", "revision", "repo_type"):
        if getattr(declared, name) != getattr(locked, name):
            parts.append(
                f"{name} {getattr(locked, name)!r} in the lock, {getattr(declared, name)!r} in the spec"
            )
    if frozenset(declared.splits) != frozenset(locked.splits):
        parts.append(
            f"splits {list(locked.splits)} in the lock, {list(declared.splits)} in the spec"
        )
    return "; ".join(parts)


def lock_entries(path: str | os.PathLike[str]) -> list[FetchSpec]:
    """A lock's entries without comparing them to a spec (raises LockError when malformed)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LockError(f"{path} is not a readable lock file", [str(exc)]) from None
    entries, problems = parse_lock(raw)
    if problems:
        raise LockError(f"{path} is malformed", problems)
    return entries
