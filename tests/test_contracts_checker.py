"""procbench.runners.runtime.contracts.checker: the compiled predicate says what FieldType.accepts says (issue #31).

The match stages check every answer list through ``checker`` (compiled once per column) instead of
``FieldType.accepts`` (a method call per member); the oracle is ``accepts`` itself on generated types
and values, records as dicts and as objects with attributes among them.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.runners.runtime.contracts import checker
from procbench.runners.runtime.predictions import FieldType

NAMES = ("step", "text", "before", "after")

scalars = st.sampled_from(["str", "int", "float", "bool", "any"]).map(FieldType)


def _extend(inner: st.SearchStrategy[FieldType]) -> st.SearchStrategy[FieldType]:
    collection = st.tuples(st.sampled_from(["list", "set", "ordering", "optional"]), inner).map(
        lambda kind_item: FieldType(kind_item[0], kind_item[1])
    )
    record = st.lists(
        st.tuples(st.sampled_from(NAMES), inner), min_size=1, max_size=3, unique_by=lambda m: m[0]
    ).map(lambda members: FieldType("record", values=tuple(members)))
    return collection | record


types = st.recursive(scalars | st.just(FieldType("enum", values=("a", "b"))), _extend, max_leaves=6)

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, width=16)
    | st.sampled_from(["a", "b", "", "x"])
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    members = st.dictionaries(st.sampled_from(NAMES), inner, max_size=4)
    return (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | members
        | members.map(lambda m: SimpleNamespace(**m))
    )


values = st.recursive(leaves, _containers, max_leaves=10)


@settings(max_examples=400)
@given(types, values)
def test_the_compiled_check_agrees_with_accepts(ftype: FieldType, value: Any) -> None:
    assert checker(ftype)(value) == ftype.accepts(value)


@settings(max_examples=200)
@given(types, st.data())
def test_it_agrees_on_lists_of_records_as_the_match_stages_read_them(
    ftype: FieldType, data: st.DataObject
) -> None:
    """Lists whose members are mostly of the right shape, where a wrong member is easy to miss."""
    listed = FieldType(
        "list", FieldType("record", values=(("step", FieldType("int")), ("text", ftype)))
    )
    members = data.draw(
        st.lists(
            st.builds(
                lambda step, text: {"step": step, "text": text},
                st.integers(0, 3) | st.booleans(),
                values,
            ),
            max_size=4,
        )
    )
    as_objects = [SimpleNamespace(**m) for m in members]
    for value in (members, as_objects):
        assert checker(listed)(value) == listed.accepts(value)
