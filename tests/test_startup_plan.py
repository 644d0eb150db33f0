"""Runner plans (dsl/plan.py): ``procbench score`` with the spec cache warm rebuilds the runner from plain data.

Every spec compiles through its plan (``compile_spec`` is ``build(plan_of(spec, digest))``), so every shipped
spec has one.  A plan must never change a number: the runner rebuilt from the stored plan gives the
compiled runner's fingerprint and, on the same gold and predictions, the same metrics, slices and per-item
values.  It is stored in the spec cache and read back with an unpickler that builds no class, so a planted
or damaged plan is a miss (the spec is compiled again), never code that runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from procbench.dsl import cache
from procbench.dsl.compiler import plan_of
from procbench.dsl.plan import is_plain
from procbench.dsl.tasks import all_spec_paths, load_runner, load_task, spec_path
from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR

SAMPLES_OF = {
    "openpi-head": "openpi"
}  # a task scored on another's sample submissions (it extends that task)


def _evaluation(runner: Any, data_root: Path, split: str, predictions: Path) -> tuple[Any, ...]:
    """Metrics, per-item values and warnings; with the submission's metadata where the sample has some (PM-LLM's ``cot``)."""
    meta = predictions.with_name(predictions.name.rpartition(".")[0] + ".meta.json")
    metadata = json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else None
    result = runner.evaluate(data_root, split, predictions, metadata)
    return result.to_json(), result.items, result.warnings


def _outcome(runner: Any, data_root: Path, split: str, predictions: Path) -> tuple[Any, ...]:
    """The evaluation, or the error it raised (its type and message)."""
    try:
        return ("scored", *_evaluation(runner, data_root, split, predictions))
    except Exception as exc:  # noqa: BLE001 - compared, not hidden: both runners must raise the same
        return ("raised", type(exc).__name__, str(exc))


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from procbench.dsl import tasks

    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(folder))
    tasks._load.cache_clear()  # checked specs memoised in this process would not reach this cache folder
    return folder


def test_every_shipped_spec_rebuilds_the_compiled_runner_from_its_stored_plan(
    cache_dir: Path,
) -> None:
    for path in all_spec_paths():
        spec, compiled = load_task(path)
        plan = plan_of(spec, compiled.spec_digest)
        assert is_plain(plan), path.stem
        assert (
            load_runner(path).spec_digest == compiled.spec_digest
        )  # a miss: compiled, and the plan stored
        stored = cache.cached_plan(path.resolve(), [SPECS_DIR])
        assert stored == plan, path.stem
        rebuilt = load_runner(path)  # a hit: from the stored plan
        assert rebuilt is not compiled and rebuilt.spec_digest == compiled.spec_digest
        folder = SAMPLE_SUBMISSIONS_DIR / SAMPLES_OF.get(spec.name, spec.name)
        if (
            not folder.is_dir()
        ):  # a new task has none until it ships (procbench check --ship): its plan is checked above
            continue
        submissions = sorted(p for p in folder.iterdir() if not p.name.endswith(".meta.json"))
        scored = 0
        for predictions in submissions:
            for split in (
                spec.data.splits
            ):  # the samples cover some splits: elsewhere both runners must fail alike
                expected = _outcome(compiled, SAMPLE_DATA_ROOT, split, predictions)
                assert _outcome(rebuilt, SAMPLE_DATA_ROOT, split, predictions) == expected, (
                    path.stem,
                    predictions.name,
                    split,
                )
                scored += expected[0] == "scored"
        assert scored, path.stem


@pytest.mark.parametrize(
    "name", ["propara", "propara-naacl18", "paradise-tip", "pm-llm-benchmark", "openpi"]
)
def test_the_planned_runner_scores_the_real_data_as_compiled(
    name: str, cache_dir: Path, data_root: Path, tmp_path: Path
) -> None:
    from procbench.bench.generate import generate

    workload = generate(name, data_root, tmp_path / "work", 1)
    _, compiled = load_task(workload.task)
    load_runner(workload.task)  # stores the plan
    rebuilt = load_runner(workload.task)
    assert rebuilt is not compiled
    expected = _evaluation(compiled, workload.data_root, workload.split, workload.predictions)
    assert (
        _evaluation(rebuilt, workload.data_root, workload.split, workload.predictions) == expected
    )
    assert expected[0]["n_items"] > 0


def _plan_file(cache_dir: Path) -> Path:
    (found,) = cache_dir.rglob("*.plan")
    return found


def _entry(payload: bytes) -> bytes:
    return cache.FORMAT + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload


class _Planted:
    """Unpickled by a trusting loader, this would create a file: the plan loader must refuse it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def test_a_planted_or_damaged_plan_is_a_miss_never_code(cache_dir: Path, tmp_path: Path) -> None:
    path = spec_path("propara").resolve()
    compiled_digest = load_runner(path).spec_digest
    plan_file = _plan_file(cache_dir)
    original = plan_file.read_bytes()
    assert cache.cached_plan(path, [SPECS_DIR]) is not None
    marker = tmp_path / "planted-code-ran"
    planted = pickle.dumps(
        (plan_file.stem, {"format": 1, "x": _Planted(marker)}, ()), protocol=pickle.HIGHEST_PROTOCOL
    )
    damaged = original[:-40] + bytes(40)
    for blob in (_entry(planted), damaged, b"not an entry"):
        plan_file.write_bytes(blob)
        assert cache.cached_plan(path, [SPECS_DIR]) is None
        assert not marker.exists()
        assert (
            load_runner(path).spec_digest == compiled_digest
        )  # compiled again, the plan stored again
        assert _plan_file(cache_dir).read_bytes() == original


def test_a_planted_plain_plan_that_does_not_build_is_a_miss(cache_dir: Path) -> None:
    """Plain data under the right key and sha256 (anyone can write them) naming no registered component, or missing parts."""
    path = spec_path("propara").resolve()
    compiled_digest = load_runner(path).spec_digest
    plan_file = _plan_file(cache_dir)
    original = plan_file.read_bytes()
    stored = cache.cached_plan(path, [SPECS_DIR])
    assert isinstance(stored, dict)
    unknown = {**stored, "gold": ("reader", ("reader", "os.system", {"command": "touch planted"}))}
    for planted_plan in (unknown, {"format": stored["format"]}):
        plan_file.write_bytes(
            _entry(
                pickle.dumps((plan_file.stem, planted_plan, ()), protocol=pickle.HIGHEST_PROTOCOL)
            )
        )
        assert (
            cache.cached_plan(path, [SPECS_DIR]) == planted_plan
        )  # read back: plain data is not refused
        assert (
            load_runner(path).spec_digest == compiled_digest
        )  # it does not build: compiled again, the plan stored again
        assert _plan_file(cache_dir).read_bytes() == original


def test_a_plan_is_stored_only_for_the_spec_its_entry_holds(
    cache_dir: Path, tmp_path: Path
) -> None:
    source = spec_path("propara")
    copy = tmp_path / "specs" / "propara.spec"
    copy.parent.mkdir()
    copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    spec, runner = load_task(copy)
    plan = plan_of(spec, runner.spec_digest)
    assert plan is not None
    copy.write_text(
        source.read_text(encoding="utf-8").replace('version     = "1.0"', 'version     = "1.1"'),
        encoding="utf-8",
    )
    cache.store_plan(
        copy.resolve(), [SPECS_DIR], spec, plan
    )  # the file changed since: no entry holds this spec
    assert not list(cache_dir.rglob("*.plan"))


def test_every_shipped_runner_is_rebuilt_without_the_spec_language(cache_dir: Path) -> None:
    """With the plans stored, a fresh interpreter rebuilds every shipped task's runner importing no module of the spec language."""
    import subprocess
    import sys

    from procbench.runners.runtime.paths import PROJECT_ROOT

    probe = (
        "import json, sys\n"
        "from procbench.dsl.tasks import all_spec_paths, load_runner\n"
        "digests = {p.stem: load_runner(p).spec_digest for p in all_spec_paths()}\n"
        "print(json.dumps({'digests': digests, 'modules': sorted(sys.modules)}))\n"
    )
    # the cache key covers sys.path's distributions, which pytest's differs in: both runs are fresh interpreters
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), cache.ENV_DIR: str(cache_dir)}
    miss, hit = (
        json.loads(
            subprocess.run(
                [sys.executable, "-c", probe],
                cwd=PROJECT_ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            ).stdout
        )
        for _ in range(2)  # the first run stores the plans, the second rebuilds from them
    )
    assert (
        "procbench.dsl.compiler" in miss["modules"]
    )  # the probe sees the spec language where it runs
    assert (
        miss["digests"]
        == hit["digests"]
        == {p.stem: load_task(p)[1].spec_digest for p in all_spec_paths()}
    )
    spec_language = (
        "procbench.dsl.model",
        "procbench.dsl.compiler",
        "procbench.dsl.syntax",
        "procbench.dsl.errors",
        "procbench.dsl.checker",
        "procbench.dsl.parser",
        "procbench.dsl.binding",
        "lark",
    )
    assert not [m for m in hit["modules"] if m.startswith(spec_language)]
    assert "procbench.dsl.plan" in hit["modules"]
