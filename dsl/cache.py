"""Checked specs cached by content, so ``check`` and ``score`` do not re-parse and re-check unchanged specs.

An entry is found by a key over: the cache format, Python's version, the spec's path and text, the
listings of the folders a spec is looked up in, and the *code signature* (path, size and mtime of
every source file of the spec language and the shipped components, plus the distributions installed,
among them those that add components through entry points).  Editing the checker, a component or the spec gives a new
key.  The files a check reads besides the spec (a parent spec of ``extends``, a ``file("...")`` beside
it, ``components/*.py``) are recorded while it runs and stored in the entry with their sha256; an
entry whose recorded files changed is a miss.  Each spec keeps its :data:`ENTRIES_PER_SPEC` most recently
written entries (of each kind), so environments used in turns keep theirs and the folder stays bounded.

The cache never changes a number: a hit returns the spec the checker returned (the same dataclasses,
compared equal by a test), compilation still runs, and deleting the folder only costs one re-check.
Entries are untrusted: each carries a sha256 of its payload, and is unpickled with an unpickler that
only builds the spec language's own classes and plain containers, so a corrupted or planted file is a
miss, never code that runs.

Beside the entries, :func:`per_environment` keeps values that depend only on the installed
distributions (the scoring libraries' versions a fingerprint names), under a key over Python's
version and the distributions listing; they are plain JSON, read back only when they have the
expected shape, so a damaged file is recomputed.

Where: ``PROCBENCH_CACHE_DIR`` (``off`` turns the cache off), else ``var/cache/specs`` in a checkout and
``$XDG_CACHE_HOME/procbench/specs`` for an installed wheel (``procbench.runners.runtime.paths.default_cache_dir``).
"""

from __future__ import annotations

import _pickle  # the C unpickler: reading an entry needs no more (pickle.py, the Python pickler, is imported to write one)
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procbench.runners.runtime import digests
from procbench.runners.runtime.paths import PROJECT_ROOT, default_cache_dir
from procbench.runners.runtime.records import Record

if TYPE_CHECKING:
    from procbench.dsl.errors import Diagnostic
    from procbench.dsl.model import TaskSpec

FORMAT = b"procbench-spec-cache 1\n"
ENV_DIR = "PROCBENCH_CACHE_DIR"
COMPONENTS_ENV = "PROCBENCH_COMPONENTS"  # procbench.runners.runtime.registry.COMPONENTS_ENV, read here without importing the registry
_CODE_PACKAGES = ("dsl", "runners")  # their sources decide what a check returns


class CachedCheck(Record):
    """What ``dsl.check_file`` returns (``spec``, ``warnings``, ``source``), from the checker or the cache."""

    __slots__ = ("spec", "warnings", "source", "hit")
    spec: TaskSpec
    warnings: list[Diagnostic]
    source: str
    hit: bool

    def __init__(
        self, spec: TaskSpec, warnings: list[Diagnostic], source: str, hit: bool = False
    ) -> None:
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "warnings", warnings)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "hit", hit)


def cache_dir() -> Path | None:
    """The cache folder, or None when ``PROCBENCH_CACHE_DIR=off``."""
    configured = os.environ.get(ENV_DIR, "").strip()
    if configured.lower() in {"off", "0", "none", "false"}:
        return None
    return Path(configured).expanduser() if configured else default_cache_dir("specs")


# -- the key ---------------------------------------------------------------------------------------
_code_signature: str | None = None


def code_signature() -> str:
    """Size and mtime of every source file of the spec language and the shipped components (stat only)."""
    global _code_signature
    if _code_signature is None:
        digest = digests.sha256()
        for package in _CODE_PACKAGES:
            for path, stat in _walk(PROJECT_ROOT / package):
                digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        digest.update(_installed_distributions().encode())
        _code_signature = digest.hexdigest()
    return _code_signature


def _walk(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(Path(entry.path))
            elif entry.name.endswith((".py", ".lark")):
                yield entry.path, entry.stat()


def _installed_distributions() -> str:
    """The ``*.dist-info`` folders on ``sys.path`` (names carry versions): installing, upgrading or removing
    any distribution, one that adds components through entry points included, changes the key.

    Listing the folders costs a millisecond; reading every distribution's entry points would cost tens.
    """
    names = []
    for entry in sys.path:
        try:
            names += [
                f"{entry}/{name}"
                for name in os.listdir(entry or ".")
                if name.endswith((".dist-info", ".egg-info", ".pth"))
            ]
        except OSError:
            continue
    return ",".join(sorted(names))


# -- values of the environment ---------------------------------------------------------------------
def per_environment(name: str, compute: Callable[[], dict[str, str]]) -> dict[str, str]:
    """``compute()``, a mapping of text to text that depends only on the installed distributions, stored once
    per environment (Python's version and the ``*.dist-info`` listing of ``sys.path``).

    With the cache off, or when the stored file is absent or damaged, ``compute()`` runs (and is stored).
    """
    folder = cache_dir()
    if folder is None:
        return compute()
    environment = digests.sha256(
        FORMAT + f"{name}\0{sys.version}\0{_installed_distributions()}".encode()
    ).hexdigest()
    path = folder / "environment" / f"{name}-{environment[:32]}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = None
    if isinstance(stored, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in stored.items()
    ):
        return stored
    value = compute()
    try:
        # the same value in other environments (or one since changed): the most recent are kept, as entries are
        _replace(
            path, json.dumps(value).encode("utf-8"), stale=f"{name}-*.json", keep=ENTRIES_PER_SPEC
        )
    except OSError:
        pass  # an unwritable folder: computed again next time
    return value


def _listing(folder: Path) -> str:
    try:
        return ",".join(sorted(os.listdir(folder)))
    except OSError:
        return "<absent>"


def key(path: Path, text: bytes, search: list[Path]) -> str:
    """The cache key of checking ``path`` (its ``text``) with ``search`` folders for parents."""
    digest = digests.sha256(FORMAT)
    digest.update(sys.version.encode() + b"\0" + code_signature().encode() + b"\0")
    digest.update(str(path.resolve()).encode() + b"\0" + digests.sha256(text).digest())
    for folder in [
        path.parent,
        *search,
    ]:  # a parent spec added to a search folder changes what extends finds
        digest.update(f"{folder}\0{_listing(folder)}\n".encode())
    # the component folders allowed decide which names resolve: a spec checked with them is not a hit without them
    digest.update(os.environ.get(COMPONENTS_ENV, "").encode() + b"\0")
    return digest.hexdigest()


# -- files a check reads ---------------------------------------------------------------------------
_recording: list[set[str]] = []
_hook_installed = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _recording:
        return
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        if "r" in mode or mode == "":
            _recording[-1].add(os.fsdecode(args[0]))
    elif (
        event in {"os.listdir", "os.scandir"}
        and args
        and isinstance(args[0], (str, bytes, os.PathLike))
    ):
        _recording[-1].add(os.fsdecode(args[0]) + os.sep)


@contextmanager
def _files_read() -> Iterator[set[str]]:
    """Paths opened for reading (and folders listed) in this thread while the block runs."""
    global _hook_installed
    if (
        not _hook_installed
    ):  # an audit hook cannot be removed: it is installed once and idles when not recording
        sys.addaudithook(_audit)
        _hook_installed = True
    seen: set[str] = set()
    _recording.append(seen)
    try:
        yield seen
    finally:
        _recording.remove(seen)


def _fingerprint(path: str) -> str:
    if path.endswith(os.sep):
        return _listing(Path(path))
    try:
        return digests.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "<absent>"


def _dependencies(paths: set[str], spec: Path) -> tuple[tuple[str, str], ...]:
    """The recorded files that are data of the check, each with its fingerprint (code is in the key)."""
    # the code's own folders, also as imported through the procbench/ links (procbench.dsl, procbench.runners)
    code_roots = tuple(
        str(root / p) + os.sep
        for p in _CODE_PACKAGES
        for root in (PROJECT_ROOT, PROJECT_ROOT / "procbench")
    ) + (
        sys.prefix,
        sys.base_prefix,
    )
    keep = []
    for path in sorted(paths):
        absolute = os.path.abspath(path)
        if ".pyc." in os.path.basename(absolute):
            continue  # byte code being written (a temporary file), not read
        if absolute.endswith(
            ".pyc"
        ):  # an import read the byte code: the source is what a maintainer edits
            import importlib.util  # a miss only: a hit imports neither it nor tempfile (issue #19)

            try:
                absolute = importlib.util.source_from_cache(absolute)
            except ValueError:
                continue
        if (
            absolute == str(spec.resolve())
            or absolute.endswith(".so")
            or absolute.startswith(code_roots)
        ):
            continue
        keep.append((absolute, _fingerprint(absolute)))
    return tuple(keep)


# -- entries ---------------------------------------------------------------------------------------
_ALLOWED_MODULES = (
    "procbench.dsl.",
    "procbench.runners.runtime.predictions",
    "procbench.runners.runtime.tables",
    "procbench.runners.runtime._types",
)
_ALLOWED_BUILTINS = frozenset(
    {
        "tuple",
        "list",
        "dict",
        "set",
        "frozenset",
        "str",
        "bytes",
        "int",
        "float",
        "bool",
        "complex",
        "NoneType",
        "object",
    }
)


# The one function an entry may name: how a record (a runtime value type such as ``FieldType``,
# runners/runtime/records.py) is pickled; it sets the fields of a class this unpickler allowed.
_RECORD_REBUILD = (Record.__module__, "_rebuild")


class _SpecUnpickler(_pickle.Unpickler):
    """Builds only classes of the spec language and plain containers: an entry cannot name a function
    (but the one that rebuilds a record of an allowed class)."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return super().find_class(module, name)
        if (module, name) == _RECORD_REBUILD:
            return super().find_class(module, name)
        if module.startswith(_ALLOWED_MODULES):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise _pickle.UnpicklingError(f"{module}.{name} is not allowed in a spec cache entry")


class _PlainUnpickler(_pickle.Unpickler):
    """Builds no class at all: a runner's plan (dsl/plan.py) is tuples, lists, dicts, text and numbers."""

    def find_class(self, module: str, name: str) -> Any:
        raise _pickle.UnpicklingError(f"{module}.{name} is not allowed in a plan")


# Entries kept per spec file (and per kind: checked spec, plan).  More than one, so that two environments
# used in turns (the console script, and ``python -m procbench`` in a checkout, whose ``sys.path`` lists the
# checkout's build metadata: another key) each keep theirs instead of evicting the other's on every switch;
# few, so that a spec edited many times leaves a bounded folder.  The oldest written goes first.
ENTRIES_PER_SPEC = 4


def _entry_path(folder: Path, entry_key: str, spec: Path, suffix: str = ".pickle") -> Path:
    """One folder per spec file, so that writing a spec's new entry can drop its oldest ones."""
    return (
        folder
        / digests.sha256(str(spec.resolve()).encode()).hexdigest()[:16]
        / f"{entry_key}{suffix}"
    )


def read(
    folder: Path, entry_key: str, spec: Path
) -> tuple[Any, tuple[tuple[str, str], ...]] | None:
    """The stored value and its recorded files, or None (absent, corrupted, foreign: all a miss)."""
    return _read(_entry_path(folder, entry_key, spec), entry_key, _SpecUnpickler)


def _read(
    file: Path, entry_key: str, unpickler: type[_pickle.Unpickler]
) -> tuple[Any, tuple[tuple[str, str], ...]] | None:
    try:
        blob = file.read_bytes()
    except OSError:
        return None
    if not blob.startswith(FORMAT):
        return None
    head, _, payload = blob[len(FORMAT) :].partition(b"\n")
    if head.decode("ascii", "replace") != digests.sha256(payload).hexdigest():
        return None
    try:
        stored_key, value, dependencies = unpickler(io.BytesIO(payload)).load()
    except Exception:  # noqa: BLE001 - any damage is a miss, never an error
        return None
    if stored_key != entry_key:
        return None
    return value, dependencies


def write(
    folder: Path,
    entry_key: str,
    spec: Path,
    value: Any,
    dependencies: tuple[tuple[str, str], ...],
    suffix: str = ".pickle",
) -> None:
    """Store an entry atomically (write to a temporary file, then rename) in place of the spec's older ones; a failure is ignored."""
    import pickle

    try:
        payload = pickle.dumps((entry_key, value, dependencies), protocol=pickle.HIGHEST_PROTOCOL)
        blob = FORMAT + digests.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload
        # the same spec under older code or text, or in another environment: the most recent are kept
        _replace(
            _entry_path(folder, entry_key, spec, suffix),
            blob,
            stale=f"*{suffix}",
            keep=ENTRIES_PER_SPEC,
        )
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return  # an unwritable folder or an unpicklable spec: the next run checks again


def _replace(target: Path, data: bytes, *, stale: str, keep: int = 1) -> None:
    """Write ``data`` to ``target`` atomically (a temporary file, then a rename), first removing the files
    matching ``stale`` beside it but the ``keep - 1`` most recently written; raises OSError."""
    target.parent.mkdir(parents=True, exist_ok=True)
    others = []
    for old in target.parent.glob(stale):
        if old != target:
            try:
                others.append((old.stat().st_mtime_ns, old))
            except OSError:
                continue  # removed meanwhile by another process
    for _, old in sorted(others, reverse=True)[max(0, keep - 1) :]:
        old.unlink(missing_ok=True)
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, target)


# -- the one entry point ---------------------------------------------------------------------------
def checked_spec(path: str | Path, search: list[Path] | None = None) -> CachedCheck:
    """``dsl.check_file(path, search)``, from the cache when nothing it depends on changed.

    Raises SpecError as the checker does (errors are never cached: a failing spec is re-checked).
    """
    path = Path(path)
    search = list(search or [])
    folder = cache_dir()
    text = path.read_bytes()
    entry_key = key(path, text, search) if folder is not None else ""
    if folder is not None:
        found = read(folder, entry_key, path)
        if found is not None:
            (spec, warnings, source), dependencies = found
            problems = _spec_path_problems(spec)
            if problems:  # a valid digest is no proof of origin: a spec entry is checked for its data paths as its plan is
                _refuse_entry(_entry_path(folder, entry_key, path), problems[0])
            elif all(
                _fingerprint(p) == fingerprint for p, fingerprint in dependencies
            ) and _load_components_beside(path):
                return CachedCheck(spec, warnings, source, hit=True)
    from procbench.dsl.checker import check_file

    if folder is None:
        result = check_file(path, search=search)
        return CachedCheck(result.spec, result.warnings, result.source)
    with _files_read() as seen:
        result = check_file(path, search=search)
    write(
        folder,
        entry_key,
        path,
        (result.spec, list(result.warnings), result.source),
        _dependencies(seen, path),
    )
    return CachedCheck(result.spec, result.warnings, result.source)


# -- runner plans (dsl/plan.py) ----------------------------------------------------------------------
_PLAN = ".plan"


def cached_plan(path: str | Path, search: list[Path] | None = None) -> Any | None:
    """The plan stored for the spec at ``path`` as it is now, or None (a miss, or the cache off).

    Valid exactly when the checked spec's entry would be: the same key, the same recorded files, the
    components beside the spec loaded.  Reading it imports nothing of the spec language.
    """
    folder = cache_dir()
    if folder is None:
        return None
    path = Path(path)
    entry_key = key(path, path.read_bytes(), list(search or []))
    found = _read(_entry_path(folder, entry_key, path, _PLAN), entry_key, _PlainUnpickler)
    if found is None:
        return None
    plan, dependencies = found
    if not (
        all(_fingerprint(p) == fingerprint for p, fingerprint in dependencies)
        and _load_components_beside(path)
    ):
        return None
    if isinstance(plan, dict):
        from procbench.dsl.plan import path_problems

        problems = path_problems(plan)
        if problems:  # a valid digest is no proof of origin: refused like a spec, said, removed, and the spec re-checked
            _refuse_entry(_entry_path(folder, entry_key, path, _PLAN), problems[0])
            return None
    return plan


def _spec_path_problems(spec: Any) -> list[str]:
    """The checker's data-path rule (dsl/checker.py) on a spec read from the cache: why a source or membership path could
    leave the data root."""
    from procbench.runners.runtime.paths import relative_path_problems

    data = getattr(spec, "data", None)
    problems = []
    for src in getattr(data, "sources", ()) or ():
        problems += relative_path_problems(
            f"source {src.name!r}: path", str(src.path).replace("{split}", "split")
        )
    for rule in getattr(data, "labels", ()) or ():
        for member in rule.members:
            problems += relative_path_problems(
                f"label {rule.name!r}: membership path", str(member[0]).replace("{split}", "split")
            )
    return problems


def _refuse_entry(entry: Path, reason: str) -> None:
    """Say on stderr that a cache entry was refused (it is not what procbench writes), and remove it."""
    print(
        f"warning: refused the cached entry {entry}: {reason}; it was removed and the spec is checked again",
        file=sys.stderr,
    )
    entry.unlink(missing_ok=True)


def store_plan(path: str | Path, search: list[Path] | None, spec: TaskSpec, plan: Any) -> None:
    """Store ``plan`` (made of the checked ``spec``) beside the spec's entry, when that entry holds ``spec``.

    The entry's key and recorded files are the plan's: a spec edited since ``spec`` was checked stores nothing.
    """
    folder = cache_dir()
    if folder is None or plan is None:
        return
    path = Path(path)
    search = list(search or [])
    entry_key = key(path, path.read_bytes(), search)
    found = read(folder, entry_key, path)
    if found is None or found[0][0] != spec:
        return
    write(folder, entry_key, path, plan, found[1], suffix=_PLAN)


def _load_components_beside(path: Path) -> bool:
    """Register the component folders the operator allowed (PROCBENCH_COMPONENTS) for a spec taken from the cache
    (the checker does it on a miss); a ``components/`` folder beside the spec is never imported by its presence.

    Returns False when they do not load: the caller then checks the spec for its proper error.
    """
    if not os.environ.get(COMPONENTS_ENV, "").strip():
        return True
    from procbench.runners.runtime import registry

    try:
        registry.load_operator_components()
    except registry.ComponentLoadError:
        return False
    return True
