"""Checked specs cached by content (dsl/cache.py, issue #19): a hit is the checker's spec, edits invalidate, damage is a miss."""

from __future__ import annotations

import hashlib
import pickle
import shutil
from pathlib import Path

import pytest

from procbench.dsl import cache
from procbench.dsl.checker import check_file
from procbench.paths import SPECS_DIR


@pytest.fixture()
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the OpenPI specs (a variant with ``extends``, side files) and a fresh cache folder."""
    folder = tmp_path / "specs"
    folder.mkdir()
    for path in SPECS_DIR.glob("openpi*"):
        shutil.copy(path, folder / path.name)
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    return folder


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("*.pickle"))


def test_a_hit_returns_the_spec_the_checker_returns(specs: Path, tmp_path: Path) -> None:
    for name in ("openpi.spec", "openpi-head.spec"):
        first = cache.checked_spec(specs / name, search=[specs])
        second = cache.checked_spec(specs / name, search=[specs])
        checker = check_file(specs / name, search=[specs])
        assert not first.hit and second.hit
        assert second.spec == checker.spec == first.spec
        assert second.warnings == checker.warnings and second.source == checker.source
    assert len(_entries(tmp_path)) == 2
    original = (specs / "openpi.spec").read_text(encoding="utf-8")
    for n in range(
        1, 7
    ):  # six edits: each a new entry, the oldest dropped once the spec has ENTRIES_PER_SPEC
        (specs / "openpi.spec").write_text(original + "\n# edited\n" * n, encoding="utf-8")
        assert not cache.checked_spec(specs / "openpi.spec", search=[specs]).hit
        assert len(_entries(tmp_path)) == 1 + min(n + 1, cache.ENTRIES_PER_SPEC)
    assert cache.ENTRIES_PER_SPEC == 4
    (specs / "openpi.spec").write_text(
        original, encoding="utf-8"
    )  # the first text's entry was the oldest: dropped
    assert not cache.checked_spec(specs / "openpi.spec", search=[specs]).hit


def test_two_environments_used_in_turns_keep_their_entries(
    specs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console script and ``python -m procbench`` in a checkout list different distributions (another key):
    switching between them must not evict the other's entry, for the checked spec nor for the runner's plan."""
    from procbench.dsl import tasks

    spec, search = (
        specs / "openpi.spec",
        [SPECS_DIR],
    )  # the folder procbench.dsl.tasks looks specs up in
    signatures = {"console": "a" * 64, "checkout": "b" * 64}
    for environment in ("console", "checkout"):
        monkeypatch.setattr(cache, "_code_signature", signatures[environment])
        assert cache.cached_plan(spec, search=search) is None
        tasks._load.cache_clear()  # a new process: nothing checked in memory yet
        tasks.load_runner(
            spec
        )  # checks the spec and stores its entry and its plan under this environment's key
    for environment in ("console", "checkout", "console"):
        monkeypatch.setattr(cache, "_code_signature", signatures[environment])
        assert cache.checked_spec(spec, search=search).hit, environment
        assert cache.cached_plan(spec, search=search) is not None, environment


def test_editing_the_spec_invalidates_its_entry(specs: Path) -> None:
    spec = specs / "openpi.spec"
    cache.checked_spec(spec, search=[specs])
    spec.write_text(
        spec.read_text(encoding="utf-8").replace("title", "# an edit\n  title", 1), encoding="utf-8"
    )
    again = cache.checked_spec(spec, search=[specs])
    assert not again.hit
    assert again.spec == check_file(spec, search=[specs]).spec


@pytest.mark.parametrize(
    "side", ["openpi.md", "openpi.spec"]
)  # a file("...") beside the parent, the parent of extends
def test_editing_a_side_file_invalidates_the_entry(specs: Path, side: str) -> None:
    variant = specs / "openpi-head.spec"
    before = cache.checked_spec(variant, search=[specs])
    assert cache.checked_spec(variant, search=[specs]).hit
    path = specs / side
    if side.endswith(".md"):
        path.write_text(
            path.read_text(encoding="utf-8") + "\nA sentence added to the description.\n",
            encoding="utf-8",
        )
    else:
        path.write_text(
            path.read_text(encoding="utf-8")
            + "\n# an edit of the parent (a comment: the spec is unchanged, the file is not)\n",
            encoding="utf-8",
        )
    after = cache.checked_spec(variant, search=[specs])
    assert not after.hit
    assert after.spec == check_file(variant, search=[specs]).spec
    if side.endswith(".md"):
        assert (
            after.spec != before.spec
        )  # the description is part of the spec: the stale one is not served


def test_a_corrupted_entry_is_a_miss(specs: Path, tmp_path: Path) -> None:
    spec = specs / "openpi.spec"
    cache.checked_spec(spec, search=[specs])
    (entry,) = _entries(tmp_path)
    blob = bytearray(entry.read_bytes())
    blob[-20] ^= 0xFF  # one byte of the payload: the checksum no longer matches
    entry.write_bytes(bytes(blob))
    again = cache.checked_spec(spec, search=[specs])
    assert not again.hit and again.spec == check_file(spec, search=[specs]).spec
    entry.write_bytes(b"not an entry at all")
    assert not cache.checked_spec(spec, search=[specs]).hit


class _Planted:
    """A pickle that would run a function when loaded: the cache must refuse to build it."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (shutil.rmtree, ("/nonexistent-procbench-test",))


def test_a_planted_entry_with_a_valid_checksum_never_runs_code(specs: Path, tmp_path: Path) -> None:
    spec = specs / "openpi.spec"
    cache.checked_spec(spec, search=[specs])
    (entry,) = _entries(tmp_path)
    key = entry.stem
    payload = pickle.dumps((key, _Planted(), ()))
    entry.write_bytes(cache.FORMAT + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert cache.read(tmp_path / "cache", key, spec) is None
    assert not cache.checked_spec(spec, search=[specs]).hit


class _PlantedRecordFunction:
    """A pickle naming a function of the records module other than the one that rebuilds a record."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        from procbench.runners.runtime import records

        return (records.record_fields, ("planted",))


class _RebuiltNonRecord:
    """A pickle asking the record-rebuilding function for a class that is no record (an allowed builtin)."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        from procbench.runners.runtime import records

        return (records._rebuild, (dict, ("planted",)))


@pytest.mark.parametrize("planted", [_PlantedRecordFunction(), _RebuiltNonRecord()])
def test_records_in_an_entry_are_rebuilt_and_nothing_else(
    specs: Path, tmp_path: Path, planted: object
) -> None:
    """Specs hold runtime records (OpenPI's ``FieldType``): an entry may name the function that rebuilds
    one of an allowed class, and no other function of the records module."""
    spec = specs / "openpi.spec"
    first = cache.checked_spec(spec, search=[specs])
    (entry,) = _entries(tmp_path)
    assert b"_rebuild" in entry.read_bytes()  # the spec's FieldType values, pickled as records
    again = cache.checked_spec(spec, search=[specs])
    assert again.hit and again.spec == first.spec
    key = entry.stem
    payload = pickle.dumps((key, planted, ()))
    entry.write_bytes(cache.FORMAT + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert cache.read(tmp_path / "cache", key, spec) is None


def test_the_cache_can_be_turned_off_and_deleted(
    specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = specs / "openpi.spec"
    cache.checked_spec(spec, search=[specs])
    shutil.rmtree(tmp_path / "cache")
    assert not cache.checked_spec(
        spec, search=[specs]
    ).hit  # deleted: checked again, and stored again
    assert cache.checked_spec(spec, search=[specs]).hit
    monkeypatch.setenv(cache.ENV_DIR, "off")
    shutil.rmtree(tmp_path / "cache")
    result = cache.checked_spec(spec, search=[specs])
    assert not result.hit and not (tmp_path / "cache").exists()


def test_a_spec_error_is_raised_and_never_cached(specs: Path, tmp_path: Path) -> None:
    from procbench.dsl.errors import SpecError

    broken = specs / "broken.spec"
    broken.write_text("task broken {\n  title = \n}\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(SpecError):
            cache.checked_spec(broken, search=[specs])
    assert _entries(tmp_path) == []
