"""The PAGED components are registered under their names with the parameters a spec may set."""

from __future__ import annotations

from procbench.runners.runtime.registry import get


def test_registered_components_and_parameters() -> None:
    expected = {
        ("reader", "paged.graphs"): {},
        ("predictions", "paged.graph_text"): {},
        ("scorer", "paged.lexical"): {"prompt_spellings": False},
        ("aggregator", "paged.lexical"): {"round_digits": 4, "strict_extras": True},
    }
    for (kind, name), params in expected.items():
        component = get(kind, name)
        assert {p.name: p.default for p in component.params} == params, (kind, name)
        assert component.doc
