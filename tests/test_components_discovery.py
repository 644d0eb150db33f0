"""Components come from entry points and from folders the operator allows (``--components``, PROCBENCH_COMPONENTS), not from core edits.

A ``components/`` folder beside a spec is never imported because it is there (tests/test_components_allowed.py holds that).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.dsl import SpecError, check_file, check_text, compile_spec
from procbench.dsl.reference import signature
from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.runners.runtime import registry

OPENPI = (SPECS_DIR / "openpi.spec").read_text(encoding="utf-8")
STRONG = SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"


@pytest.fixture(autouse=True)
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test's components, problems, loaded files and allowed folders leave with it (built-ins are loaded first)."""
    # set, then removed: monkeypatch then restores the variable's absence after the test, whatever --components set meanwhile
    monkeypatch.setenv(registry.COMPONENTS_ENV, "")
    monkeypatch.delenv(registry.COMPONENTS_ENV)
    registry.all_components()
    saved = dict(registry._REGISTRY)
    problems = list(registry._problems)
    files = dict(registry._spec_dir_files)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
    registry._problems[:] = problems
    registry._spec_dir_files.clear()
    registry._spec_dir_files.update(files)
    registry._folders_beside_specs.clear()


def _openpi_with_similarity(call: str) -> str:
    """The shipped OpenPI spec with its exact() similarity replaced by ``call``."""
    source, n = re.subn(r"\bexact\(\)", call, OPENPI, count=1)
    assert n == 1, "openpi.spec no longer calls exact(): pick another similarity to replace"
    return source


ALWAYS_ONE = '''\
"""A similarity for this folder's specs: every pair is a perfect match."""

from dataclasses import dataclass

from procbench.ext import component


@dataclass(frozen=True)
class AlwaysOne:
    name: str = "{name}"

    def prepare(self, text: str) -> str:
        return text

    def score(self, gold: str, prediction: str) -> float:
        return 1.0


@component("similarity", "{name}", version="7", takes="str", gives="float")
def always_one(floor: float = 0.0) -> AlwaysOne:
    """Scores every pair 1.0.

    A second paragraph that the listings leave out.
    """
    return AlwaysOne()
'''


# ---------------------------------------------------------------------------------------------
# built-ins and laziness


def test_nothing_is_imported_until_a_component_is_looked_up() -> None:
    shipped = list(
        tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
            "entry-points"
        ][registry.ENTRY_POINT_GROUP].values()
    )
    probe = textwrap.dedent(
        """
        import json, sys
        import procbench.runners.runtime.registry as registry
        shipped = SHIPPED
        before = [m for m in shipped if m in sys.modules]
        similarities = registry.names("similarity")
        after = [m for m in shipped if m in sys.modules]
        heavy = [m for m in ("torch", "transformers", "spacy", "ray", "streamlit") if m in sys.modules]
        print(json.dumps({"before": before, "after": after, "similarities": similarities, "heavy": heavy}))
        """
    ).replace("SHIPPED", repr(shipped))
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == []
    assert (
        "procbench.runners.library.similarity" in seen["after"]
        and "coco_rouge_l" in seen["similarities"]
    )
    assert seen["heavy"] == []


def test_builtins_say_they_are_built_in() -> None:
    comps = registry.all_components()
    assert {c.origin for c in comps if c.fn.__module__.startswith("procbench.runners.")} == {
        registry.BUILTIN_ORIGIN
    }
    assert registry.get("similarity", "coco_rouge_l").origin == registry.BUILTIN_ORIGIN


# ---------------------------------------------------------------------------------------------
# entry points of another distribution


def _plugin_distribution(root: Path, package: str, component_name: str) -> None:
    """A minimal installed distribution: the package and its .dist-info with entry points."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text(
        ALWAYS_ONE.format(name=component_name), encoding="utf-8"
    )
    (root / package / "extra.py").write_text(
        textwrap.dedent(
            f'''
            from procbench.ext import component


            def register() -> None:
                """Called by the entry point: registers a normaliser on demand."""

                @component("normaliser", "{component_name}_upper", takes="str", gives="str")
                def upper():
                    """Upper-cases the text."""
                    return str.upper
            '''
        ),
        encoding="utf-8",
    )
    info = root / "pb_plugin_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pb-plugin-test\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\nsims = {package}\nnorms = {package}.extra:register\n",
        encoding="utf-8",
    )


def test_an_entry_point_registers_a_component_that_a_spec_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugin_distribution(tmp_path, "pb_plugin_test_pkg", "plugin_always_one")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        registry, "_loaded", False
    )  # as in a fresh process with the plugin installed

    comp = registry.get("similarity", "plugin_always_one")
    assert comp.origin == "entry point pb-plugin-test:sims" and comp.version == "7"
    assert (
        registry.get("normaliser", "plugin_always_one_upper").origin
        == "entry point pb-plugin-test:norms"
    )
    assert registry.get("normaliser", "plugin_always_one_upper").build()("ab") == "AB"
    assert registry.load_problems() == ()

    result = check_text(
        _openpi_with_similarity("plugin_always_one()"), "openpi.spec", search=[SPECS_DIR]
    )
    assert result.spec.name == "openpi"


def test_a_broken_entry_point_is_reported_and_the_rest_still_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "pb_broken_plugin_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import json\n\nraise RuntimeError('needs a licence key')\n", encoding="utf-8"
    )
    info = tmp_path / "pb_broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pb-broken-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\nbroken = pb_broken_plugin_pkg\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_loaded", False)

    assert registry.get("similarity", "coco_rouge_l").origin == registry.BUILTIN_ORIGIN
    (problem,) = registry.load_problems()
    text = problem.render()
    assert (
        "pb_broken_plugin_pkg/__init__.py:3" in text and "RuntimeError: needs a licence key" in text
    )
    assert "entry point pb-broken-plugin:broken" in text and "Traceback" not in text


# ---------------------------------------------------------------------------------------------
# a components/ folder beside the specs, loaded once the operator allows it


def _spec_dir(tmp_path: Path, components: dict[str, str], similarity_call: str) -> Path:
    folder = tmp_path / "specs"
    (folder / "components").mkdir(parents=True)
    for name, text in components.items():
        (folder / "components" / name).write_text(text, encoding="utf-8")
    spec = folder / "openpi.spec"
    spec.write_text(_openpi_with_similarity(similarity_call), encoding="utf-8")
    return spec


def test_an_allowed_components_folder_adds_a_similarity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec_dir(
        tmp_path,
        {"similarities.py": ALWAYS_ONE.format(name="folder_always_one")},
        "folder_always_one()",
    )
    untouched = {
        p: p.read_bytes()
        for p in [*SPECS_DIR.glob("*.spec"), PROJECT_ROOT / "runners" / "runtime" / "registry.py"]
    }
    with pytest.raises(SpecError, match="folder_always_one"):  # beside the spec only: not loaded
        check_file(spec, search=[spec.parent])

    monkeypatch.setenv(registry.COMPONENTS_ENV, str(spec.parent / "components"))
    result = check_file(
        spec, search=[spec.parent]
    )  # the checker imports the allowed folder's *.py itself

    comp = registry.get("similarity", "folder_always_one")
    assert comp.origin == str(spec.parent / "components" / "similarities.py")
    runner = compile_spec(result.spec)
    ours = runner.evaluate(SAMPLE_DATA_ROOT, "test", STRONG).metrics
    shipped = (
        compile_spec(check_file(SPECS_DIR / "openpi.spec", search=[SPECS_DIR]).spec)
        .evaluate(SAMPLE_DATA_ROOT, "test", STRONG)
        .metrics
    )
    # every pair matching perfectly can only raise the exact family, and the shipped exact() is far from perfect
    assert ours["exact_f1"] > shipped["exact_f1"] and ours["rouge_f1"] == shipped["rouge_f1"]
    assert {p: p.read_bytes() for p in untouched} == untouched


def test_a_changed_components_file_is_imported_again(tmp_path: Path) -> None:
    spec = _spec_dir(tmp_path, {"sims.py": ALWAYS_ONE.format(name="first_name")}, "first_name()")
    (loaded,) = registry.load_components_folder(spec.parent / "components")
    assert registry.get("similarity", "first_name").version == "7"
    assert registry.load_components_folder(spec.parent / "components") == (
        loaded,
    )  # unchanged: not imported twice

    loaded.write_text(ALWAYS_ONE.format(name="second_name") + "\n# edited\n", encoding="utf-8")
    registry.load_components_folder(spec.parent / "components")
    assert "second_name" in registry.names("similarity") and "first_name" not in registry.names(
        "similarity"
    )


def test_two_folders_may_hold_files_of_the_same_name(tmp_path: Path) -> None:
    a = _spec_dir(tmp_path / "a", {"sims.py": ALWAYS_ONE.format(name="from_a")}, "from_a()")
    b = _spec_dir(tmp_path / "b", {"sims.py": ALWAYS_ONE.format(name="from_b")}, "from_b()")
    registry.load_components_folder(a.parent / "components")
    registry.load_components_folder(b.parent / "components")
    assert registry.get("similarity", "from_a").origin.startswith(str(a.parent))
    assert registry.get("similarity", "from_b").origin.startswith(str(b.parent))


def test_no_components_folder_imports_nothing(tmp_path: Path) -> None:
    before = dict(registry._REGISTRY)
    assert registry.load_components_folder(tmp_path / "components") == ()
    assert registry._REGISTRY == before


BROKEN = {
    "syntax error": ("def similarity(:\n    pass\n", 1, "syntax error"),
    "exception at import": (
        "import json\n\n\nraise RuntimeError('model weights not found')\n",
        4,
        "RuntimeError: model weights not found",
    ),
    "missing library": (
        "import os\nimport procbench_no_such_library\n",
        2,
        "No module named 'procbench_no_such_library'",
    ),
    "a built-in name": (
        'from procbench.ext import component\n\n\n@component("similarity", "exact")\ndef exact():\n    return None\n',
        4,
        "similarity 'exact' is already registered by built-in",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_components_file_is_reported_by_file_and_line(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, line, message = BROKEN[case]
    spec = _spec_dir(tmp_path, {"broken.py": text}, "coco_rouge_l()")
    broken = spec.parent / "components" / "broken.py"
    check_file(spec, search=[spec.parent])  # not allowed: the broken file is not even imported

    with pytest.raises(registry.ComponentLoadError) as caught:
        registry.load_components_folder(spec.parent / "components")
    report = str(caught.value)
    assert report.startswith(f"{broken}:{line}") and message in report and "Traceback" not in report
    assert (
        registry.get("similarity", "exact").origin == registry.BUILTIN_ORIGIN
    )  # the built-in is untouched

    monkeypatch.setenv(registry.COMPONENTS_ENV, str(spec.parent / "components"))
    with pytest.raises(SpecError) as in_check:  # allowed, the checker reports it as a spec error
        check_file(spec, search=[spec.parent])
    assert f"{broken}:{line}" in str(in_check.value) and message in str(in_check.value)


def test_two_files_registering_one_name_name_both(tmp_path: Path) -> None:
    spec = _spec_dir(
        tmp_path,
        {"a.py": ALWAYS_ONE.format(name="twice"), "b.py": ALWAYS_ONE.format(name="twice")},
        "twice()",
    )
    with pytest.raises(registry.ComponentLoadError) as caught:
        registry.load_components_folder(spec.parent / "components")
    (problem,) = caught.value.problems
    assert problem.path == str(spec.parent / "components" / "b.py")
    assert f"already registered by {spec.parent / 'components' / 'a.py'}" in problem.message


# ---------------------------------------------------------------------------------------------
# procbench components


def test_components_json_lists_every_builtin_with_its_signature() -> None:
    result = CliRunner().invoke(app, ["components", "--json"])
    assert result.exit_code == 0, result.output
    listed = {(c["kind"], c["name"]): c for c in json.loads(result.stdout)["components"]}
    builtins = [c for c in registry.all_components() if c.origin == registry.BUILTIN_ORIGIN]
    assert len(builtins) > 30
    for comp in builtins:
        entry = listed[(comp.kind, comp.name)]
        assert (
            entry["signature"] == signature(comp)
            and entry["version"] == comp.version
            and entry["origin"] == "built-in"
        )
        assert [p["name"] for p in entry["params"]] == [p.name for p in comp.params]
        assert entry["contract"] == comp.contract.describe()
    assert listed[("similarity", "coco_rouge_l")]["signature"] == "coco_rouge_l(beta: float = 1.2)"
    assert listed[("similarity", "coco_rouge_l")]["params"] == [
        {"name": "beta", "type": "float", "required": False, "default": 1.2}
    ]
    assert "takes str, gives float" in listed[("similarity", "coco_rouge_l")]["contract"]
    assert listed[("normaliser", "delete_chars")]["params"][0] == {
        "name": "chars",
        "type": "str",
        "required": True,
    }


def test_components_filters_by_kind_and_shows_folder_components(tmp_path: Path) -> None:
    spec = _spec_dir(tmp_path, {"sims.py": ALWAYS_ONE.format(name="listed_one")}, "listed_one()")
    result = CliRunner().invoke(
        app, ["components", "--kind", "similarity", "--spec-dir", str(spec.parent)]
    )
    assert result.exit_code == 0, result.output
    assert (
        "similarity listed_one  (version 7, " + str(spec.parent / "components" / "sims.py") + ")"
        in result.stdout
    )
    assert (
        "  listed_one(floor: float = 0.0)\n  takes str, gives float\n  Scores every pair 1.0.\n"
        in result.stdout
    )
    assert "second paragraph" not in result.stdout
    assert (
        "similarity coco_rouge_l  (version 1, built-in)" in result.stdout
        and "normaliser " not in result.stdout
    )


def test_components_rejects_an_unknown_kind() -> None:
    result = CliRunner().invoke(app, ["components", "--kind", "similarities"])
    assert result.exit_code == 2 and "did you mean 'similarity'" in result.output


def test_components_exits_1_naming_a_broken_folder_file(tmp_path: Path) -> None:
    spec = _spec_dir(tmp_path, {"bad.py": "x = 1 / 0\n"}, "coco_rouge_l()")
    result = CliRunner().invoke(app, ["components", "--json", "--spec-dir", str(spec.parent)])
    assert result.exit_code == 1
    (problem,) = json.loads(result.stdout)["problems"]
    assert (
        problem.startswith(f"{spec.parent / 'components' / 'bad.py'}:1:")
        and "ZeroDivisionError" in problem
    )
