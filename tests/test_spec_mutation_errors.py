"""One mistake, one error, at its place: every seeded single-token mutant of every shipped spec gives exactly one error
(from `check`, or `check --data` on the bundled samples) or none where the mutant is still a valid spec.

The mutants are ``tests/spec_mutations.py``'s: one-edit typos of NAME tokens spread over each spec, plus every
token where a typo changes data silently (``map()`` keys, labels and default; ``key = ...``, ``id = ...``).
The error must be at the mutated line, or where the name the typo took away is used (a misspelt declaration
is reported at its first use), or at the fetch block whose lock no longer lists a renamed split's files.
Whether a mutant that passes scores as before is ``tests/test_spec_mutations.py``'s question.
The counts are written to var/mutation_errors.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from procbench.dsl import SpecError, check_text, compile_spec
from procbench.dsl.datacheck import check_against_data
from procbench.dsl.errors import Diagnostic
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SPECS_DIR
from tests.spec_mutations import Mutant, language_vocabulary, mutants, names_in, targeted_mutants

SEED = os.environ.get("PROCBENCH_MUTATION_SEED", "14")
PER_SPEC = int(os.environ.get("PROCBENCH_MUTATIONS_PER_SPEC", "60"))
MIN_TOTAL = 200
REPORT_PATH = PROJECT_ROOT / "var" / "mutation_errors.json"


def _errors(text: str, path: Path, splits: tuple[str, ...]) -> tuple[str, list[Diagnostic]]:
    """(stage, errors) of a spec text checked as ``procbench check --data`` would, on the splits the samples hold."""
    path.write_text(text, encoding="utf-8")  # the data check re-reads the spec's path for positions
    try:
        spec = check_text(text, path=str(path), search=[SPECS_DIR]).spec
    except SpecError as exc:
        return "check", [d for d in exc.diagnostics if d.severity == "error"]
    if not splits:
        return "check", []
    found, _ = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT, splits)
    return "data", [d for d in found if d.severity == "error"]


def _line_of(error: Diagnostic, text: str) -> str:
    source = error.file_text if error.file_text is not None else text
    lines = source.splitlines()
    return lines[error.span.line - 1] if 1 <= error.span.line <= len(lines) else ""


def _placed(
    error: Diagnostic, mutant: Mutant, text: str, path: Path, splits: tuple[str, ...]
) -> bool:
    if Path(error.path) == path and error.span.line == mutant.line:
        return True
    word, typo = mutant.original.strip('"'), mutant.mutated.strip('"')
    if re.search(rf"(?<![\w-])(\w+_)?{re.escape(word)}(_\w+)?(?![\w-])", _line_of(error, text)):
        return True  # a use of what the typo renamed, or of a name made from it (weighted_p, p_sum)
    if re.search(rf"'[^']*(?<![\w-]){re.escape(typo)}(?![\w-])[^']*'", error.message):
        return True  # at the block or statement that uses it, naming the typo itself
    if re.search(rf"'[^']*(?<![\w-])(\w+_)?{re.escape(word)}(_\w+)?(?![\w-])[^']*'", error.message):
        return True  # at a use of a name made from what the typo renamed (a count's stat in 'bleu_edge.ConditionFlow.p_sum')
    return (
        word in splits and ".lock" in error.message
    )  # a renamed split: its files are not the ones the lock lists


def test_every_single_token_mutant_gives_one_error_at_its_place_or_none(tmp_path: Path) -> None:
    vocabulary = language_vocabulary()
    scratch = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, scratch)  # `extends` finds the unmutated parents beside the mutant
    counts: dict[str, dict[str, int]] = {}
    wrong: list[str] = []
    for spec_path in sorted(SPECS_DIR.glob("*.spec")):
        source = spec_path.read_text(encoding="utf-8")
        spec = check_text(source, path=str(spec_path), search=[SPECS_DIR]).spec
        runner = compile_spec(spec)
        missing = {
            sp
            for sp in spec.data.splits
            for d in check_against_data(spec, runner, SAMPLE_DATA_ROOT, (sp,))[0]
            if "a data file is missing" in d.message
        }
        present = tuple(
            sp for sp in spec.data.splits if sp not in missing
        )  # the splits the samples hold
        path = scratch / spec_path.name
        _, base_errors = _errors(source, path, present)
        assert base_errors == [], (
            f"the unmutated {spec_path.name} has errors: {[d.render() for d in base_errors]}"
        )
        forbidden = vocabulary | {*runner.metric_names, *(sl.key for sl in runner.slices)}
        parents = [SPECS_DIR / f"{spec.extends}.spec"] if spec.extends else []
        forbidden |= {
            n for p in parents if p.is_file() for n in names_in(p.read_text(encoding="utf-8"))
        }
        tally = counts.setdefault(spec_path.stem, {"mutants": 0, "one_error": 0, "no_error": 0})
        made = mutants(source, spec_path.stem, seed=SEED, count=PER_SPEC, forbidden=forbidden)
        made += targeted_mutants(source, spec_path.stem, seed=SEED, forbidden=forbidden)
        try:
            for mutant in made:
                text = mutant.apply(source)
                stage, errors = _errors(text, path, present)
                outcome = "one_error" if len(errors) == 1 else "no_error" if not errors else "more"
                tally["mutants"] += 1
                tally[outcome] = tally.get(outcome, 0) + 1
                shown = " | ".join(
                    f"{Path(d.path).name}:{d.span.line}:{d.span.column} {d.message[:90]}"
                    for d in errors
                )
                if len(errors) > 1:
                    wrong.append(f"{mutant.describe()}: {len(errors)} errors [{stage}]: {shown}")
                elif errors and not _placed(errors[0], mutant, text, path, tuple(spec.data.splits)):
                    wrong.append(f"{mutant.describe()}: the error is elsewhere [{stage}]: {shown}")
        finally:
            path.write_text(source, encoding="utf-8")
    totals = {
        k: sum(c.get(k, 0) for c in counts.values())
        for k in ("mutants", "one_error", "no_error", "more")
    }
    REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
    report = {"seed": SEED, "per_spec": PER_SPEC, "totals": totals, "specs": counts, "wrong": wrong}
    REPORT_PATH.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nmutants: {totals} (details in {REPORT_PATH})")
    assert totals["mutants"] >= MIN_TOTAL, totals
    assert not wrong, (
        f"{len(wrong)} of {totals['mutants']} mutants break one mistake, one error:\n"
        + "\n".join(wrong)
    )


def test_a_misspelt_gold_field_of_any_match_block_is_one_error(tmp_path: Path) -> None:
    """The field's own error, not a second one from a type guessed for the unknown field (a record similarity then failed too)."""
    scratch = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, scratch)
    tried = 0
    for spec_path in sorted(SPECS_DIR.glob("*.spec")):
        source = spec_path.read_text(encoding="utf-8")
        for number, line in enumerate(source.splitlines(), 1):
            found = re.search(r"^\s*match \w+ \{ gold = (\w+)", line)
            if not found:
                continue
            typo = found.group(1)[:-1] + "z"
            lines = source.splitlines()
            lines[number - 1] = line.replace(f"gold = {found.group(1)}", f"gold = {typo}", 1)
            errors = _errors("\n".join(lines) + "\n", scratch / spec_path.name, ())[1]
            assert [(e.span.line, f"'{typo}'" in e.message) for e in errors] == [(number, True)], [
                e.render() for e in errors
            ]
            tried += 1
    assert tried >= 6  # ProPara's and OpenPI's match blocks at least
