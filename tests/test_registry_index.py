"""The registry's index (runners/runtime/_component_index.py): a lookup imports the one module that registers the name.

The index is generated from pyproject.toml's ``procbench.components`` entry points, the one list of built-in
component modules (``python -m procbench.runners.runtime.registry --write-index``); these tests check that it is what
that list and its modules give, so it cannot drift, that a checkout without installed metadata imports that
list, and that a stale entry still finds the component.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
from concurrent.futures import ThreadPoolExecutor

import pytest

from procbench.paths import PROJECT_ROOT
from procbench.runners.runtime import registry
from procbench.runners.runtime._component_index import INDEX, MODULES

REGENERATE = f"the component index is stale: run `{registry.INDEX_COMMAND}` (after adding, renaming or moving a component)"
# Packages of shipped components that a lookup of another package's component must not import.
COMPONENT_PACKAGES = (
    "procbench.runners.paged",
    "procbench.runners.paradise",
    "procbench.runners.pmllm",
    "procbench.runners.propara",
    "procbench.runners.metrics",
    "procbench.runners.runtime.templates",
)


def _pyproject_modules(text: str | None = None) -> list[str]:
    """The built-in component modules: procbench's entry points in pyproject.toml, read here without the registry."""
    if text is None:
        text = (PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)["project"]["entry-points"]["procbench.components"]
    return list(table.values())


def _probe(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (the registry empty, nothing discovered); it prints one JSON line."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_index_is_what_the_shipped_modules_register() -> None:
    seen = _probe(
        """
        import json
        from procbench.runners.runtime import registry
        print(json.dumps({"rendered": registry.render_index(), "on_disk": registry.index_path().read_text(encoding="utf-8")}))
        """
    )
    assert seen["on_disk"] == seen["rendered"], REGENERATE


def test_the_index_records_pyprojects_component_modules_in_order() -> None:
    assert list(MODULES) == _pyproject_modules()
    assert "procbench.runners.propara.leaderboard" in MODULES  # not empty or partial


def test_the_index_is_generated_from_the_pyproject_it_is_given(tmp_path) -> None:
    text = (PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = '[project.entry-points."procbench.components"]\n'
    head, _, rest = text.partition(table)
    kept = 'generic = "procbench.runners.library.generic"\nfilters = "procbench.runners.library.filters"\n'
    smaller = tmp_path / "pyproject.toml"
    smaller.write_text(head + table + kept + "\n[" + rest.split("\n[", 1)[1], encoding="utf-8")
    assert _pyproject_modules(smaller.read_text(encoding="utf-8")) == [
        "procbench.runners.library.generic",
        "procbench.runners.library.filters",
    ]
    seen = _probe(
        f"""
        import json, pathlib
        from procbench.runners.runtime import registry
        namespace = {{}}
        exec(registry.render_index(pathlib.Path({str(smaller)!r})), namespace)
        print(json.dumps({{"modules": namespace["MODULES"], "index": sorted(map(list, namespace["INDEX"]))}}))
        """
    )
    assert seen["modules"] == [
        "procbench.runners.library.generic",
        "procbench.runners.library.filters",
    ]
    assert ["filter", "distinct"] in seen["index"] and ["aggregator", "mean"] in seen["index"]
    assert ["scorer", "propara.leaderboard"] not in seen["index"]  # a module it does not declare


def test_a_checkout_without_installed_metadata_imports_pyprojects_modules() -> None:
    seen = _probe(
        """
        import json, sys
        from procbench.runners.runtime import registry
        registry._entry_points = lambda: ([], [])  # no distribution metadata: the checkout alone
        registry.names("scorer")
        problems = [p.render() for p in registry.load_problems()]
        print(json.dumps({"modules": sorted(sys.modules), "problems": problems}))
        """
    )
    assert set(_pyproject_modules()) <= set(seen["modules"])
    assert seen["problems"] == []


def test_the_index_names_every_built_in_component_with_the_module_that_defines_it() -> None:
    shipped = {
        (c.kind, c.name): c.fn.__module__
        for c in registry.all_components()
        if c.origin == registry.BUILTIN_ORIGIN
    }
    assert INDEX == shipped, REGENERATE
    assert ("scorer", "propara.leaderboard") in INDEX and (
        "aggregator",
        "mean",
    ) in INDEX  # the index is not empty or partial


def _lookup_alone(module: str) -> tuple[str, dict]:
    keys = sorted(key for key, home in INDEX.items() if home == module)
    return module, _probe(
        f"""
        import json, sys
        from procbench.runners.runtime import registry
        found = [[c.kind, c.name, c.fn.__module__, c.origin] for c in (registry.get(k, n) for k, n in {keys!r})]
        print(json.dumps({{"found": found, "discovered": registry._loaded, "modules": sorted(sys.modules)}}))
        """
    )


def test_each_indexed_module_registers_its_components_when_imported_alone() -> None:
    modules = sorted(set(INDEX.values()))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(pool.map(_lookup_alone, modules))
    for module, seen in results.items():
        expected = sorted(
            [k, n, module, registry.BUILTIN_ORIGIN]
            for (k, n), home in INDEX.items()
            if home == module
        )
        assert sorted(seen["found"]) == expected, (module, REGENERATE)
        assert seen["discovered"] is False, (
            f"looking up {module}'s components discovered every module: {REGENERATE}"
        )


def test_looking_up_the_propara_scorer_imports_only_propara_component_modules() -> None:
    seen = _probe(
        """
        import json, sys
        from procbench.runners.runtime import registry
        comp = registry.get("scorer", "propara.leaderboard")
        print(json.dumps({"origin": comp.origin, "discovered": registry._loaded, "modules": sorted(sys.modules)}))
        """
    )
    assert seen["origin"] == registry.BUILTIN_ORIGIN and seen["discovered"] is False
    loaded = {
        p
        for p in COMPONENT_PACKAGES
        if p in seen["modules"] or any(m.startswith(p + ".") for m in seen["modules"])
    }
    assert loaded == {"procbench.runners.propara"}, sorted(loaded)


def test_names_and_listings_still_discover_everything() -> None:
    seen = _probe(
        """
        import json, sys
        from procbench.runners.runtime import registry
        registry.get("scorer", "propara.leaderboard")
        scorers = registry.names("scorer")
        print(json.dumps({"scorers": scorers, "discovered": registry._loaded, "modules": sorted(sys.modules)}))
        """
    )
    assert seen["discovered"] is True
    assert {"propara.leaderboard", "paged.lexical"} <= set(seen["scorers"]), seen["scorers"]
    assert set(_pyproject_modules()) <= set(seen["modules"])


@pytest.mark.parametrize(
    "stale",
    [
        pytest.param('"procbench.runners.library.filters"', id="the name moved to another module"),
        pytest.param('"procbench.runners.no_such_module"', id="the module is gone"),
    ],
)
def test_a_stale_entry_still_finds_the_component(stale: str) -> None:
    seen = _probe(
        f"""
        import json
        import procbench.runners.runtime._component_index as index
        from procbench.runners.runtime import registry
        index.INDEX = {{**index.INDEX, ("scorer", "propara.leaderboard"): {stale}}}
        comp = registry.get("scorer", "propara.leaderboard")
        print(json.dumps({{"module": comp.fn.__module__, "discovered": registry._loaded}}))
        """
    )
    assert seen == {"module": "procbench.runners.propara.leaderboard", "discovered": True}


def test_an_unknown_name_is_still_reported_with_suggestions() -> None:
    with pytest.raises(registry.UnknownComponent) as caught:
        registry.get("scorer", "propara.leaderbord")
    assert caught.value.suggestions[0] == "propara.leaderboard"


def test_the_index_command_reports_a_stale_index(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "_component_index.py"
    stale.write_text("INDEX: dict[tuple[str, str], str] = {}\n", encoding="utf-8")
    monkeypatch.setattr(registry, "index_path", lambda: stale)
    assert registry._main(["--check-index"]) == 1
    assert registry._main(["--write-index"]) == 0
    assert stale.read_text(encoding="utf-8") == registry.render_index()
    assert registry._main(["--check-index"]) == 0


def test_documentation_and_parameters_are_read_when_asked_as_inspect_reads_them() -> None:
    """A component's doc and a Param's default no longer import ``inspect`` at registration (issue #31):
    each is still what ``inspect`` gives, once asked."""
    import inspect

    components = registry.all_components()
    assert len(components) > 50
    for comp in components:
        assert comp.doc == (inspect.getdoc(comp.fn) or ""), (comp.kind, comp.name)
        assert comp.declared_doc == comp.doc  # read once, then kept
    words = registry.Param("words", list[str])
    assert words.default is inspect.Parameter.empty and words.required
    assert not registry.Param("dedup", bool, False).required
    assert not registry.Param("nothing", int, None).required
