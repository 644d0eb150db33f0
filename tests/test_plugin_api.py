"""procbench.ext, the public API for component authors (issue #32): its reference runs, its names are the
runtime's own objects, and the guide's plugin (docs/plugins.md, docs/examples/procbench-binary/) needs
nothing else of procbench.  The plugin built, installed and scored is tests/test_plugin_wheel.py's."""

from __future__ import annotations

import ast
import doctest
import importlib
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import matthews_corrcoef

import procbench.ext as ext
from procbench.paths import PROJECT_ROOT
from tests.doc_files import BLOCK

DOC = PROJECT_ROOT / "docs" / "plugins.md"
EXAMPLE = PROJECT_ROOT / "docs" / "examples" / "procbench-binary"
PLUGIN = "procbench-binary/"  # the doc's folder of the distribution


def test_the_reference_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    result = doctest.testmod(
        ext, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, raise_on_error=False
    )
    assert result.attempted >= 8 and result.failed == 0, capsys.readouterr().out


def test_every_public_name_is_the_runtimes_own_object() -> None:
    """Re-exports, not copies: a plugin's Metric subclass is the metric the checker and runner know."""
    homes = {
        "component": "procbench.runners.runtime.registry",
        "contract": "procbench.runners.runtime.registry",
        "get": "procbench.runners.runtime.registry",
        "GoldField": "procbench.runners.runtime.registry",
        "Metric": "procbench.runners.metrics",
        "AGGREGATIONS": "procbench.runners.metrics",
        "GoldSet": "procbench.runners.runtime._types",
        "InvalidPredictions": "procbench.runners",
        "ItemScore": "procbench.runners",
        "FieldType": "procbench.runners.runtime.predictions",
    }
    for name, home in homes.items():
        assert getattr(ext, name) is getattr(importlib.import_module(home), name), name
    assert sorted(ext.__all__) == sorted(set(ext.__all__))
    assert all(hasattr(ext, name) for name in ext.__all__)
    public = {n for n in vars(ext) if not n.startswith("_") and n != "annotations"}
    assert public == set(ext.__all__)  # nothing importable from it that the reference does not list
    assert ext.ENTRY_POINT_GROUP == "procbench.components"


def test_the_guides_table_names_only_public_names() -> None:
    """§1 of docs/plugins.md lists the API: every name it shows there is in ``__all__``, and every name of ``__all__`` is shown."""
    section = DOC.read_text().split("## 1.", 1)[1].split("## 2.", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    shown = {
        word.split("(")[0] for row in rows for word in re.findall(r"`([^`]+)`", row.split(" | ")[0])
    }
    assert shown == set(ext.__all__)


def _doc_files() -> dict[str, str]:
    return {name: body for kind, name, body in BLOCK.findall(DOC.read_text()) if kind == "file"}


def test_the_guides_plugin_is_the_repositorys_example_file_for_file() -> None:
    shown = {
        name.removeprefix(PLUGIN): body
        for name, body in _doc_files().items()
        if name.startswith(PLUGIN)
    }
    kept = {
        str(p.relative_to(EXAMPLE)): p.read_text(encoding="utf-8")
        for p in sorted(EXAMPLE.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shown == kept


def _procbench_imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {m for m in found if m.split(".")[0] in ("procbench", "runners", "dsl", "submissions")}


@pytest.mark.parametrize("path", sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*.py")))
def test_the_example_imports_nothing_of_procbench_but_procbench_ext(path: str) -> None:
    assert _procbench_imports((EXAMPLE / path).read_text(encoding="utf-8")) == {"procbench.ext"}


def test_the_guide_names_only_procbench_ext_for_component_code() -> None:
    """Every Python block of the guide (files and snippets) imports procbench.ext, never a private module."""
    blocks = DOC.read_text().split("```python\n")[1:]
    assert blocks
    for block in blocks:
        code = block.split("```", 1)[0]
        assert _procbench_imports(code) <= {"procbench.ext"}, code[:200]


def test_a_metric_written_against_ext_alone_is_checked_like_a_shipped_one() -> None:
    """The plugin's module, loaded from its folder as an operator allows it, registers components whose
    contracts the checker reads: a spec passing ``positive`` a number is refused before anything runs."""
    from procbench.dsl import SpecError, check_text
    from procbench.runners.runtime import registry

    spec = (
        'task t {\n  title = "t"\n  version = "1"\n  primary = m\n'
        '  data { splits = [test]  source s { format = "jsonl"  path = "t/{split}.jsonl" }  id = s.id\n'
        '    fields { y: enum("yes", "no") = s.y } }\n'
        '  predictions { format = "jsonl"  schema { id = str  y = str } }\n'
        "  score { measure m { metric = mcc(positive = %s)  gold = y  prediction = y } }\n}\n"
    )
    saved = dict(registry._REGISTRY)
    files = dict(registry._spec_dir_files)
    try:
        registry.load_components_folder(EXAMPLE)
        comp = ext.get("metric", "mcc")
        assert comp.origin == str(EXAMPLE / "procbench_binary.py")
        assert comp.contract.aggregations == ("corpus",)
        metric = comp.build(positive="yes")
        assert (metric.value_range, metric.percent) == ((-1.0, 1.0), False)
        assert check_text(spec % '"yes"', "t.spec").spec.name == "t"
        with pytest.raises(SpecError, match="positive"):
            check_text(spec % "3", "t.spec")
    finally:
        registry._REGISTRY.clear()
        registry._REGISTRY.update(saved)
        registry._spec_dir_files.clear()
        registry._spec_dir_files.update(files)


def test_nothing_below_the_api_imports_it() -> None:
    """procbench.ext sits above the runtime it re-exports (pyproject's import-linter layers say so too)."""
    for folder in ("runners", "dsl"):
        for path in (PROJECT_ROOT / folder).rglob("*.py"):
            assert "procbench.ext" not in _procbench_imports(path.read_text(encoding="utf-8")), path
    assert Path(ext.__file__).resolve() == (PROJECT_ROOT / "procbench" / "ext.py").resolve()


@pytest.fixture(scope="module")
def plugin_mcc() -> object:
    """The example's metric, built from its module loaded by path (registering nothing in this process)."""
    import importlib.util

    from procbench.runners.runtime import registry

    saved = dict(registry._REGISTRY)
    try:
        spec = importlib.util.spec_from_file_location(
            "procbench_binary_under_test", EXAMPLE / "procbench_binary.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        registry._REGISTRY.clear()
        registry._REGISTRY.update(saved)
    return module


LABELS = st.sampled_from(["yes", "no", "maybe"])


@given(
    st.lists(st.tuples(LABELS, st.one_of(st.none(), LABELS)), max_size=40),
    st.sampled_from(["yes", "no"]),
)
def test_the_plugins_mcc_is_scikit_learns_on_any_items(
    plugin_mcc: object, pairs: list[tuple[str, str | None]], positive: str
) -> None:
    """Any set of items (a split, a slice, a resample), unanswered ones included: scikit-learn's number."""
    metric = plugin_mcc.mcc(positive=positive)  # type: ignore[attr-defined]
    rows = [metric.item(g, p, "corpus") for g, p in pairs]
    with (
        warnings.catch_warnings()
    ):  # one class only among the items: scikit-learn says so, and gives 0.0
        warnings.simplefilter("ignore", UserWarning)
        gold, predicted = [g == positive for g, _ in pairs], [p == positive for _, p in pairs]
        want = float(matthews_corrcoef(gold, predicted)) if pairs else 0.0
    (got,) = metric.reduce(rows, "corpus")
    assert got == pytest.approx(want, abs=1e-12)
    assert -1.0 <= got <= 1.0  # the metric's declared value_range


@given(st.text(max_size=20))
def test_the_plugins_yes_no_normaliser_maps_only_answers(plugin_mcc: object, text: str) -> None:
    normalise = plugin_mcc.yes_no()  # type: ignore[attr-defined]
    word = text.strip().strip(".!").strip().lower()
    want = (
        "yes"
        if word in {"y", "yes", "true", "1"}
        else "no"
        if word in {"n", "no", "false", "0"}
        else text
    )
    assert normalise(text) == want
