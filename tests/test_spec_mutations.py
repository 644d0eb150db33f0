"""Mutation test of the checker: every one-name typo of a shipped spec is refused with a position, or changes nothing.

Each mutant (see ``tests/spec_mutations.py``) is judged in-process, as ``procbench check --data``
and ``procbench score`` would treat it, against the bundled samples:

- REFUSED: checking, compiling or the data check reports an error at a real ``file:line:col``
  (and the CLI exits 3 on it);
- HARMLESS: it passes, and scores every sample submission of the task to exactly the numbers the
  unmutated spec gives (same metric names and values, NaN == NaN; per slice the same multiset of
  (n_items, metrics), slice value names ignored, and a slice that only changed its name counts as
  the same slice - nothing can tell a typo in a declaration nobody refers to from a rename);
- SILENT: it passes and scores differently, or scoring refuses the data/predictions the unmutated
  spec accepts (InvalidPredictions, FileNotFoundError, ValueError) - the check should have refused;
- TRACEBACK: any other exception, or a refusal that carries no position.

SILENT and TRACEBACK fail the test.  ``PROCBENCH_MUTATION_SEED`` picks another seeded list and
``PROCBENCH_MUTATIONS_PER_SPEC`` its length; the counts per spec are also written to var/mutations.json.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import time
import traceback
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procbench.dsl import SpecError, check_text, compile_spec
from procbench.dsl.datacheck import check_against_data
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.runners import InvalidPredictions
from procbench.runners.runtime.runner import Evaluation, TaskRunner
from tests.spec_mutations import (
    Mutant,
    is_identifier,
    language_vocabulary,
    lexes_as_one_name,
    mutants,
    name_tokens,
    names_in,
)

SEED = os.environ.get("PROCBENCH_MUTATION_SEED", "14")
PER_SPEC = int(os.environ.get("PROCBENCH_MUTATIONS_PER_SPEC", "60"))
MIN_TOTAL = 200
REPORT_PATH = PROJECT_ROOT / "var" / "mutations.json"
EXIT_SPEC_ERROR = 3
OUTCOMES = ("refused", "harmless", "silent", "traceback")
# What scoring raises on purpose for data or predictions that do not fit the spec: a mutant the
# checker passed must not get here on the samples the unmutated spec scores.
DATA_ERRORS = (InvalidPredictions, FileNotFoundError, ValueError, SpecError)


def _spec_paths() -> list[Path]:
    return sorted(SPECS_DIR.glob("*.spec"))


# -- the unmutated baseline ----------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """A sample submission and what the unmutated spec makes of it."""

    path: Path
    split: str
    metadata: Mapping[str, Any]
    evaluation: Evaluation


@dataclass
class Baseline:
    spec_path: Path
    source: str
    spec: Any  # the checked procbench.dsl.model.TaskSpec
    splits: tuple[str, ...]  # the splits the bundled samples hold, which the data check reads
    samples: list[Sample]
    forbidden: frozenset[
        str
    ]  # names of the parent chain, the task's derived names and the language's vocabulary


def _split_order(splits: tuple[str, ...]) -> list[str]:
    # as the demo database picks them (procbench/demo.py): test, then dev, then the rest
    return sorted(splits, key=lambda s: (s != "test", s != "dev", splits.index(s)))


def _parents(spec_path: Path) -> list[Path]:
    """The spec files this one extends, nearest first, from its checked model (``TaskSpec.extends``)."""
    chain: list[Path] = []
    current = check_text(
        spec_path.read_text(encoding="utf-8"), path=str(spec_path), search=[SPECS_DIR]
    ).spec
    while getattr(current, "extends", None) and len(chain) < 10:
        parent = SPECS_DIR / f"{current.extends}.spec"
        if not parent.is_file() or parent in chain:
            break
        chain.append(parent)
        current = check_text(
            parent.read_text(encoding="utf-8"), path=str(parent), search=[SPECS_DIR]
        ).spec
    return chain


def _sample_files(task_names: list[str]) -> list[Path]:
    """Sample submissions of the task, else of the nearest parent that has some (openpi-head scores openpi's)."""
    for name in task_names:
        folder = SAMPLE_SUBMISSIONS_DIR / name
        if folder.is_dir():
            files = sorted(
                p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json")
            )
            if files:
                return files
    return []


def _metadata(path: Path) -> dict[str, Any]:
    meta_path = path.with_name(path.name.split(".")[0] + ".meta.json")
    return {
        "source": "sample",
        **(json.loads(meta_path.read_text()) if meta_path.is_file() else {}),
    }


def _baseline(spec_path: Path, vocabulary: frozenset[str]) -> Baseline:
    source = spec_path.read_text(encoding="utf-8")
    spec = check_text(source, path=str(spec_path), search=[SPECS_DIR]).spec
    runner = compile_spec(spec)
    # The samples hold some splits of each task (propara has no train): check the ones they hold.
    present = tuple(
        sp
        for sp in spec.data.splits
        if not any(
            "a data file is missing" in d.message
            for d in check_against_data(spec, runner, SAMPLE_DATA_ROOT, (sp,))[0]
        )
    )
    # A data-check error in the unmutated spec would make every mutant look refused.
    errors = [
        d.render()
        for d in check_against_data(spec, runner, SAMPLE_DATA_ROOT, present)[0]
        if d.severity == "error"
    ]
    if errors:
        raise AssertionError(f"the unmutated spec fails the data check on the samples: {errors[0]}")
    parents = _parents(spec_path)
    task_names = [spec.name] + [
        check_text(p.read_text(encoding="utf-8"), path=str(p), search=[SPECS_DIR]).spec.name
        for p in parents
    ]
    samples: list[Sample] = []
    for path in _sample_files(task_names):
        metadata = _metadata(path)
        for split in _split_order(tuple(spec.data.splits)):
            try:
                evaluation = runner.evaluate(SAMPLE_DATA_ROOT, split, path, metadata)
            except (InvalidPredictions, FileNotFoundError, ValueError):
                continue
            samples.append(Sample(path, split, metadata, evaluation))
            break
    # names the task has without spelling them out (metric families expand to exact_p, exact_r, ...)
    derived = {
        *runner.metric_names,
        *(sl.name for sl in runner.slices),
        *(sl.key for sl in runner.slices),
    }
    forbidden = vocabulary.union(
        derived, *(names_in(p.read_text(encoding="utf-8")) for p in parents)
    )
    if not samples:
        raise AssertionError(
            f"no sample submission of {task_names} scores on any split of {SAMPLE_DATA_ROOT}; without samples no SILENT mutant can be seen"
        )
    return Baseline(spec_path, source, spec, present, samples, frozenset(forbidden))


# -- judging one mutant ----------------------------------------------------------------------------


@dataclass
class Verdict:
    mutant: Mutant
    outcome: str
    detail: str
    stage: str = ""  # where it was refused: check, compile, data; or where it went wrong
    cli_exit: int | None = None
    model_changed: bool = False  # harmless on the samples, yet the checked spec differs: the samples do not exercise it

    def line(self) -> str:
        return (
            f"{self.outcome.upper():<9} {self.mutant.describe():<60} [{self.stage}] {self.detail}"
        )


def _num(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _same(a: Any, b: Any) -> bool:
    return bool(_num(a) == _num(b))  # exact, with NaN equal to NaN


def _slice_multiset(values: Mapping[str, Any]) -> Counter:
    return Counter(
        (r.n_items, tuple(sorted((k, _num(v)) for k, v in r.metrics.items())))
        for r in values.values()
    )


def renamed_slices(base: Evaluation, got: Evaluation) -> list[str]:
    """``old -> new`` for each slice that only changed its name (when :func:`difference` found no change)."""
    numbers = {
        name: _slice_multiset(values)
        for name, values in got.slices.items()
        if name not in base.slices
    }
    out = []
    for old in sorted(set(base.slices) - set(got.slices)):
        want = _slice_multiset(base.slices[old])
        new = next((name for name, have in sorted(numbers.items()) if have == want), "?")
        numbers.pop(new, None)
        out.append(f"{old} -> {new}")
    return out


def difference(base: Evaluation, got: Evaluation) -> str | None:
    """The first way ``got`` scores differently from ``base``, or None when every number is the same."""
    if set(base.metrics) != set(got.metrics):
        return f"metric names {sorted(set(base.metrics) ^ set(got.metrics))} are in only one of the two results"
    for name in sorted(base.metrics):
        if not _same(base.metrics[name], got.metrics[name]):
            return f"{name} = {base.metrics[name]!r} -> {got.metrics[name]!r}"
    if base.n_items != got.n_items:
        return f"n_items = {base.n_items} -> {got.n_items}"
    # slice names and slice value names are labels, not numbers: a renamed slice scores the same
    if len(base.slices) != len(got.slices):
        return f"slices {sorted(base.slices)} -> {sorted(got.slices)}"
    remaining = [_slice_multiset(values) for values in got.slices.values()]
    for name in sorted(base.slices):
        want = _slice_multiset(base.slices[name])
        if want in remaining:
            remaining.remove(want)
            continue
        have = _slice_multiset(got.slices[name]) if name in got.slices else None
        missing = next(iter(want - have), None) if have is not None else None
        got_n = sum(have.values()) if have is not None else "absent"
        return f"slice {name!r}: {sum(want.values())} values -> {got_n}; e.g. (n_items, metrics) {missing!r} no longer produced"
    return None


def _placed(exc: SpecError) -> bool:
    return bool(exc.diagnostics) and all(d.span.line >= 1 for d in exc.diagnostics)


def _first(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"


def judge(mutant: Mutant, baseline: Baseline, mutant_path: Path) -> Verdict:
    """Check, compile, data-check and score one mutant, as the CLI would, and sort it into an outcome."""
    text = mutant.apply(baseline.source)
    mutant_path.write_text(
        text, encoding="utf-8"
    )  # the data check re-reads spec.path for positions
    stage = "check"
    try:
        spec = check_text(text, path=str(mutant_path), search=[SPECS_DIR]).spec
        stage = "compile"
        runner: TaskRunner = compile_spec(spec)
        stage = "data"
        diagnostics, _ = check_against_data(spec, runner, SAMPLE_DATA_ROOT, baseline.splits)
    except SpecError as exc:
        if not _placed(exc):
            return Verdict(
                mutant,
                "traceback",
                f"refused without a position: {[d.render() for d in exc.diagnostics]}"[:300],
                stage,
            )
        d = exc.diagnostics[0]
        return Verdict(mutant, "refused", f"{d.span.line}:{d.span.column} {d.message}", stage)
    except Exception as exc:  # noqa: BLE001 - any other exception is exactly what the test looks for
        return Verdict(mutant, "traceback", _first(exc) + _where(exc), stage)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        if not all(d.span.line >= 1 for d in errors):
            return Verdict(
                mutant,
                "traceback",
                f"data check error without a position: {errors[0].message}",
                "data",
            )
        return Verdict(
            mutant,
            "refused",
            f"{errors[0].span.line}:{errors[0].span.column} {errors[0].message}",
            "data",
        )
    renamed: set[str] = set()
    for sample in baseline.samples:
        where = f"{sample.path.name} on {sample.split}: "
        try:
            got = runner.evaluate(SAMPLE_DATA_ROOT, sample.split, sample.path, sample.metadata)
        except DATA_ERRORS as exc:
            return Verdict(
                mutant,
                "silent",
                where + "passed the check, then scoring refused: " + _first(exc),
                "score",
            )
        except Exception as exc:  # noqa: BLE001
            return Verdict(mutant, "traceback", where + _first(exc) + _where(exc), "score")
        diff = difference(sample.evaluation, got)
        if diff is not None:
            return Verdict(mutant, "silent", where + diff, "score")
        renamed.update(renamed_slices(sample.evaluation, got))
    try:
        changed = bool(spec != baseline.spec)
    except Exception:  # noqa: BLE001 - a model that cannot be compared is reported as changed
        changed = True
    note = ("; slice renamed " + ", ".join(sorted(renamed)) if renamed else "") + (
        "; the checked spec differs from the unmutated one" if changed else ""
    )
    return Verdict(
        mutant,
        "harmless",
        f"same numbers on {len(baseline.samples)} sample(s){note}",
        "score",
        model_changed=changed,
    )


def _cli_exit(mutant_path: Path) -> int:
    from procbench.cli import app

    result = CliRunner().invoke(
        app, ["check", "--data", "--data-dir", str(SAMPLE_DATA_ROOT), str(mutant_path)]
    )
    return result.exit_code


# -- the run ---------------------------------------------------------------------------------------


def _report(
    verdicts: dict[str, list[Verdict]], broken: dict[str, str], elapsed: float
) -> dict[str, Any]:
    per_spec = {
        spec: {o: sum(v.outcome == o for v in vs) for o in OUTCOMES}
        for spec, vs in verdicts.items()
    }
    totals = {o: sum(c[o] for c in per_spec.values()) for o in OUTCOMES}
    changed = {spec: sum(v.model_changed for v in vs) for spec, vs in verdicts.items()}
    return {
        "seed": SEED,
        "per_spec_requested": PER_SPEC,
        "seconds": round(elapsed, 1),
        "totals": totals,
        "per_spec": per_spec,
        "harmless_but_spec_changed": {spec: n for spec, n in changed.items() if n},
        "broken_baselines": broken,
        "mutants": [
            {
                "spec": v.mutant.spec,
                "line": v.mutant.line,
                "column": v.mutant.column,
                "original": v.mutant.original,
                "mutated": v.mutant.mutated,
                "outcome": v.outcome,
                "stage": v.stage,
                "detail": v.detail,
                **({"cli_exit": v.cli_exit} if v.cli_exit is not None else {}),
                **({"spec_changed": True} if v.model_changed else {}),
            }
            for vs in verdicts.values()
            for v in vs
        ],
    }


def _table(report: dict[str, Any]) -> str:
    changed = report["harmless_but_spec_changed"]
    rows = [f"{'spec':<26}" + "".join(f"{o:>10}" for o in OUTCOMES) + "  (harmless, spec changed)"]
    for spec, counts in report["per_spec"].items():
        rows.append(
            f"{spec:<26}"
            + "".join(f"{counts[o]:>10}" for o in OUTCOMES)
            + f"  ({changed.get(spec, 0)})"
        )
    rows.append(
        f"{'total':<26}"
        + "".join(f"{report['totals'][o]:>10}" for o in OUTCOMES)
        + f"  ({sum(changed.values())})"
    )
    rows.extend(
        f"{spec:<26}  no baseline: {why}" for spec, why in report["broken_baselines"].items()
    )
    return "\n".join(rows)


def test_every_mutant_of_every_shipped_spec_is_refused_or_harmless(tmp_path: Path) -> None:
    start = time.perf_counter()
    vocabulary = language_vocabulary()
    # A scratch copy of specs/: a mutant is checked as a file beside unmutated copies of the others,
    # so `extends` finds its parent unmutated both in-process and through the CLI (which searches
    # only the spec's folder).
    scratch = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, scratch)
    verdicts: dict[str, list[Verdict]] = {}
    broken: dict[str, str] = {}  # spec -> why its unmutated version cannot serve as the baseline
    cli_checked: set[tuple[str, str]] = set()
    for spec_path in _spec_paths():
        if not _sample_files([spec_path.stem, *(p.stem for p in _parents(spec_path))]):
            continue  # a new task without samples (not required until it ships: procbench check --ship): no SILENT mutant could be seen
        try:
            baseline = _baseline(spec_path, vocabulary)
        except Exception as exc:  # noqa: BLE001 - reported below; the other specs are still judged
            broken[spec_path.stem] = _first(exc) + _where(exc)
            continue
        mutant_path = scratch / spec_path.name
        found = verdicts.setdefault(spec_path.stem, [])
        try:
            for mutant in mutants(
                baseline.source,
                spec_path.stem,
                seed=SEED,
                count=PER_SPEC,
                forbidden=baseline.forbidden,
            ):
                verdict = judge(mutant, baseline, mutant_path)
                # The CLI must map a refusal to exit 3: tried on the first refusal of each stage per spec.
                if (
                    verdict.outcome == "refused"
                    and (spec_path.stem, verdict.stage) not in cli_checked
                ):
                    cli_checked.add((spec_path.stem, verdict.stage))
                    verdict.cli_exit = _cli_exit(mutant_path)
                found.append(verdict)
        finally:
            mutant_path.write_text(baseline.source, encoding="utf-8")
    elapsed = time.perf_counter() - start
    report = _report(verdicts, broken, elapsed)
    REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
    REPORT_PATH.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    table = _table(report)
    print(
        f"\nspec mutations (seed {SEED}, {PER_SPEC} per spec, {elapsed:.1f} s; details in {REPORT_PATH}):\n{table}"
    )
    offenders = [v for vs in verdicts.values() for v in vs if v.outcome in ("silent", "traceback")]
    for v in offenders:
        print(v.line())
    for spec, why in broken.items():
        print(f"BASELINE  {spec}: {why}")
    wrong_exit = [
        v
        for vs in verdicts.values()
        for v in vs
        if v.cli_exit is not None and v.cli_exit != EXIT_SPEC_ERROR
    ]
    total = sum(report["totals"].values())
    assert not broken, "unmutated spec(s) that cannot be the baseline:\n" + "\n".join(
        f"{k}: {v}" for k, v in broken.items()
    )
    assert total >= MIN_TOTAL, (
        f"only {total} mutants across {len(verdicts)} specs (want >= {MIN_TOTAL}); raise PROCBENCH_MUTATIONS_PER_SPEC"
    )
    assert not offenders, (
        f"{len(offenders)} mutant(s) neither refused nor harmless:\n{table}\n"
        + "\n".join(v.line() for v in offenders)
    )
    assert not wrong_exit, "the CLI did not exit 3 on refused mutants:\n" + "\n".join(
        f"exit {v.cli_exit}: {v.line()}" for v in wrong_exit
    )


# -- the generator itself ----------------------------------------------------------------------------


@pytest.mark.parametrize("spec_path", _spec_paths(), ids=lambda p: p.stem)
def test_the_generator_is_deterministic_and_makes_fresh_valid_names(spec_path: Path) -> None:
    source = spec_path.read_text(encoding="utf-8")
    vocabulary = language_vocabulary()
    first = mutants(source, spec_path.stem, seed=SEED, count=PER_SPEC, forbidden=vocabulary)
    assert first == mutants(source, spec_path.stem, seed=SEED, count=PER_SPEC, forbidden=vocabulary)
    assert first, f"{spec_path.name} yields no mutant"
    own = names_in(source)
    token_at = {t.start_pos: t for t in name_tokens(source)}
    for m in first:
        assert (
            m.start in token_at
            and str(token_at[m.start]) == m.original
            and (token_at[m.start].line, token_at[m.start].column) == (m.line, m.column)
        )
        assert (
            m.mutated != m.original
            and is_identifier(m.mutated.replace("-", "_"))
            and lexes_as_one_name(m.mutated)
        )
        assert m.mutated not in own and m.mutated not in vocabulary
        mutated = m.apply(source)
        assert [str(t) for t in name_tokens(mutated)].count(
            m.mutated
        ) == 1  # exactly one token changed, and it lexes as one name
        assert len(name_tokens(mutated)) == len(token_at)
    assert len({(m.start, m.mutated) for m in first}) == len(first)


def test_typos_are_one_edit_away_and_other_seeds_give_other_lists() -> None:
    source = (SPECS_DIR / "openpi.spec").read_text(encoding="utf-8")
    a = mutants(source, "openpi", seed=1, count=40)
    b = mutants(source, "openpi", seed=2, count=40)
    assert [(m.start, m.mutated) for m in a] != [(m.start, m.mutated) for m in b]
    for m in a + b:
        assert _edit_distance(m.original, m.mutated) == 1 or _is_transposition(
            m.original, m.mutated
        )
    rng = random.Random(0)
    from tests.spec_mutations import typo

    assert all(typo("x", rng) != "" for _ in range(200))  # a one-letter name is never deleted away


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _is_transposition(a: str, b: str) -> bool:
    diff = [i for i in range(len(a)) if len(a) == len(b) and a[i] != b[i]]
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


# -- the judge itself ----------------------------------------------------------------------------------


def _evaluation(
    metrics: dict[str, float],
    slices: dict[str, dict[str, tuple[int, dict[str, float]]]],
    n_items: int = 3,
) -> Evaluation:
    from procbench.runners.runtime.runner import SliceResult

    return Evaluation(
        "t",
        "test",
        "",
        n_items,
        metrics,
        {k: {v: SliceResult(n, m) for v, (n, m) in vs.items()} for k, vs in slices.items()},
        [],
    )


def test_difference_is_exact_with_nan_equal_and_ignores_slice_value_names() -> None:
    nan = float("nan")
    base = _evaluation(
        {"f1": 0.5, "p": nan}, {"domain": {"seen": (2, {"f1": 0.25}), "unseen": (1, {"f1": nan})}}
    )
    assert (
        difference(
            base,
            _evaluation(
                {"f1": 0.5, "p": nan}, {"domain": {"a": (1, {"f1": nan}), "b": (2, {"f1": 0.25})}}
            ),
        )
        is None
    )
    assert (
        difference(base, _evaluation({"f1": 0.5 + 1e-12, "p": nan}, {"domain": {}}))
        == f"f1 = 0.5 -> {0.5 + 1e-12!r}"
    )
    assert "only one" in (difference(base, _evaluation({"f1": 0.5, "q": nan}, {})) or "")
    assert "slice 'domain'" in (
        difference(
            base, _evaluation({"f1": 0.5, "p": nan}, {"domain": {"seen": (3, {"f1": 0.25})}})
        )
        or ""
    )
    renamed = _evaluation(
        {"f1": 0.5, "p": nan}, {"domian": {"seen": (2, {"f1": 0.25}), "unseen": (1, {"f1": nan})}}
    )
    assert difference(base, renamed) is None and renamed_slices(base, renamed) == [
        "domain -> domian"
    ]  # a renamed slice scores the same
    assert "slices" in (difference(base, _evaluation({"f1": 0.5, "p": nan}, {})) or "")


def test_the_judge_sees_a_component_swapped_for_another_registered_one(tmp_path: Path) -> None:
    # Not a generated mutant (those never produce a registered name): `exact()` -> `token_f1()` is a
    # swap the checker cannot refuse, since both similarities exist, and it changes OpenPI's exact_*
    # numbers - so the harness must call it SILENT, or it could not see a hole in the checker.
    spec_path = SPECS_DIR / "openpi.spec"
    baseline = _baseline(spec_path, language_vocabulary())
    calls = [
        t
        for t in name_tokens(baseline.source)
        if str(t) == "exact" and baseline.source[t.end_pos :].lstrip().startswith("(")
    ]
    assert calls, (
        "openpi.spec no longer calls the similarity exact(): pick another call of a registered component for this test"
    )
    swaps = [
        Mutant("openpi", i, t.line, t.column, t.start_pos, t.end_pos, "exact", "token_f1")
        for i, t in enumerate(calls)
    ]
    shutil.copytree(SPECS_DIR, tmp_path / "specs")
    verdicts = [judge(m, baseline, tmp_path / "specs" / spec_path.name) for m in swaps]
    assert [v.outcome for v in verdicts] == ["silent"] * len(swaps), [v.line() for v in verdicts]
    assert all("exact_" in v.detail and "->" in v.detail for v in verdicts), [
        v.line() for v in verdicts
    ]
