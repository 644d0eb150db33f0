"""Whole processes, as a user runs them: ``procbench score`` and the official scorers, start to exit.

Each command runs as a child process; ``os.wait4`` returns that child's own resource usage, so the
figures are its CPU seconds (user + system), wall seconds and peak RSS (``ru_maxrss``), start-up and
imports included.  Commands are run in turns (procbench, official, procbench, official, ...) so that
a change in the machine's load falls on both, and the median of the runs is reported.

The official ProPara and OpenPI scorers are run from the folder ``PROCBENCH_OFFICIAL`` names (else
``official/`` beside the data), unchanged and never copied, with a small virtual environment the
bench makes under ``var/`` (the standard library, tqdm and numpy, which is all they need).

Both sides run with warm byte code, as an installed package's is: each writes it once into its own
folder under the bench's work folder (``PYTHONPYCACHEPREFIX``; the official folder stays read-only and
the checkout clean) and reads it back.  ``PYTHONDONTWRITEBYTECODE`` in the bench's environment is not
passed on: with it, whether a side compiled its sources on every run would depend on whether such a
folder happened to exist already (the official ProPara scorer spends about 60 % of its CPU compiling).
Each command runs once, unmeasured, before the measured runs when there are several.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procbench.paths import PROJECT_ROOT, SHARED_DIR

OFFICIAL_REQUIREMENTS = (
    "tqdm",
    "numpy",
)  # installed at the versions of procbench's own environment


@dataclass(frozen=True)
class Command:
    """One command line to time: ``argv`` run in ``cwd`` with ``env`` added to the bench's environment."""

    argv: tuple[str, ...]
    cwd: Path = PROJECT_ROOT
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Run:
    cpu_s: float
    wall_s: float
    peak_rss_mb: float
    returncode: int
    error: str = ""
    stopped: bool = False  # stopped by the CPU bound it was given (SIGXCPU), not finished


# Linux sends SIGXCPU when a process passes its soft RLIMIT_CPU: the exit status of a bounded run stopped there
STOPPED_BY_BOUND = -24


# The child is started by a small launcher process, not by the bench itself: Linux keeps the RSS of the
# process that forked (and, through vfork, of the parent) in a child's ru_maxrss, so a child of the
# bench would report at least the bench's own size.  The launcher's few MB are below any Python's.
_LAUNCHER = """
import json, os, sys, time
argv, cwd, cpu_limit = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.chdir(cwd)
    if cpu_limit:
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU dumps core by default
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 30))
    os.execvp(argv[0], argv)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
sys.stdout.write(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss]))
"""


# not passed to a measured command: see the module docstring (byte code)
_NOT_PASSED_ON = ("PYTHONDONTWRITEBYTECODE",)


def run_once(command: Command, *, timeout: float = 900, cpu_limit: int = 0) -> Run:
    """Run ``command`` once; its own CPU, wall and peak RSS come from ``os.wait4`` in the launcher.

    With ``cpu_limit`` (whole seconds), the command is stopped once it has used that much CPU
    (``RLIMIT_CPU``): the run is then ``stopped`` and its CPU is the bound, not a finished run's.
    """
    import json

    environment = {k: v for k, v in os.environ.items() if k not in _NOT_PASSED_ON} | command.env
    launcher = [
        sys.executable,
        "-S",
        "-c",
        _LAUNCHER,
        json.dumps(list(command.argv)),
        str(command.cwd),
        str(cpu_limit),
    ]
    try:
        done = subprocess.run(
            launcher, env=environment, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return Run(0.0, timeout, 0.0, 124, f"timed out after {timeout:.0f} s")
    try:
        code, cpu, wall, maxrss_kb = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return Run(
            0.0,
            0.0,
            0.0,
            done.returncode or 1,
            (done.stderr.strip()[-400:] or "the launcher printed nothing"),
        )
    if cpu_limit and code == STOPPED_BY_BOUND:
        return Run(cpu, wall, maxrss_kb / 1024, code, "", stopped=True)
    tail = " | ".join(done.stderr.strip().splitlines()[-3:])[-400:]
    return Run(
        cpu, wall, maxrss_kb / 1024, code, "" if code == 0 else tail or f"exit status {code}"
    )


def bounded(command: Command, cpu_limit: float, *, timeout: float) -> dict[str, Any]:
    """One run of ``command``, stopped once it has used at least ``cpu_limit`` CPU seconds.

    For a goal that is a bound on a ratio: when the other side's CPU is known, running a slow
    official scorer only up to the CPU at which the goal is decided measures the goal without
    waiting for the rest of its run.  ``stopped`` says the figure is a lower bound on its CPU.
    """
    import math

    # the kernel checks RLIMIT_CPU on its clock ticks and ru_utime can read a little under the limit:
    # one second more keeps a stopped run's measured CPU at or above the bound asked for
    run = run_once(command, timeout=timeout, cpu_limit=math.ceil(cpu_limit) + 1)
    if run.returncode != 0 and not run.stopped:
        return {"error": run.error}
    return {
        "cpu_s": run.cpu_s,
        "wall_s": run.wall_s,
        "peak_rss_mb": run.peak_rss_mb,
        "runs": 1,
        "stopped": run.stopped,
    }


def alternating(
    commands: dict[str, Command], reps: int, *, timeout: float = 900
) -> dict[str, dict[str, Any]]:
    """Median CPU, wall and peak RSS of each command over ``reps`` runs taken in turns; failures reported.

    With more than one run, each command first runs once unmeasured (its byte code and caches written).
    """
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    if reps > 1:
        for command in commands.values():
            run_once(command, timeout=timeout)
    for _ in range(reps):
        for name, command in commands.items():
            if runs[name] and runs[name][-1].returncode != 0:
                continue  # a failing command is not run again
            runs[name].append(run_once(command, timeout=timeout))
    out: dict[str, dict[str, Any]] = {}
    for name, done in runs.items():
        good = [r for r in done if r.returncode == 0]
        if not good:
            out[name] = {"error": done[-1].error if done else "not run"}
            continue
        out[name] = {
            "cpu_s": statistics.median(r.cpu_s for r in good),
            "wall_s": statistics.median(r.wall_s for r in good),
            "peak_rss_mb": statistics.median(r.peak_rss_mb for r in good),
            "runs": len(good),
        }
    return out


def procbench(*args: str, work: Path | None = None) -> Command:
    """``procbench ARGS`` as the installed console script runs it (same interpreter as the bench).

    Its byte code goes under ``work`` (default ``var/bench``), as the official scorers' does.
    """
    script = Path(sys.executable).with_name("procbench")
    argv = (
        (str(script), *args)
        if script.is_file()
        else (sys.executable, "-m", "procbench.console", *args)
    )
    pycache = (work or PROJECT_ROOT / "var" / "bench").absolute() / "procbench-pycache"
    return Command(argv, env={"PYTHONPYCACHEPREFIX": str(pycache)})


# What a warm ``procbench score TASK`` does before it reads a file: the interpreter, then the console's
# modules and the runner rebuilt from the cached plan (dsl/tasks.load_runner), no data read.
def runner_start_up(task: str) -> str:
    """Python code that imports what a lean ``procbench score TASK`` imports before scoring, and loads the task's runner."""
    return (
        "import procbench.console, procbench.cli_lean, procbench.runners.runtime._types\n"
        f"from procbench.console_commands import load_runner\nload_runner({task!r})"
    )


def python_code(code: str, work: Path | None = None) -> Command:
    """``python -c CODE`` with the console script's interpreter and byte-code folder (a part of a procbench process)."""
    return Command((sys.executable, "-c", code), env=procbench(work=work).env)


def start_up(work: Path | None = None) -> dict[str, Command]:
    """The parts of a ProPara ``score`` process before its scoring: an empty interpreter, and that plus loading the runner.

    Both run with the console script's interpreter and byte-code folder, so the whole process minus these is the
    scoring (gold, predictions, metrics, the JSON written).
    """
    return {
        "interpreter": python_code("pass", work),
        "runner loaded": python_code(runner_start_up("propara"), work),
    }


def bare_interpreter(python: Path) -> Command:
    """An empty run of ``python`` (the official scorers' interpreter, for their share of start-up)."""
    return Command((str(python), "-c", "pass"))


# -- the official scorers --------------------------------------------------------------------------
def official_root() -> Path | None:
    configured = os.environ.get("PROCBENCH_OFFICIAL")
    root = Path(configured).expanduser() if configured else SHARED_DIR / "official"
    return root if root.is_dir() else None


def official_python(work: Path) -> tuple[Path | None, str]:
    """The interpreter of the official scorers' environment (made once under ``work``), or None and why."""
    root = official_root()
    if root is None:
        return None, "the official scorers' folder is absent (set PROCBENCH_OFFICIAL)"
    venv = work.absolute() / "official-venv"  # absolute: the scorers run from their own folders
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if stamp.is_file() and python.is_file():
        return python, ""
    import importlib.metadata

    pins = [f"{name}=={importlib.metadata.version(name)}" for name in OFFICIAL_REQUIREMENTS]
    base = getattr(sys, "_base_executable", sys.executable)
    try:
        subprocess.run(
            [base, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True, timeout=300
        )
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *pins],
            check=True,
            capture_output=True,
            timeout=600,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        return (
            None,
            f"could not make the official scorers' environment ({' '.join(pins)}): {detail.decode('utf-8', 'replace').strip()[-200:] or exc}",
        )
    stamp.write_text(" ".join(pins) + "\n", encoding="utf-8")
    return python, ""


def _official_env(work: Path) -> dict[str, str]:
    # the official folder is read-only: byte code goes under var/ (warm after the first run, as procbench's is)
    return {"PYTHONPYCACHEPREFIX": str(work.absolute() / "official-pycache"), "PYTHONPATH": ""}


def official_propara(python: Path, work: Path, predictions: Path, answers: Path) -> Command:
    """aristo-leaderboard's ProPara ``evaluator.py``, run from inside its folder as its README says."""
    folder = official_root() / "propara-evaluator"  # type: ignore[operator]
    out = work.absolute() / "official-out"
    out.mkdir(parents=True, exist_ok=True)
    return Command(
        (
            str(python),
            "evaluator.py",
            "--predictions",
            str(predictions),
            "--answers",
            str(answers),
            "--output",
            str(out / "propara.json"),
        ),
        cwd=folder,
        env={**_official_env(work), "PYTHONPATH": "."},
    )


def official_openpi(python: Path, work: Path, predictions: Path, gold: Path) -> Command:
    """openpi-dataset's ``eval.simple_eval``, from a folder holding a link named ``eval`` to it."""
    folder = work.absolute() / "official-openpi"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "eval"
    target = official_root() / "openpi-eval"  # type: ignore[operator]
    if not link.is_symlink() or link.resolve() != target.resolve():
        link.unlink(missing_ok=True)
        link.symlink_to(target, target_is_directory=True)
    out = work.absolute() / "official-out"
    out.mkdir(parents=True, exist_ok=True)
    return Command(
        (
            str(python),
            "-m",
            "eval.simple_eval",
            "-g",
            str(gold),
            "-p",
            str(predictions),
            "-q",
            "-o",
            str(out / "openpi.json"),
            "-d",
            str(out / "openpi-diag.txt"),
        ),
        cwd=folder,
        env=_official_env(work),
    )


# -- PAGED's official scorer -----------------------------------------------------------------------
# The upstream evaluator (``paged-evaluator`` in the official folder) imports spaCy, NLTK, tqdm, pandas and
# jsonlines.  Its environment under ``var/`` sees procbench's own site-packages (a ``.pth`` line: the same
# installed versions, nothing downloaded); a requirement procbench's environment lacks is installed with
# ``pip --no-index`` from the machine's local wheels, else replaced by a stand-in module that fails if it is
# used, and the stand-in is named in the report.
PAGED_REQUIREMENTS = ("spacy", "nltk", "tqdm", "pandas", "jsonlines")
_STAND_IN = (
    '"""Stand-in for {name}, which no local wheel provides: imported by the PAGED evaluator\'s tools/util_box.py,\n'
    'used only by helpers that scoring never calls (written by procbench\'s bench)."""\n\n\n'
    "def __getattr__(attribute):\n"
    "    raise RuntimeError(f'{name} stand-in: {{attribute}} is not available')\n"
)


def official_paged_python(work: Path) -> tuple[Path | None, str]:
    """The PAGED evaluator's interpreter (made once under ``work``), or None and why; the second value
    also names any stand-in module (see above) when there is an interpreter."""
    root = official_root()
    if root is None or not (root / "paged-evaluator" / "run.py").is_file():
        return None, "the official PAGED evaluator's folder is absent (set PROCBENCH_OFFICIAL)"
    venv = work.absolute() / "paged-venv"
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if stamp.is_file() and python.is_file():
        return python, stamp.read_text(encoding="utf-8").strip()
    import site

    base = getattr(sys, "_base_executable", sys.executable)
    try:
        subprocess.run(
            [base, "-m", "venv", "--clear", "--without-pip", str(venv)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        own_site = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout.strip()
        )
        stand_ins = venv / "stand-ins"
        stand_ins.mkdir(exist_ok=True)
        lines = [*site.getsitepackages(), str(stand_ins)]
        (own_site / "procbench_site.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
        notes = []
        for name in _missing(python, PAGED_REQUIREMENTS):
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-index",
                    "--target",
                    str(own_site),
                    name,
                ],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if done.returncode != 0:
                (stand_ins / f"{name}.py").write_text(_STAND_IN.format(name=name), encoding="utf-8")
                notes.append(
                    f"{name}: no local wheel, a stand-in module (never called when scoring)"
                )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return (
            None,
            f"could not make the PAGED evaluator's environment: {detail.strip()[-200:] or exc}",
        )
    missing = _missing(python, PAGED_REQUIREMENTS)
    if missing:
        return None, f"the PAGED evaluator's environment lacks {', '.join(missing)}"
    note = "; ".join(notes)
    stamp.write_text(note + "\n", encoding="utf-8")
    return python, note


def _missing(python: Path, names: tuple[str, ...]) -> list[str]:
    probe = "import importlib.util, sys; print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n) is None))"
    done = subprocess.run(
        [str(python), "-c", probe, *names], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.split()


def official_paged(python: Path, work: Path, predictions: Path, gold: Path, label: str) -> Command:
    """The PAGED evaluator's ``run.py`` on its own input, which ``build_input.py`` makes (unmeasured) from
    procbench's predictions and gold file, as the official folder's README says."""
    folder = official_root() / "paged-evaluator"  # type: ignore[operator]
    out = work.absolute() / "official-out"
    out.mkdir(parents=True, exist_ok=True)
    given = out / f"paged-{label}-input.json"
    env = {**_official_env(work), "TQDM_DISABLE": "1"}
    subprocess.run(
        [str(python), "build_input.py", str(predictions), str(gold), str(given)],
        cwd=folder,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        timeout=900,
    )
    return Command(
        (str(python), "run.py", str(given), str(out / f"paged-{label}.json")), cwd=folder, env=env
    )
