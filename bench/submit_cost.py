"""What ``procbench submit`` costs beyond ``procbench score`` on the same file (issue #31: at most 0.15 s CPU).

Whole processes, as a user runs them (:mod:`procbench.bench.process`: the console script, warm byte
code, each child's own user + system CPU from ``os.wait4``), on the bundled samples of paradise-tip
and OpenPI with the bundled sample data:

* ``score``: ``procbench score TASK --split test --predictions FILE --json``;
* ``submit (new)``: the same file submitted to an existing store that does not hold it yet (a store
  holding another of the task's sample files; the store is copied back before each run, outside the
  measured process, so every run is a first submission of the file);
* ``submit (stored)``: the same file submitted again to a store that holds it already (idempotent).

The three run in turns (score, new, stored, score, ...), each once unmeasured first (spec cache and
byte code written), so that a change in the machine's load falls on all of them; the medians are
reported with the load average.  ``python -m procbench.bench.submit_cost [--reps N] [--work DIR]``
prints the tables.

Where the submit's extra CPU goes is measured in the same turns, with the same method
(:func:`procbench.bench.process.python_code`: ``python -c CODE`` with the console script's interpreter
and byte code), by processes that each import what the one before did and one part more
(:data:`PROBES`): the interpreter alone; what a lean ``score`` of the task imports before scoring
(the console's modules, the runner loaded from its cached plan); then the spec's board fields read
from the cached plan as a submit reads them (``procbench.dsl.board_spec``: no syntax tree); then
DuckDB's engine (``_duckdb``, what ``procbench.submissions.sql`` imports); then the rest of what
the console's submit imports (``procbench.submissions``: intake and the store's writers); then, not an
import, one DuckDB connection opened and closed (an empty in-memory database: the engine's start that
every store connection pays).  Each part's cost is its process's CPU beyond the one before; the rest
of a submit's CPU beyond a score is its own work on the store; one more, unmeasured, process counts the dataclasses
that what a submit imports beyond a score's start-up defines (Python compiles each one's methods at import), says
whether the spec's syntax tree (``procbench.dsl.model``) is among it, and checks that a score's start-up imports
none of those parts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import statistics
from pathlib import Path
from typing import Any

from procbench.bench.machine import load_average
from procbench.bench.process import (
    Command,
    Run,
    procbench,
    python_code,
    run_once,
    runner_start_up,
)
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

GOAL_S = 0.15  # issue #31: CPU seconds a submit may cost beyond a score of the same file
DB_NAME = "board.duckdb"

# task, split, the file measured, another file of the task that makes the store "existing"
SAMPLES: dict[str, tuple[str, str, str, str]] = {
    "paradise-tip": ("paradise-tip", "test", "sample-strong.jsonl", "sample-weak.jsonl"),
    "openpi": ("openpi", "test", "strong-model.jsonl", "no-change-baseline.jsonl"),
}
KINDS = ("score", "submit (new)", "submit (stored)")

# where a submit's CPU beyond a score's goes: each probe imports what the one before it did, then one part more
PROBES = (
    "interpreter",
    "score start-up",
    "board fields",
    "duckdb engine",
    "intake",
    "duckdb connection",
)
_DUCKDB_ENGINE = "try:\n    import _duckdb as duckdb\nexcept ImportError:\n    import duckdb"  # as procbench.submissions.sql
_PROBE_STEPS = {
    "interpreter": lambda task: "pass",
    "score start-up": runner_start_up,
    "board fields": lambda task: f"from procbench.console_commands import load_cached\nload_cached({task!r})",
    "duckdb engine": lambda task: _DUCKDB_ENGINE,
    # what procbench/console_commands.py's submit imports beyond a score (which imports cli_data_root too)
    "intake": lambda task: (
        "from procbench.submissions import SubmissionRequest, submit\n"
        "import procbench.submissions.details, procbench.submissions.errors"
    ),
    # not an import: DuckDB's engine starting a database (catalog, threads), which every store connection pays
    "duckdb connection": lambda task: "duckdb.connect(':memory:').close()",
}
PROBE_LABELS = {
    "interpreter": "the interpreter alone (`python -c pass`)",
    "score start-up": "what a lean `score` imports before scoring: the console's modules, the task's runner from its cached plan",
    "board fields": "the spec's board fields, read from the cached plan (`procbench.dsl.board_spec`)",
    "duckdb engine": "DuckDB's engine (`_duckdb`, imported by `procbench.submissions.sql`)",
    "intake": "the rest of what a submit imports (`procbench.submissions`: intake, the store's writers)",
    "duckdb connection": "then one DuckDB connection opened and closed (an empty in-memory database; not an import)",
}
# which of the parts a score's start-up has already imported (each should be none), then what a submit imports beyond
# it (the board fields and intake's modules): the dataclasses its new modules define, and whether the spec's syntax
# tree is among them
_COUNT = (
    "import json, sys\n{start}\n"
    "parts = {{'board fields': 'procbench.dsl.board_spec', 'duckdb engine': '_duckdb', 'intake': 'procbench.submissions.intake'}}\n"
    "already = sorted(k for k, m in parts.items() if m in sys.modules)\n"
    "before = set(sys.modules)\n"
    "{submit}\n"
    "new = [m for m in sys.modules if m not in before]\n"
    "n = sum(1 for m in new for v in vars(sys.modules[m]).values()\n"
    "        if isinstance(v, type) and hasattr(v, '__dataclass_fields__') and v.__module__ == m)\n"
    "print(json.dumps({{'dataclasses': n, 'modules': sorted(m for m in new if m.startswith('procbench.')),\n"
    "                  'spec_model': 'procbench.dsl.model' in new, 'already_in_score': already}}))"
)


def probes(task: str, work: Path) -> dict[str, Command]:
    """The :data:`PROBES` of ``task``: ``python -c`` processes, each importing what the one before did and one part more."""
    code: list[str] = []
    out: dict[str, Command] = {}
    for name in PROBES:
        code.append(_PROBE_STEPS[name](task))
        out[name] = python_code("\n".join(code), work)
    return out


def count_dataclasses(task: str, work: Path) -> dict[str, Any]:
    """Unmeasured: the dataclasses what a submit imports beyond a score's start-up defines, and which parts a score's
    start-up imports already."""
    submit = "\n".join(_PROBE_STEPS[name](task) for name in ("board fields", "intake"))
    command = python_code(_COUNT.format(start=runner_start_up(task), submit=submit), work)
    try:
        done = subprocess.run(
            command.argv,
            cwd=command.cwd,
            env={**os.environ, **command.env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError, subprocess.TimeoutExpired) as exc:
        return {"error": str(exc)[:200]}


def _submit(task: str, split: str, predictions: Path, model: str, db: Path, work: Path) -> Command:
    return procbench(
        "submit",
        task,
        "--split",
        split,
        "--predictions",
        str(predictions),
        "--model",
        model,
        "--db",
        str(db),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        work=work,
    )


def _stores(label: str, work: Path) -> tuple[Path, Path, Path]:
    """(the existing store without the file, the store it is copied to before each new submission, the store holding the file)."""
    task, split, measured, other = SAMPLES[label]
    folder = work.absolute() / "submit-cost" / label
    if folder.exists():
        shutil.rmtree(folder)
    base, new, stored = folder / "base", folder / "new", folder / "stored"
    files = SAMPLE_SUBMISSIONS_DIR / task
    for db, names in ((base / DB_NAME, [other]), (stored / DB_NAME, [other, measured])):
        for name in names:
            done = run_once(_submit(task, split, files / name, Path(name).stem, db, work))
            if done.returncode != 0:
                raise RuntimeError(f"could not make the store {db}: {done.error}")
    return base, new, stored


def _restore(base: Path, new: Path) -> None:
    if new.exists():
        shutil.rmtree(new)
    shutil.copytree(base, new)


def _median(runs: list[Run]) -> dict[str, Any]:
    good = [r for r in runs if r.returncode == 0]
    if not good:
        return {"error": runs[-1].error if runs else "not run"}
    return {
        "cpu_s": statistics.median(r.cpu_s for r in good),
        "wall_s": statistics.median(r.wall_s for r in good),
        "peak_rss_mb": statistics.median(r.peak_rss_mb for r in good),
        "runs": len(good),
    }


def measure_sample(label: str, work: Path, reps: int = 7) -> dict[str, dict[str, Any]]:
    """Medians of ``reps`` alternated runs of score, a new submit, a repeated submit of one sample file and the :data:`PROBES`."""
    task, split, measured, _ = SAMPLES[label]
    predictions = SAMPLE_SUBMISSIONS_DIR / task / measured
    base, new, stored = _stores(label, work)
    model = Path(measured).stem
    commands = {
        "score": procbench(
            "score",
            task,
            "--split",
            split,
            "--predictions",
            str(predictions),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
            "--json",
            work=work,
        ),
        "submit (new)": _submit(task, split, predictions, model, new / DB_NAME, work),
        "submit (stored)": _submit(task, split, predictions, model, stored / DB_NAME, work),
        **probes(task, work),
    }
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for turn in range(reps + 1):  # turn 0: unmeasured (caches and byte code written)
        for name, command in commands.items():
            if runs[name] and runs[name][-1].returncode != 0:
                continue  # a failing command is not run again
            if name == "submit (new)":
                _restore(base, new)
            done = run_once(command)
            if turn:
                runs[name].append(done)
            elif done.returncode != 0:
                runs[name].append(done)
    return {name: _median(done) for name, done in runs.items()}


def measure(work: Path, reps: int = 7) -> dict[str, Any]:
    """Score against submit (new and stored) on each sample: medians of ``reps`` alternated whole-process runs."""
    before = load_average()
    samples, imports = {}, {}
    for label in SAMPLES:
        figures = measure_sample(label, work, reps)
        samples[label] = {kind: figures[kind] for kind in KINDS}
        imports[label] = {
            "probes": {name: figures[name] for name in PROBES},
            **count_dataclasses(SAMPLES[label][0], work),
        }
    return {
        "goal_s": GOAL_S,
        "reps": reps,
        "load_before": before,
        "load_after": load_average(),
        "samples": samples,
        "imports": imports,
    }


def beyond(figures: dict[str, dict[str, Any]], kind: str) -> float | None:
    score, submit = figures.get("score", {}), figures.get(kind, {})
    if "cpu_s" not in score or "cpu_s" not in submit:
        return None
    return float(submit["cpu_s"] - score["cpu_s"])


def steps(result: dict[str, Any], label: str) -> dict[str, float | None]:
    """Each probe's CPU beyond the probe before it (the interpreter's: its own); None where either failed."""
    probes_ = result.get("imports", {}).get(label, {}).get("probes", {})
    out: dict[str, float | None] = {}
    previous: float | None = 0.0
    for name in PROBES:
        cpu = probes_.get(name, {}).get("cpu_s")
        out[name] = None if cpu is None or previous is None else float(cpu - previous)
        previous = cpu
    return out


def imports_beyond_score(result: dict[str, Any], label: str) -> float | None:
    """What the submit's extra imports (and one DuckDB connection) cost together: the last probe's CPU beyond the score's start-up."""
    probes_ = result.get("imports", {}).get(label, {}).get("probes", {})
    last, start = probes_.get(PROBES[-1], {}), probes_.get("score start-up", {})
    if "cpu_s" not in last or "cpu_s" not in start:
        return None
    return float(last["cpu_s"] - start["cpu_s"])


def cause(result: dict[str, Any], label: str) -> str:
    """One line: the new submit's CPU beyond score, and how much of it each extra import is (empty when not measured)."""
    extra = beyond(result["samples"].get(label, {}), "submit (new)")
    parts = steps(result, label)
    if extra is None or any(parts[name] is None for name in PROBES[2:]):
        return ""
    count = result.get("imports", {}).get(label, {}).get("dataclasses")
    intake = (
        f"intake's imports ({count} dataclasses)" if isinstance(count, int) else "intake's imports"
    )
    rest = extra - sum(parts[name] or 0.0 for name in PROBES[2:])
    return (
        f"the board fields {parts['board fields']:.3f} s, DuckDB's engine {parts['duckdb engine']:.3f} s, "
        f"{intake} {parts['intake']:.3f} s, a DuckDB connection {parts['duckdb connection']:.3f} s, "
        f"the rest (the submit's work on the store) {rest:.3f} s, of the {extra:+.3f} s (new)"
    )


def where_lines(result: dict[str, Any]) -> list[str]:
    """A markdown table: where the submit's CPU beyond score goes (the :data:`PROBES`, each beyond the one before)."""
    labels = [label for label in result.get("imports", {}) if label in result["samples"]]
    if not labels:
        return []
    out = [
        "Where the submit's extra CPU goes, in the same turns: `python -c` processes with the console script's interpreter",
        "and byte code, each importing what the row above did and one part more; CPU s (median), and beyond the row above.",
        "",
        "| part | "
        + " | ".join(f"{label} CPU s | beyond the row above" for label in labels)
        + " |",
        "|---|" + "---:|---:|" * len(labels),
    ]
    for name in PROBES:
        cells = [PROBE_LABELS[name]]
        for label in labels:
            entry = result["imports"][label]["probes"].get(name, {})
            extra = steps(result, label)[name]
            cells.append(
                f"{entry['cpu_s']:.3f}"
                if "cpu_s" in entry
                else f"failed: {entry.get('error', '?')}"
            )
            cells.append("-" if extra is None else f"{extra:+.3f}")
        out.append("| " + " | ".join(cells) + " |")
    for kind in KINDS[1:]:
        cells = [
            f"{kind} beyond score, less the rows above beyond score's start-up: the rest of the submit's own work"
        ]
        for label in labels:
            extra, imported = (
                beyond(result["samples"][label], kind),
                imports_beyond_score(result, label),
            )
            cells += ["", "-" if extra is None or imported is None else f"{extra - imported:+.3f}"]
        out.append("| " + " | ".join(cells) + " |")
    notes: list[tuple[str, str]] = []
    for label in labels:
        info = result["imports"][label]
        said: list[str] = []
        if isinstance(info.get("dataclasses"), int):
            model = "among them" if info.get("spec_model") else "not among them"
            said.append(
                f"what a submit imports beyond a score's start-up defines {info['dataclasses']} dataclasses, in "
                f"{len(info.get('modules', []))} procbench modules (the spec's syntax tree, `procbench.dsl.model`, {model})"
            )
        already = info.get("already_in_score")
        if already:
            said.append(
                f"score's start-up already imports {', '.join(already)} (its row above is then not its whole cost)"
            )
        if "error" in info:
            said.append(f"the dataclass count failed: {info['error']}")
        notes += [(label, text) for text in said]
    texts = {text for _, text in notes}
    if len(texts) == 1 and len(notes) == len(labels):  # the same for every sample: said once
        return out + ["", f"For {' and '.join(labels)}: {texts.pop()}."]
    return out + (
        ["", "; ".join(f"{label}: {text}" for label, text in notes) + "."] if notes else []
    )


def lines(result: dict[str, Any]) -> list[str]:
    """A markdown table: each sample's CPU seconds (medians), what each submit costs beyond score, and the goal."""
    goal = result["goal_s"]
    out = [
        f"`procbench submit` beyond `procbench score` on the same file (issue #31 goal: at most {goal:.2f} s CPU); "
        f"whole process, user + system CPU, medians of {result['reps']} alternated runs, "
        f"load average {result['load_before']} before, {result['load_after']} after",
        "",
        "| sample | score | submit (new) | beyond score | submit (stored) | beyond score | goal |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, figures in result["samples"].items():
        cells, verdicts = [label], []
        for kind in KINDS:
            entry = figures.get(kind, {})
            cells.append(
                f"{entry['cpu_s']:.3f} s"
                if "cpu_s" in entry
                else f"failed: {entry.get('error', '?')}"
            )
            if kind == "score":
                continue
            extra = beyond(figures, kind)
            cells.append("-" if extra is None else f"{extra:+.3f} s")
            verdicts.append(extra is not None and extra <= goal)
        cells.append("met" if all(verdicts) else "not met")
        out.append("| " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m procbench.bench.submit_cost", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--reps", type=int, default=7, help="measured runs of each command (default 7)"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=PROJECT_ROOT / "var" / "bench",
        help="work folder (stores, byte code)",
    )
    args = parser.parse_args(argv)
    result = measure(args.work, args.reps)
    where = where_lines(result)
    print("\n".join(lines(result) + ([""] + where if where else [])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
