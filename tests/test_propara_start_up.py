"""What a warm ``procbench score propara`` loads before it scores (issue #31): import graphs and the
spec cache's records, never times.

* The second run in a fresh interpreter takes the runner from its cached plan (the first stored it):
  the spec language is not imported, and the plan's entry records only the data it depends on (the
  spec's lock), not procbench's own code files (imported through the procbench/ links) nor byte code
  being written: each would be read and hashed again by every later score.
* It defines no dataclass and imports neither ``dataclasses`` nor ``inspect`` (Python 3.11 compiles a
  dataclass's methods with ``exec``, about 0.7 ms a class, and ``dataclasses`` imports ``inspect``, ``ast``
  and ``dis``, about 10 ms): its value classes are records (runners/runtime/records.py).
* The modules that run it are bounded: a command-line-only library (difflib's suggestions, the csv
  module of table predictions) is imported where it is used, and the count of procbench's own modules
  a ProPara score imports has a ceiling, so that a new import on this path is a decision.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from procbench.dsl import cache
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime.paths import SPECS_DIR

_CONSOLE = """
import atexit, gc, json, sys
_collections = []
gc.callbacks.append(lambda phase, info: phase == "stop" and _collections.append(info["generation"]))
def _report():
    import gc
    built = [
        f"{c.__module__}.{c.__qualname__}"
        for c in gc.get_objects()
        if isinstance(c, type) and "__dataclass_fields__" in c.__dict__
    ]
    sys.stdout.flush()
    sys.__stdout__.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
    sys.__stdout__.write("DATACLASSES " + json.dumps(sorted(built)) + "\\n")
    sys.__stdout__.write("COLLECTIONS " + json.dumps(_collections) + "\\n")
atexit.register(_report)
sys.argv = ["procbench", *sys.argv[1:]]
from procbench.console import script
sys.exit(script())
"""

# never imported by a warm ProPara score
NOT_ON_THE_PATH = (
    "lark",
    "jinja2",
    "typer",
    "click",
    "numpy",
    "difflib",
    "csv",
    "procbench.dsl.model",
    "procbench.dsl.checker",
    "procbench.dsl.parser",
    "procbench.dsl.compiler",
    "procbench.runners.propara.naacl18",
    "procbench.runners.runtime.tables",
    # ProPara compares phrases and records: no text similarity, no metric family (issue #31: each was
    # imported by the metrics package or the matcher for a type name only), no temporary files (streaming)
    "procbench.runners.library.similarity",
    "procbench.runners.metrics._classification",
    "procbench.runners.metrics._generation",
    "procbench.runners.metrics._ordering",
    "procbench.runners.metrics._outcomes",
    "procbench.runners.metrics._preference",
    "procbench.runners.metrics._ranking",
    "procbench.runners.metrics._sets",
    "procbench.runners.metrics._tokens",
    "tempfile",
    # a 1x input is far below the streaming threshold: only the choice is imported, not the streamed path
    "procbench.runners.runtime.streaming",
    "array",
    # the plan's path check parses placeholders with string.Formatter's own parser (_string), not the string module
    "string",
    # issue #31: the warm path's value classes are records, not dataclasses (see the module's note)
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    # a lock needs _thread, not threading; the streamed spill the C pickler, not pickle.py (struct, re, ...)
    "threading",
    "pickle",
    # a 1x run hashes well under a megabyte: CPython's own SHA-256, not OpenSSL (procbench/runners/runtime/digests.py)
    "hashlib",
    "_hashlib",
)
# procbench's own modules a warm ProPara score imports (43 when this was written, 51 before the metric
# families and the similarities were left out; 46 with procbench.runners.runtime.digests, which spares
# hashlib, _hashlib and _blake2, and procbench.dsl.gold_fingerprints, which spares writing the gold's
# JSON): a ceiling, not a target
PROCBENCH_MODULES_AT_MOST = 46


class _Run(NamedTuple):
    modules: set[str]  # every module imported
    dataclasses: list[str]  # every class defined as a dataclass, as module.qualname
    collections: list[int]  # the generation of each cyclic garbage collection, in order


def _score(cache_dir: Path, pycache: Path) -> _Run:
    predictions = SAMPLE_SUBMISSIONS_DIR / "propara" / "noisy-tracker.tsv"
    args = ["score", "propara", "--split", "test", "--predictions", str(predictions)]
    args += ["--data-dir", str(SAMPLE_DATA_ROOT), "--json"]
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        cache.ENV_DIR: str(cache_dir),
        "PYTHONPYCACHEPREFIX": str(pycache),  # byte code written while the spec is checked
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, "-c", _CONSOLE, *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    modules = next(line for line in reversed(lines) if line.startswith("MODULES "))
    built = next(line for line in reversed(lines) if line.startswith("DATACLASSES "))
    collected = next(line for line in reversed(lines) if line.startswith("COLLECTIONS "))
    return _Run(
        set(json.loads(modules.removeprefix("MODULES "))),
        json.loads(built.removeprefix("DATACLASSES ")),
        json.loads(collected.removeprefix("COLLECTIONS ")),
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[_Run, _Run, Path]:
    """A cold and a warm score (fresh interpreters, one cache folder), and the folder."""
    folder = tmp_path_factory.mktemp("cache")
    pycache = tmp_path_factory.mktemp("pycache")
    cold = _score(folder, pycache)
    hot = _score(folder, pycache)
    return cold, hot, folder


@pytest.fixture(scope="module")
def warm(runs: tuple[_Run, _Run, Path]) -> tuple[set[str], set[str], Path]:
    """Modules of a cold and of a warm score, and the cache folder."""
    cold, hot, folder = runs
    return cold.modules, hot.modules, folder


def test_a_warm_score_rebuilds_the_runner_without_the_spec_language(
    warm: tuple[set[str], set[str], Path],
) -> None:
    cold, hot, _ = warm
    assert "procbench.dsl.compiler" in cold  # the probe sees the check where it runs
    assert "procbench.dsl.plan" in hot
    unwanted = sorted(
        m for m in hot if any(m == n or m.startswith(n + ".") for n in NOT_ON_THE_PATH)
    )
    assert not unwanted


def test_a_warm_score_defines_no_dataclass(runs: tuple[_Run, _Run, Path]) -> None:
    """Records, not dataclasses, on the warm path: none is defined (and ``dataclasses`` is not imported,
    NOT_ON_THE_PATH), while the probe does see those of the cold run, which checks the spec (its syntax
    tree, procbench/dsl/model.py, is dataclasses)."""
    cold, hot, _ = runs
    assert any(name.startswith("procbench.dsl.") for name in cold.dataclasses), cold.dataclasses
    assert hot.dataclasses == [], hot.dataclasses


def test_a_score_runs_no_cyclic_garbage_collection(runs: tuple[_Run, _Run, Path]) -> None:
    """The console script pauses the cyclic collector for a lean command (procbench/console.py): a warm
    score used to run 16 collections, all of objects that stay alive; neither run runs one now."""
    cold, hot, _ = runs
    assert hot.collections == [] and cold.collections == [], (cold.collections, hot.collections)


def test_a_typer_command_gets_the_collector_back() -> None:
    """A command the typer app runs (the store, the site) runs with the collector on, as Python starts."""
    probe = (
        "import gc, sys\n"
        "import procbench.cli\n"
        "procbench.cli.app = lambda: print('ENABLED', gc.isenabled())\n"
        "sys.argv = ['procbench', 'models']\n"
        "from procbench.console import script\n"
        "script()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "ENABLED True" in done.stdout, (done.stdout[-500:], done.stderr[-2000:])


def test_a_warm_score_imports_a_bounded_number_of_procbench_modules(
    warm: tuple[set[str], set[str], Path],
) -> None:
    _, hot, _ = warm
    own = sorted(m for m in hot if m.startswith("procbench."))
    assert len(own) <= PROCBENCH_MODULES_AT_MOST, own


def test_the_plan_records_data_not_procbenchs_code_nor_byte_code(
    warm: tuple[set[str], set[str], Path],
) -> None:
    """The entry the warm run read back depends on the spec's lock only (no code, no .pyc being written)."""
    _, _, folder = warm
    spec = (SPECS_DIR / "propara.spec").resolve()
    entries = sorted(folder.rglob("*.plan"))
    assert entries
    code = tuple(str(PROJECT_ROOT / p) + os.sep for p in ("procbench", "dsl", "runners"))
    for entry in entries:
        blob = entry.read_bytes()
        _, _, payload = blob[len(cache.FORMAT) :].partition(b"\n")
        _, _, dependencies = cache._PlainUnpickler(io.BytesIO(payload)).load()
        paths = [path for path, _ in dependencies]
        assert not [p for p in paths if p.startswith(code) or ".pyc" in p], paths
        assert str(spec.with_suffix(".lock")) in paths or not spec.with_suffix(".lock").exists()


_FRESH = """
import json, sys
from procbench.runners.runtime import registry
import procbench.runners.metrics
import procbench.runners.library.structured
families = sorted(m for m in sys.modules if m.startswith("procbench.runners.metrics._"))
unread = [
    f"{c.kind} {c.name}" for c in list(registry._REGISTRY.values()) if c.declared_params is not None
]
phrase = registry._REGISTRY[("similarity", "phrase_overlap")]
before = phrase.declared_params
names = [p.name for p in phrase.params]
metrics = registry.names("metric")
print(json.dumps([families, unread, before, names, metrics]))
"""


def test_built_in_components_register_without_reading_signatures_and_metric_families_load_on_use() -> (
    None
):
    """Importing the metrics package imports no metric family; a built-in component's parameters are read
    from its signature when first asked (then as before); discovering every component still finds every
    metric of every family (a fresh interpreter: nothing imported before)."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _FRESH],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    families, unread, before, names, metrics = json.loads(done.stdout.strip().splitlines()[-1])
    from procbench.runners.runtime._component_index import INDEX

    metric_modules = {module for (kind, _), module in INDEX.items() if kind == "metric"}
    assert metric_modules and not metric_modules & set(families), families
    # metrics requiring the class set are checked at registration (their labels parameter): none of them is loaded
    assert unread == [], unread
    assert before is None
    assert names == [
        "alternatives",
        "blank_alternative",
        "groups",
        "on_zero_denominator",
        "and_separator",
        "or_separator",
    ]
    assert metrics == sorted(name for kind, name in INDEX if kind == "metric")


def test_a_phrase_is_prepared_once_per_similarity_and_text() -> None:
    """Scoring ProPara splits each distinct phrase into its groups once per similarity (a record's parts were
    prepared again for every record holding them); the numbers are the parity tests'."""
    import gc
    from collections import Counter
    from unittest import mock

    from procbench.dsl.tasks import load_task
    from procbench.runners.library.matching import PairScorer
    from procbench.runners.library.structured import PhraseOverlap

    _, runner = load_task("propara")
    # the forms an earlier test in this process prepared are kept (matchers, phrase overlaps): forget them
    for found in gc.get_objects():
        if isinstance(found, (PhraseOverlap, PairScorer)):
            found._prepared.clear()  # type: ignore[attr-defined]
    predictions = SAMPLE_SUBMISSIONS_DIR / "propara" / "noisy-tracker.tsv"
    real = PhraseOverlap._prepare
    seen: Counter[tuple[int, str]] = Counter()

    def counted(self: PhraseOverlap, text: str) -> object:
        seen[(id(self), text)] += 1
        return real(self, text)

    with mock.patch.object(PhraseOverlap, "_prepare", autospec=True, side_effect=counted):
        evaluation = runner.evaluate(SAMPLE_DATA_ROOT, "test", predictions)
    assert evaluation.n_items and seen
    assert max(seen.values()) == 1, seen.most_common(3)


def test_the_prepared_phrases_a_runner_keeps_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived runner (the site's) scores file after file: its phrase memo is cleared when full, never grows past it."""
    from procbench.runners.library import protocols, structured

    monkeypatch.setattr(protocols, "PREPARED_LIMIT", 8)
    overlap = structured.PhraseOverlap()
    texts = [f"water OR rain {i} AND soil" for i in range(30)]
    prepared = [overlap.prepare(t) for t in texts]
    assert len(overlap._prepared) <= 8  # type: ignore[attr-defined]
    assert prepared == [overlap._prepare(t) for t in texts]  # the same forms, memo or not
    from procbench.runners.library.matching import PairScorer

    scorer = PairScorer(similarity=structured.PhraseOverlap())
    forms = [scorer.prepare(t) for t in texts]
    assert len(scorer._prepared) <= 8 and forms == [(t, overlap._prepare(t)) for t in texts]


def test_the_written_out_punctuation_is_the_string_modules() -> None:
    """runners/library/text.py writes string.punctuation out (NOT_ON_THE_PATH: a score imports no string module)."""
    import string

    from procbench.runners.library.text import ASCII_PUNCTUATION

    assert ASCII_PUNCTUATION == string.punctuation
