"""A planted spec-cache entry (a valid sha256 is no proof of origin) and a link out of the data root: gold is never read
from outside the data root, the planted entry is refused with a message, and the score is the real spec's."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procbench.dsl import cache, tasks
from procbench.dsl.plan import UnsafePlan, build
from procbench.dsl.tasks import load_runner, spec_path
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR

GUESSER = SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl"
GOLD = "openpi/data/gold/{split}/id_answers.jsonl"


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(folder))
    return folder


@pytest.fixture()
def planted_gold(tmp_path: Path) -> Path:
    """An attacker's gold outside the data root: the template guesser's own answers, which it scores far better against."""
    folder = tmp_path / "elsewhere" / "openpi" / "data" / "gold" / "test"
    shutil.copytree(SAMPLE_DATA_ROOT / "openpi" / "data" / "gold" / "test", folder)
    shutil.copy(GUESSER, folder / "id_answers.jsonl")
    return tmp_path / "elsewhere"


def _score(*extra: str) -> tuple[int, str, dict[str, Any] | None]:
    result = CliRunner().invoke(
        app,
        [
            "score",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(GUESSER),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            "--json",
            *extra,
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    start = result.stdout.find("{")
    return (
        result.exit_code,
        result.output,
        json.loads(result.stdout[start:]) if start >= 0 and result.exit_code == 0 else None,
    )


def _plant(entry: Path, value: Any) -> None:
    """Write ``value`` under the entry's own key with a valid sha256, as anyone able to write the cache folder can."""
    payload = pickle.dumps((entry.stem, value, ()), protocol=pickle.HIGHEST_PROTOCOL)
    entry.write_bytes(
        cache.FORMAT + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload
    )


def _real_score(monkeypatch: pytest.MonkeyPatch) -> float:
    with monkeypatch.context() as scope:
        scope.setenv(cache.ENV_DIR, "off")
        code, output, result = _score()
    tasks._load.cache_clear()  # checked specs memoised in this process would not reach the test's cache folder
    assert code == 0 and result is not None, output
    return float(result["metrics"]["exact_f1"])


@pytest.mark.parametrize("where", ["absolute", "dotdot", "placeholder"])
def test_a_planted_plan_reading_gold_outside_the_data_root_is_refused(
    where: str, cache_dir: Path, planted_gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _real_score(monkeypatch)
    path = spec_path("openpi").resolve()
    load_runner(path)  # stores the plan
    (plan_file,) = cache_dir.rglob("*.plan")
    stored = cache.cached_plan(path, [SPECS_DIR])
    assert isinstance(stored, dict) and stored["gold"][0] == "table"
    outside = {
        "absolute": str(planted_gold / GOLD),
        "dotdot": "../" * (len(SAMPLE_DATA_ROOT.resolve().parts) - 1)
        + str(planted_gold / GOLD).lstrip("/"),
        "placeholder": "{split.__class__}/" + GOLD,
    }[where]
    table = dict(stored["gold"][1])
    table["sources"] = (
        (table["sources"][0][0], table["sources"][0][1], outside, *table["sources"][0][3:]),
        *table["sources"][1:],
    )
    planted = {**stored, "gold": ("table", table)}
    with pytest.raises(UnsafePlan, match="reads outside the data root"):
        build(planted)  # built by anyone else, the plan is refused too
    _plant(plan_file, planted)

    code, output, result = _score()
    assert code == 0 and result is not None, output
    assert (
        "warning: refused the cached entry" in output
        and "it was removed and the spec is checked again" in output
    )
    assert float(result["metrics"]["exact_f1"]) == real  # the real spec's gold, not the planted one
    if where == "absolute":  # what the plan would have scored: the guesser against its own answers
        with monkeypatch.context() as scope:
            scope.setenv(cache.ENV_DIR, "off")
            assert _score_against(planted_gold) > 0.5 > real
    assert (
        cache.cached_plan(path, [SPECS_DIR]) == stored
    )  # the planted entry replaced by the real plan


def _score_against(root: Path) -> float:
    result = CliRunner().invoke(
        app,
        [
            "score",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(GUESSER),
            "--data-dir",
            str(root),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    return float(json.loads(result.stdout[result.stdout.find("{") :])["metrics"]["exact_f1"])


def test_a_planted_spec_entry_with_a_source_outside_the_data_root_is_refused(
    cache_dir: Path, planted_gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _real_score(monkeypatch)
    path = spec_path("openpi").resolve()
    checked = cache.checked_spec(path, search=[SPECS_DIR])
    (entry,) = cache_dir.rglob("*.pickle")
    spec = checked.spec
    source = replace(spec.data.sources[0], path=str(planted_gold / GOLD))
    planted = replace(spec, data=replace(spec.data, sources=(source, *spec.data.sources[1:])))
    _plant(entry, (planted, list(checked.warnings), checked.source))
    assert (
        cache.read(cache_dir, entry.stem, path) is not None
    )  # the entry itself reads back: its digest is valid

    again = cache.checked_spec(path, search=[SPECS_DIR])
    assert not again.hit and again.spec == spec
    for plan in cache_dir.rglob("*.plan"):
        plan.unlink()
    _plant(entry, (planted, list(checked.warnings), checked.source))
    code, output, result = _score()
    assert code == 0 and result is not None and float(result["metrics"]["exact_f1"]) == real, output
    assert "warning: refused the cached entry" in output and "is absolute" in output


def test_a_link_out_of_the_data_root_is_refused_when_the_file_is_opened(
    tmp_path: Path, planted_gold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime check: a checked spec, a sound plan, but the data root's gold folder is a link to elsewhere."""
    monkeypatch.setenv(cache.ENV_DIR, "off")
    root = tmp_path / "root"
    shutil.copytree(
        SAMPLE_DATA_ROOT / "openpi", root / "openpi", ignore=shutil.ignore_patterns("test")
    )
    (root / "openpi" / "data" / "gold" / "test").symlink_to(
        planted_gold / "openpi" / "data" / "gold" / "test", target_is_directory=True
    )
    result = CliRunner().invoke(
        app,
        [
            "score",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(GUESSER),
            "--data-dir",
            str(root),
        ],
    )
    assert result.exit_code == 4, result.output
    assert "outside the data root" in result.output and "nothing is read from it" in result.output
    assert '"metrics"' not in result.output
