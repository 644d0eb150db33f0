"""The declared collection types ordering(T) and set(T): parsed, printed, serialised, read and described like list(T).

Each is a JSON list (a CSV cell: its JSON text); what tells them apart is what a metric makes of them, so
one kind never fits where another is wanted.  Hypothesis generates types and values; the spellings and
serialised forms of the existing types stay what they were (shipped fingerprints include them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl.parser import parse
from procbench.dsl.plan import _field_type, type_node
from procbench.dsl.printer import format_file
from procbench.runners.runtime._types import GoldSet, InvalidPredictions
from procbench.runners.runtime.cells import BadCell, cast_cell
from procbench.runners.runtime.contracts import PYTHON_COLLECTIONS, checker, mismatch
from procbench.runners.metrics._ordering import permutation_problem
from procbench.runners.runtime.predictions import FieldType, SchemaReader

SCALARS = ["str", "int", "float", "bool", "any"]


def types(depth: int = 2) -> st.SearchStrategy[str]:
    """Type spellings, collections and optionals nested up to ``depth``."""
    scalar = st.sampled_from(SCALARS)
    if depth == 0:
        return scalar
    inner = types(depth - 1)
    return st.one_of(
        scalar,
        st.builds(
            lambda kind, t: f"{kind}({t})",
            st.sampled_from(["list", "ordering", "set", "optional"]),
            inner,
        ),
    )


@settings(max_examples=200, deadline=None)
@given(types())
def test_every_spelling_parses_prints_and_serialises_back_to_itself(spelled: str) -> None:
    ftype = FieldType.parse(spelled)
    assert ftype.spelling() == spelled
    assert FieldType.parse(ftype.spelling()) == ftype
    assert _field_type(type_node(ftype)) == ftype  # a compiled plan holds types as plain data
    assert ftype.fits(ftype)


def test_the_serialised_form_of_existing_types_is_unchanged() -> None:
    # the plan (and so the fingerprint) holds (kind, item, members): a list keeps its kind "list"
    assert type_node(FieldType.parse("list(str)")) == ("list", ("str", None, ()), ())
    assert type_node(FieldType.parse("optional(list(int))")) == (
        "optional",
        ("list", ("int", None, ()), ()),
        (),
    )
    assert type_node(FieldType.parse("ordering(str)")) == ("ordering", ("str", None, ()), ())
    assert type_node(FieldType.parse("set(int)")) == ("set", ("int", None, ()), ())


@pytest.mark.parametrize(
    ("have", "wanted", "fits"),
    [
        ("ordering(str)", "ordering(str)", True),
        ("ordering(int)", "ordering(float)", True),  # the element types follow the usual rule
        (
            "ordering(str)",
            "list(str)",
            False,
        ),  # an ordering is no list: the metric must say it takes orderings
        ("list(str)", "ordering(str)", False),
        ("set(str)", "list(str)", False),
        ("list(str)", "set(str)", False),
        ("set(str)", "ordering(str)", False),
        ("ordering(str)", "any", True),
        ("set(str)", "set(any)", True),
        ("enum(a, b)", "str", True),
    ],
)
def test_one_collection_kind_never_stands_for_another(have: str, wanted: str, fits: bool) -> None:
    assert FieldType.parse(have).fits(FieldType.parse(wanted)) is fits


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-5, 5), max_size=6),
    st.sampled_from(["ordering(int)", "set(int)", "list(int)"]),
)
def test_a_json_list_is_each_kind_and_a_cell_reads_as_its_json(
    values: list[int], spelled: str
) -> None:
    ftype = FieldType.parse(spelled)
    assert ftype.accepts(
        values
    )  # repeats too: whether an ordering repeats is the metric's question (an invalid prediction)
    assert not ftype.accepts(tuple(values)) and not ftype.accepts("1, 2")
    assert cast_cell(ftype, json.dumps(values)) == values
    assert checker(ftype, PYTHON_COLLECTIONS)(
        tuple(values)
    )  # reader components build tuples and frozensets
    with pytest.raises(BadCell):
        cast_cell(ftype, "[1, 2")


def test_a_gold_value_of_the_wrong_element_type_is_described() -> None:
    assert (
        mismatch(FieldType.parse("ordering(int)"), [1, "b"])
        == "a list whose element 2 is a string ('b')"
    )


def test_prediction_files_are_read_and_checked_line_by_line(tmp_path: Path) -> None:
    reader = SchemaReader(
        "jsonl",
        "id",
        (("order", FieldType.parse("ordering(str)")), ("tools", FieldType.parse("set(str)"))),
    )
    gold = GoldSet({"a": {}, "b": {}, "c": {}})
    good = tmp_path / "good.jsonl"
    good.write_text(
        '{"id": "a", "order": ["x", "y"], "tools": ["saw", "saw"]}\n{"id": "b", "order": [], "tools": []}\n'
    )
    with pytest.warns(Warning):  # item c has no prediction
        assert reader(good, gold)["a"]["tools"] == ["saw", "saw"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "order": "x y", "tools": []}\n{"id": "b", "order": ["x", 3], "tools": {}}\n'
    )
    with pytest.raises(InvalidPredictions) as caught:
        reader(bad, gold)
    listed = caught.value.render() if hasattr(caught.value, "render") else str(caught.value)
    assert (
        "bad.jsonl:1" in listed
        and "ordering<str>" in listed
        and "bad.jsonl:2" in listed
        and "set<str>" in listed
    )


def test_fmt_keeps_the_collection_types_as_written() -> None:
    source = """task t {
  title   = "t"
  version = "1"
  primary = m

  data {
    splits = [test]

    source rows { format = "jsonl"  path = "t/{split}.jsonl" }

    id     = rows.id

    fields { order: ordering(int) = rows.order  tools: set(str) = rows.tools }
  }

  predictions { format = "jsonl"  schema { id = str  order = ordering(int) } }

  score {
    measure m { metric = kendall_tau()  gold = order  prediction = order }
  }
}
"""
    printed = format_file(parse(source, "t.spec"))
    assert (
        "order: ordering(int) = rows.order" in printed
        and "tools: set(str) = rows.tools" in printed
        and "order = ordering(int)" in printed
    )
    assert format_file(parse(printed, "t.spec")) == printed


def test_the_prediction_schema_describes_orderings_and_sets() -> None:
    from procbench.dsl.checker import check_text
    from procbench.submissions.schema import prediction_schema

    source = """task t {
  title   = "t"
  version = "1"
  primary = m

  data {
    splits = [test]

    source rows { format = "jsonl"  path = "t/{split}.jsonl" }

    id     = rows.id

    fields { tools: set(str) = rows.tools }
  }

  predictions { format = "jsonl"  schema { id = str  ranking = ordering(str) } }

  score {
    measure m { metric = mrr()  gold = tools  prediction = ranking }
  }
}
"""
    schema = prediction_schema(check_text(source, "t.spec").spec)
    ranking = schema["properties"]["ranking"]
    assert (
        ranking["type"] == "array"
        and ranking["items"] == {"type": "string"}
        and ranking["description"].startswith("ordering(str)")
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=8, unique=True),
    st.lists(st.sampled_from("abcdefghij"), max_size=10),
)
def test_an_invalid_ordering_names_what_is_missing_extra_or_repeated(
    gold: list[str], predicted: list[Any]
) -> None:
    why = permutation_problem(gold, predicted)
    if sorted(gold) == sorted(predicted):
        assert why is None
        return
    assert why is not None and why.startswith("not a permutation of the gold's items: ")
    missing = [v for v in gold if v not in predicted]
    extra = [v for v in dict.fromkeys(predicted) if v not in gold]
    repeated = [v for v in dict.fromkeys(predicted) if predicted.count(v) > 1]
    for label, values in (("missing", missing), ("extra", extra), ("repeated", repeated)):
        assert (label in why) == bool(values)
        if values:  # the first three named, in order, and how many more
            shown = ", ".join(repr(v) for v in values[:3])
            assert f"{label} {shown}" in why
            assert (f"and {len(values) - 3} more" in why) == (len(values) > 3)


@pytest.mark.parametrize(
    ("name", "gold_type", "prediction_type", "gold", "outputs"),
    [
        ("kendall_tau", "ordering(str)", "ordering(str)", ["a", "b", "c"], 1),
        ("spearman", "ordering(str)", "ordering(str)", ["a", "b", "c"], 1),
        ("kendall_tau", "list(float)", "list(float)", [1.0, 2.0, 3.0], 1),
        ("exact_order", "ordering(str)", "ordering(str)", ["a", "b", "c"], 1),
        ("precedence", "list(list(str))", "ordering(str)", [["a", "b"]], 2),
        ("mrr", "set(str)", "ordering(str)", ["a"], 1),
        ("ndcg", "set(str)", "ordering(str)", ["a"], 1),
        ("recall_at", "set(str)", "ordering(str)", ["a"], 1),
    ],
)
def test_an_unanswered_item_scores_zero_as_documented(
    name: str, gold_type: str, prediction_type: str, gold: list[Any], outputs: int
) -> None:
    """docs/language.md, "Orderings, sets and rankings": missing = "empty" gives 0 for every output of these metrics."""
    from procbench.runners.runtime import registry

    metric = (
        registry.get("metric", name)
        .build()
        .declared(FieldType.parse(gold_type), FieldType.parse(prediction_type), "mean")
    )
    assert metric.item(gold, None, "mean") == (0.0,) * outputs


def test_a_gold_ordering_that_repeats_an_item_is_an_error_in_the_gold() -> None:
    from procbench.runners.runtime import registry

    ordering = FieldType.parse("ordering(str)")
    for name in ("kendall_tau", "exact_order"):
        metric = registry.get("metric", name).build().declared(ordering, ordering, "mean")
        with pytest.raises(ValueError, match="the gold ordering repeats 'a'"):
            metric.item(["a", "b", "a"], ["a", "b"], "mean")


def test_number_lists_of_another_length_are_invalid_not_a_gold_error() -> None:
    from procbench.runners.runtime import registry

    numbers = FieldType.parse("list(float)")
    tau = registry.get("metric", "kendall_tau").build().declared(numbers, numbers, "mean")
    assert (
        tau.invalid([1.0, 2.0, 3.0], [1.0, 2.0]) == "the prediction has 2 values for 3 gold values"
    )
    assert tau.invalid([1.0, 2.0, 3.0], [3.0, 1.0, 2.0]) is None
