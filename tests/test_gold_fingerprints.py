"""Gold fingerprints remembered by the content of the split's files (procbench/dsl/gold_fingerprints.py, issue #31).

The oracle is the fingerprint written out plainly: sha256 over the spec digest and the canonical JSON
of the gold (``json.dumps(..., sort_keys=True)`` in one piece), computed here from the gold the runner
reads, never through the remembered path.  Files are changed the way that would fool a cache keyed by
size and modification time (same size, mtime set back), and the remembered value must follow.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procbench.dsl import cache, gold_fingerprints
from procbench.dsl.tasks import load_runner
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime import registry
from procbench.runners.runtime._types import GoldDataError
from procbench.runners.runtime import runner as runner_module

# a reader component whose files are its lock's (propara) and one whose sources the spec declares (openpi)
CASES = {
    "propara": ("test", "propara/aristo-leaderboard/propara/data/test/answers.tsv"),
    "openpi": ("test", "openpi/data/gold/test/id_answers.jsonl"),
}


def _oracle(runner: runner_module.TaskRunner, root: Path, split: str) -> str:
    gold = runner.read_gold(root, split)
    canonical = runner_module._canonical([gold.items, gold.labels, gold.answer_views])
    text = json.dumps(canonical, sort_keys=True)
    return hashlib.sha256(runner.spec_digest.encode() + text.encode()).hexdigest()


def _fresh(task: str) -> runner_module.TaskRunner:
    """A runner as a new process builds it (no gold read yet)."""
    runner = load_runner(task)
    runner._gold_cache = {}
    return runner


def _fingerprint(task: str, root: Path, split: str) -> tuple[str, int]:
    """The fingerprint a fresh runner gives, and how many times the gold's JSON was hashed for it."""
    runner = _fresh(task)
    with mock.patch.object(runner_module, "hash_json", wraps=runner_module.hash_json) as hashed:
        _, fingerprint = runner.gold(root, split)
        top_level = sum(1 for call in hashed.call_args_list if call.kwargs.get("depth") == 2)
    return fingerprint, top_level


@pytest.fixture()
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the sample data root and a cache folder of this test's own."""
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "data"
    for task in ("propara", "openpi"):
        shutil.copytree(SAMPLE_DATA_ROOT / task, root / task)
    return root


@pytest.mark.parametrize("task", sorted(CASES))
def test_a_second_process_reads_the_fingerprint_it_would_compute(task: str, data: Path) -> None:
    split, _ = CASES[task]
    runner = _fresh(task)
    expected = _oracle(runner, data, split)
    first, computed = _fingerprint(task, data, split)
    second, recomputed = _fingerprint(task, data, split)
    assert first == second == expected
    assert (computed, recomputed) == (1, 0)  # the second is read from the cache folder


def _rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.sampled_from(sorted(CASES)), st.integers(min_value=0, max_value=10_000))
def test_an_edited_file_gets_a_new_fingerprint_even_at_the_same_size_and_time(
    data: Path, task: str, seed: int
) -> None:
    """Change one letter of a word of the split's gold file (same size, mtime set back): the remembered
    fingerprint follows the content and equals the oracle's; gold the edit made invalid is refused as
    it is without the cache (the gold is read every time, only its fingerprint is remembered)."""
    split, relative = CASES[task]
    path = data / relative
    _fingerprint(task, data, split)  # remembered for the file as it is
    text = path.read_text(encoding="utf-8")
    words = [m for m in re.finditer(r"[a-z]{4,}", text) if not text.startswith('":', m.end())]
    word = words[seed % len(words)]
    at = word.start() + seed % (word.end() - word.start())
    _rewrite_keeping_size_and_mtime(
        path, text[:at] + ("x" if text[at] != "x" else "y") + text[at + 1 :]
    )
    try:
        expected = _oracle(_fresh(task), data, split)
    except (GoldDataError, ValueError) as refused:  # a reader refuses bad gold with either
        with pytest.raises(type(refused)):
            _fingerprint(task, data, split)
    else:
        fingerprint, computed = _fingerprint(task, data, split)
        assert (fingerprint, computed) == (expected, 1)
    finally:
        path.write_text(text, encoding="utf-8")  # the next example starts from the samples again


def test_another_splits_file_of_a_reader_component_changes_the_key(data: Path) -> None:
    """ProPara's reader reads files the spec does not declare: every file of its lock is in the key
    (another split's by its status), so touching one is a new entry, never a stale one."""
    runner = _fresh("propara")
    key = gold_fingerprints.content_key(runner, data, "test", runner_spec(runner))
    assert key is not None
    other = data / "propara/aristo-leaderboard/propara/data/dev/answers.tsv"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text("x\n", encoding="utf-8")
    assert gold_fingerprints.content_key(runner, data, "test", runner_spec(runner)) != key


def runner_spec(runner: runner_module.TaskRunner) -> Path:
    return runner.fingerprints.keywords["spec_file"]  # type: ignore[union-attr]


@pytest.mark.parametrize("damage", ["", "not a fingerprint", "0" * 63, "g" * 64, "\u00e9" * 64])
def test_a_damaged_entry_is_computed_again(data: Path, damage: str) -> None:
    split = CASES["propara"][0]
    expected, _ = _fingerprint("propara", data, split)
    runner = _fresh("propara")
    key = gold_fingerprints.content_key(runner, data, split, runner_spec(runner))
    assert key is not None
    entry = Path(os.environ[cache.ENV_DIR]) / "gold" / key[:2] / f"{key}.txt"
    assert entry.read_text(encoding="ascii") == expected
    entry.write_text(damage, encoding="utf-8")
    fingerprint, computed = _fingerprint("propara", data, split)
    assert (fingerprint, computed) == (expected, 1)
    assert entry.read_text(encoding="ascii") == expected  # written again


def test_nothing_is_remembered_with_the_cache_off_or_operator_components(
    data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    split = CASES["propara"][0]
    monkeypatch.setenv(cache.ENV_DIR, "off")
    assert [_fingerprint("propara", data, split)[1] for _ in range(2)] == [1, 1]
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache2"))
    monkeypatch.setenv(registry.COMPONENTS_ENV, str(tmp_path / "components"))
    assert [_fingerprint("propara", data, split)[1] for _ in range(2)] == [1, 1]
    assert not (tmp_path / "cache2" / "gold").exists()
