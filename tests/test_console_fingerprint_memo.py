"""The console's cached path keeps every fingerprint (issue #19): the scoring libraries' versions that a
spec digest names come from the spec cache's per-environment memo (procbench.dsl.cache.per_environment), never
from a stale or damaged one.

The oracle is the digest written out plainly, reading each library's version from its installed metadata.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path

import pytest

from procbench.dsl import cache, compiler
from procbench.dsl.cache import checked_spec
from procbench.paths import SPECS_DIR
from procbench.runners.runtime import registry


def _oracle_digest(spec: object) -> str:
    versions = {
        f"{c.kind}:{c.name}": registry.get(c.kind, c.name).version
        for c in compiler.components_used(spec)
    }  # type: ignore[arg-type]
    libraries = {}
    for lib in ("nltk", "sacrebleu", "rouge-score", "spacy"):
        try:
            libraries[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            continue
    payload = {
        "spec": compiler.semantic_form(spec),
        "components": versions,
        "libraries": libraries,
        "signatures": compiler._signatures(spec),
    }  # type: ignore[arg-type]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _memo_files(folder: Path) -> list[Path]:
    return sorted((folder / "environment").glob("library-versions-*.json"))


@pytest.mark.parametrize("spec_file", sorted(SPECS_DIR.glob("*.spec")), ids=lambda p: p.stem)
def test_every_spec_digest_is_the_plain_computation_with_the_memo_cold_warm_and_off(
    spec_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    spec = checked_spec(spec_file, search=[SPECS_DIR]).spec
    expected = _oracle_digest(spec)
    assert compiler.spec_digest(spec) == expected  # cold: computed and stored
    assert len(_memo_files(tmp_path / "cache")) == 1
    assert compiler.spec_digest(spec) == expected  # warm: read back
    monkeypatch.setenv(cache.ENV_DIR, "off")
    assert compiler.spec_digest(spec) == expected


def test_the_memo_is_read_back_and_not_recomputed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path))
    calls: list[int] = []

    def compute() -> dict[str, str]:
        calls.append(1)
        return {"lib": "1.0"}

    assert cache.per_environment("probe", compute) == {"lib": "1.0"}
    assert cache.per_environment("probe", compute) == {"lib": "1.0"}
    assert len(calls) == 1


@pytest.mark.parametrize("damage", ["", "not json", '["a"]', '{"nltk": 3}', '{"nltk": null}'])
def test_a_damaged_memo_is_recomputed_and_replaced(
    damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path))
    assert cache.per_environment("probe", lambda: {"lib": "1.0"}) == {"lib": "1.0"}
    (stored,) = sorted((tmp_path / "environment").glob("probe-*.json"))
    stored.write_text(damage, encoding="utf-8")
    assert cache.per_environment("probe", lambda: {"lib": "2.0"}) == {"lib": "2.0"}
    assert json.loads(stored.read_text(encoding="utf-8")) == {"lib": "2.0"}


def test_installing_or_removing_a_distribution_recomputes_the_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo's key is the ``*.dist-info`` listing: another listing is another environment.  The most recent
    environments keep their files (two used in turns do not evict each other's); older ones go."""
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path))
    assert cache.per_environment("probe", lambda: {"lib": "1.0"}) == {"lib": "1.0"}
    site = tmp_path / "site"
    (site / "somelib-9.9.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    assert cache.per_environment("probe", lambda: {"lib": "9.9"}) == {"lib": "9.9"}
    assert len(sorted((tmp_path / "environment").glob("probe-*.json"))) == 2
    assert cache.per_environment("probe", lambda: {"lib": "other"}) == {"lib": "9.9"}
    (
        site / "somelib-9.9.dist-info"
    ).rmdir()  # back to the first environment: its memo is still there
    assert cache.per_environment("probe", lambda: {"lib": "recomputed"}) == {"lib": "1.0"}
    for n in range(
        cache.ENTRIES_PER_SPEC + 2
    ):  # more environments than are kept: the oldest files go
        (site / f"lib{n}-1.dist-info").mkdir()
        assert cache.per_environment("probe", lambda: {"lib": "new"}) == {"lib": "new"}
    assert len(sorted((tmp_path / "environment").glob("probe-*.json"))) == cache.ENTRIES_PER_SPEC
