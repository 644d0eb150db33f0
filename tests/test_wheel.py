"""The wheel works anywhere (issue #18): built from the repository, installed in a fresh virtual
environment outside the checkout, it holds one package (``procbench``), finds its specs, migrations,
grammar and samples as package data, writes nothing into itself, and scores every shipped task to the
checkout's numbers.

Offline, with no index: the wheel is built with this environment's setuptools (``pip wheel
--no-build-isolation --no-index``, plain setuptools following the checkout's ``procbench/`` links)
and installed with ``--no-deps``; the fresh environment reaches the dependencies through one ``.pth``
file naming this environment's site-packages (a path line only: that folder's own ``.pth`` files, the
editable install's finder among them, are not run, so the checkout stays off ``sys.path``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.paths import PROJECT_ROOT, SAMPLE_SUBMISSIONS_DIR, default_data_root

NAMESPACE = "procbench"
MOVED = (
    "dsl",
    "runners",
    "submissions",
    "leaderboard",
)  # top-level folders of the checkout, procbench.<name> installed
DATA = ("specs", "schema", "samples")  # data folders, shipped as procbench/<name>/

# Scores every shipped task on the bundled samples, named explicitly (a checkout beside real data would
# default to it; the installed wheel has no such neighbour) (a variant task, e.g. openpi-head, takes its parent's
# files); prints one JSON object.  Run by the installed wheel and by the checkout.
SCORE_ALL = """
import json, sys
import procbench
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
out = {}
for spec_file in procbench.all_spec_paths():
    spec, _ = procbench.load_task(spec_file)
    folder = SAMPLE_SUBMISSIONS_DIR / spec.name
    if not folder.is_dir() and spec.extends:
        folder = SAMPLE_SUBMISSIONS_DIR / str(spec.extends)
    if not folder.is_dir():
        continue  # a new task without samples (not required until it ships: procbench check --ship)
    for path in sorted(p for p in folder.iterdir() if not p.name.endswith(".meta.json")):
        for split in spec.data.splits:
            try:
                result = procbench.score(spec.name, path, split=split, data_dir=SAMPLE_DATA_ROOT)
            except Exception:
                continue
            out.setdefault(spec.name, {})[path.name] = {"split": split, "metrics": result.metrics}
            break
print(json.dumps(out, sort_keys=True))
"""

# Where the installed package lives and what it cannot import.
PROBE = """
import importlib, importlib.metadata as md, json, sys
import procbench, procbench.runners.runtime.paths as paths
missing = {}
for name in %r:
    try:
        importlib.import_module(name)
        missing[name] = False
    except ModuleNotFoundError:
        missing[name] = True
print(json.dumps({
    "file": procbench.__file__, "path": sys.path, "missing": missing, "installed": paths.INSTALLED,
    "specs": str(paths.SPECS_DIR), "cache": str(paths.default_cache_dir("specs")),
    "components": sorted(ep.value for ep in md.entry_points(group="procbench.components")),
}))
""" % (MOVED,)


# Each optional feature, run where its extra is missing: (extra, command line after `procbench` or a Python script).
FEATURES = {
    "site": ["leaderboard", "--db", "{db}"],
    "distributed": ["rescore", "openpi", "--engine", "ray", "--db", "{db}"],
    "models": ["baseline", "paradise-embedding", "--split", "test", "--out", "embedding.jsonl"],
}
# The frames extra: a Python API feature; its exception's message is the line a notebook shows.
TO_PANDAS = """
import procbench
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
result = procbench.score("paradise-tip", SAMPLE_SUBMISSIONS_DIR / "paradise-tip" / "sample-strong.jsonl", split="test", data_dir=SAMPLE_DATA_ROOT)
try:
    frame = result.to_pandas()
except procbench.MissingExtra as exc:
    print("missing", exc.extra, str(exc), sep="\\t")
else:
    print("frame", type(frame).__module__.split(".")[0], len(frame), sep="\\t")
"""
# The API's names, from `procbench` itself: every name of __all__, the exceptions the same classes the modules raise.
API_NAMES = """
import json, procbench
from procbench.submissions import errors
from procbench.runners.runtime import _types
names = {name: type(getattr(procbench, name)).__name__ for name in procbench.__all__}
print(json.dumps({"names": names, "dir": sorted(set(procbench.__all__) - set(dir(procbench))),
                  "same": procbench.SubmissionRefused is errors.SubmissionRefused and procbench.InvalidPredictions is _types.InvalidPredictions}))
"""


def _extra_distributions() -> list[str]:
    """The distributions of every extra a user installs (pyproject's optional dependencies but ``dev``)."""
    import tomllib

    optional = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]["optional-dependencies"]
    return sorted(
        {
            req.split("==")[0].split("[")[0].strip()
            for extra, reqs in optional.items()
            if extra != "dev"
            for req in reqs
        }
    )


def _without_extras(folder: Path) -> Path:
    """This environment's site-packages without the extras' distributions: a folder of links to every other entry.

    A real absence: ``import streamlit`` finds nothing there (the extras' own dependencies stay, as after
    a plain ``pip install procbench`` beside other packages)."""
    import importlib.metadata as md

    purelib = Path(sysconfig.get_paths()["purelib"])
    hidden: set[str] = set()
    for name in _extra_distributions():
        files = md.distribution(name).files or []
        hidden |= {f.parts[0] for f in files if f.parts and f.parts[0] != ".."}
    folder.mkdir()
    for entry in purelib.iterdir():
        if entry.name not in hidden and not entry.name.endswith(".pth"):
            (folder / entry.name).symlink_to(entry)
    return folder


def _source_copy(target: Path) -> Path:
    """What a wheel is built from (the build writes build/ and *.egg-info beside it, so never in the checkout)."""
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy2(PROJECT_ROOT / name, target / name)
    for folder in (
        NAMESPACE,
        "bench",
        *MOVED,
        *DATA,
    ):  # procbench/ keeps its links to the others, as git checks them out
        shutil.copytree(
            PROJECT_ROOT / folder,
            target / folder,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "var", "*.egg-info"),
        )
    return target


def _files(folder: Path) -> set[str]:
    return {
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("wheel")
    (base / "src").mkdir()
    source = _source_copy(base / "src")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(base / "dist"),
            str(source),
        ],
        check=True,
        timeout=600,
    )
    wheel = next((base / "dist").glob("procbench-*.whl"))
    venv = base / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
    )
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(
        subprocess.run(
            [str(python), "-c", purelib], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    before = set(os.listdir(site))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-index",
            "--no-deps",
            "--quiet",
            str(wheel),
        ],
        check=True,
        timeout=600,
    )
    added = set(os.listdir(site)) - before
    (site / "procbench-test-dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    work = base / "work"  # the current directory of every installed run: outside the checkout
    work.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "PYTHONPATH",
            "PROCBENCH_DATA",
            "PROCBENCH_CACHE_DIR",
            "PROCBENCH_DB",
            "PROCBENCH_PARITY",
        }
    }
    env |= {
        "XDG_CACHE_HOME": str(base / "xdg-cache"),
        "XDG_DATA_HOME": str(base / "xdg-data"),
        "PYTHONNOUSERSITE": "1",
    }
    return {
        "wheel": wheel,
        "venv": venv,
        "python": python,
        "site": site,
        "added": added,
        "work": work,
        "env": env,
        "package": site / NAMESPACE,
        "base": base,
    }


@pytest.fixture(scope="module")
def bare(installed: dict[str, object]) -> dict[str, object]:
    """The same wheel in a second environment whose dependencies lack every extra's distributions (a plain `pip install procbench`)."""
    base = installed["base"]
    venv = base / "bare-venv"  # type: ignore[operator]
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
    )
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(
        subprocess.run(
            [str(python), "-c", purelib], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    install = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--no-index",
        "--no-deps",
        "--quiet",
        str(installed["wheel"]),
    ]
    subprocess.run(install, check=True, timeout=600)
    deps = _without_extras(base / "deps-without-extras")  # type: ignore[operator]
    (site / "procbench-test-dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    (installed["work"] / "empty.duckdb").write_bytes(b"")  # type: ignore[operator]  # a --db that exists: the extra is told first
    return {**installed, "venv": venv, "python": python, "site": site}


def _run(
    installed: dict[str, object], args: list[str], *, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**installed["env"], **(extra_env or {})}  # type: ignore[dict-item]
    return subprocess.run(
        args,
        cwd=installed["work"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # type: ignore[arg-type]


def _checkout(script: str, **env: str) -> str:
    environment = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **env}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return done.stdout


def test_wheel_holds_one_package_with_its_data(installed: dict[str, object]) -> None:
    assert installed["added"] == {
        NAMESPACE,
        "procbench-0.1.0.dist-info",
    }  # nothing generic in site-packages
    names = zipfile.ZipFile(installed["wheel"]).namelist()  # type: ignore[arg-type]
    assert {n.split("/")[0] for n in names} == {NAMESPACE, "procbench-0.1.0.dist-info"}
    for shipped in (
        "procbench/specs/openpi.spec",
        "procbench/specs/openpi.lock",
        "procbench/specs/openpi.bib",
        "procbench/specs/openpi.reported",
        "procbench/dsl/procbench.lark",
        "procbench/schema/001_initial.sql",
        "procbench/schema/openpi.predictions.schema.json",
        "procbench/runners/runtime/registry.py",
        "procbench/leaderboard/app.py",
        "procbench/submissions/store.py",
    ):
        assert shipped in names, shipped
    assert sum(n.startswith("procbench/samples/submissions/") for n in names) == sum(
        1 for p in SAMPLE_SUBMISSIONS_DIR.rglob("*") if p.is_file()
    )


def test_installed_package_imports_only_its_namespace(installed: dict[str, object]) -> None:
    done = _run(installed, [str(installed["python"]), "-c", PROBE])
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert Path(probe["file"]).is_relative_to(installed["site"])  # type: ignore[arg-type]
    assert probe["missing"] == dict.fromkeys(
        MOVED, True
    )  # `import runners`, `import dsl`, ... fail
    assert probe["installed"] is True and Path(probe["specs"]) == installed["package"] / "specs"  # type: ignore[operator]
    checkout = str(PROJECT_ROOT.resolve())
    assert not [
        p
        for p in probe["path"]
        if p
        and (Path(p).resolve() == Path(checkout) or Path(p).resolve() == Path(checkout) / NAMESPACE)
    ]
    assert probe["components"] and all(
        v.startswith("procbench.runners.") for v in probe["components"]
    )
    assert Path(probe["cache"]).is_relative_to(installed["base"]) and not Path(
        probe["cache"]
    ).is_relative_to(installed["site"])  # type: ignore[arg-type]


def test_installed_cli_help_check_and_compile(installed: dict[str, object]) -> None:
    procbench = str(installed["venv"] / "bin" / "procbench")  # type: ignore[operator]
    package_files = _files(installed["package"])  # type: ignore[arg-type]
    helped = _run(installed, [procbench, "--help"])
    assert helped.returncode == 0, helped.stderr
    assert "score" in helped.stdout and "compile" in helped.stdout
    checked = _run(installed, [procbench, "check"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "openpi" in checked.stdout and "propara" in checked.stdout
    compiled = _run(installed, [procbench, "compile", "openpi"])
    assert compiled.returncode == 0, compiled.stderr
    written = installed["work"] / "openpi.predictions.schema.json"  # type: ignore[operator]
    assert json.loads(written.read_text())["type"] == "object"
    assert (installed["base"] / "xdg-cache" / "procbench" / "specs").is_dir()  # type: ignore[operator]  # the spec cache, in the user's cache
    assert _files(installed["package"]) == package_files  # type: ignore[arg-type]  # nothing written into the installed package


def test_installed_wheel_scores_every_shipped_task_as_the_checkout(
    installed: dict[str, object],
) -> None:
    done = _run(installed, [str(installed["python"]), "-c", SCORE_ALL])
    assert done.returncode == 0, done.stderr
    wheel_scores = json.loads(done.stdout)
    # every task with sample submissions (its own, or its parent's) scored at least one of them
    from procbench.dsl.tasks import all_spec_paths, load_task

    specs = [load_task(p)[0] for p in all_spec_paths()]
    with_samples = sorted(
        s.name
        for s in specs
        if any((SAMPLE_SUBMISSIONS_DIR / str(n)).is_dir() for n in (s.name, s.extends) if n)
    )
    assert len(with_samples) >= 10 and sorted(wheel_scores) == with_samples
    # hand-checkable anchors: the gold copied as a prediction scores 1, a file that predicts no change 0
    assert wheel_scores["propara"]["gold-copy.tsv"]["metrics"]["f1"] == 1.0
    assert wheel_scores["propara"]["nothing-changes.tsv"]["metrics"]["f1"] == 0.0
    assert wheel_scores["paradise-tip"]["sample-strong.jsonl"]["metrics"]["accuracy"] == 1.0
    assert wheel_scores == json.loads(_checkout(SCORE_ALL))


def test_installed_wheel_scores_real_data_as_the_checkout(installed: dict[str, object]) -> None:
    root = default_data_root()
    if root is None or not (root / "propara").is_dir():
        pytest.skip("real benchmark data absent: set PROCBENCH_DATA")
    procbench = str(installed["venv"] / "bin" / "procbench")  # type: ignore[operator]
    real = {"PROCBENCH_DATA": str(root)}
    predictions = installed["work"] / "all-none.tsv"  # type: ignore[operator]
    made = _run(
        installed,
        [procbench, "baseline", "propara-all-none", "--split", "test", "--out", str(predictions)],
        extra_env=real,
    )
    assert made.returncode == 0, made.stderr
    scored = _run(
        installed,
        [
            procbench,
            "score",
            "propara",
            "--split",
            "test",
            "--predictions",
            str(predictions),
            "--json",
        ],
        extra_env=real,
    )
    assert scored.returncode == 0, scored.stderr
    wheel = json.loads(scored.stdout)
    script = f"import json, procbench; print(json.dumps(procbench.score('propara', {str(predictions)!r}, split='test', data_dir={str(root)!r}).metrics))"
    assert wheel["metrics"] == json.loads(_checkout(script))
    assert (
        wheel["n_items"] == 54
    )  # ProPara's test split has 54 paragraphs: the real data, not the bundled sample


def test_compile_writes_where_told(tmp_path: Path) -> None:
    from procbench.cli import app

    done = CliRunner().invoke(app, ["compile", "openpi", "--out-dir", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert (
        json.loads((tmp_path / "out" / "openpi.predictions.schema.json").read_text())["type"]
        == "object"
    )


def test_building_a_wheel_inside_a_checkout_leaves_it_working(tmp_path: Path) -> None:
    """D2 of issue #32: ``pip wheel .`` run in the checkout writes ``procbench.egg-info`` beside the sources; its
    entry points name ``procbench.runners.*``, the one name the checkout imports too, so the checkout's own
    ``procbench components`` and registry still work with that metadata on the import path."""
    source = _source_copy(tmp_path)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(tmp_path / "dist"),
            ".",
        ],
        cwd=source,
        check=True,
        timeout=600,
    )
    egg_info = source / "procbench.egg-info" / "entry_points.txt"
    assert egg_info.is_file() and "= procbench.runners.library.generic" in egg_info.read_text(
        encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(source)}
    listed = subprocess.run(
        [sys.executable, "-m", "procbench.cli", "components"],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    here = subprocess.run(
        [sys.executable, "-m", "procbench.cli", "components"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert listed.stdout == here.stdout and "aggregator mean" in listed.stdout
    probe = "import procbench.runners.runtime.registry as r; print(r.__file__)"
    where = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(
        source
    )  # the copy's own sources, not the installed or the checkout's


@pytest.mark.parametrize("extra", sorted(FEATURES))
def test_a_feature_without_its_extra_is_one_line_naming_it(
    bare: dict[str, object], extra: str
) -> None:
    procbench = str(bare["venv"] / "bin" / "procbench")  # type: ignore[operator]
    args = [arg.replace("{db}", str(bare["work"] / "empty.duckdb")) for arg in FEATURES[extra]]  # type: ignore[operator]
    done = _run(bare, [procbench, *args])
    assert done.returncode == 11, (
        done.stdout + done.stderr
    )  # procbench.runners.runtime.extras.EXIT_MISSING_EXTRA, as the README's table says
    (line,) = done.stderr.strip().splitlines()  # no traceback: one line
    assert (
        line.startswith("error: ")
        and line.endswith(f'pip install "procbench[{extra}]"')
        and f"the {extra!r} extra" in line
    )
    assert not (bare["work"] / "embedding.jsonl").exists()  # type: ignore[operator]


def test_to_pandas_names_the_frames_extra_and_works_with_it(
    installed: dict[str, object], bare: dict[str, object]
) -> None:
    without = _run(bare, [str(bare["python"]), "-c", TO_PANDAS])
    assert without.returncode == 0, without.stderr
    kind, extra, message = without.stdout.strip().split("\t")
    assert (
        (kind, extra) == ("missing", "frames")
        and "\n" not in message
        and message.endswith('pip install "procbench[frames]"')
    )
    with_it = _run(
        installed, [str(installed["python"]), "-c", TO_PANDAS]
    )  # the environment with every extra
    assert with_it.returncode == 0, with_it.stderr
    assert with_it.stdout.split() == [
        "frame",
        "pandas",
        "8",
    ]  # the eight items of the bundled PARADISE tip test sample


def test_the_api_names_import_from_procbench_in_a_wheel(bare: dict[str, object]) -> None:
    done = _run(bare, [str(bare["python"]), "-c", API_NAMES])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["same"] and found["dir"] == []
    exceptions = {
        "CompareError",
        "DataRefused",
        "FetchError",
        "GoldDataError",
        "InvalidPredictions",
        "MissingData",
        "MissingExtra",
        "RejectedPredictions",
        "ScoringFailed",
        "SpecError",
        "SubmissionRefused",
    }
    assert exceptions <= {name for name, kind in found["names"].items() if kind == "type"}
    assert {"score", "submit", "compare", "load_task", "check", "fetch"} <= {
        name for name, kind in found["names"].items() if kind == "function"
    }
