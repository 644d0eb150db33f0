"""Slice value labels and metric definitions (issue #16): the spec says what each value and metric means.

``slice x { ... values { v = "label" } }`` is read into SliceSpec.values, printed canonically by
``fmt``, checked against the values the slice can have, exported in the spec JSON as [[value, label]],
shown by the site as ``label (value)``, and left out of the fingerprint, like every metric's
``description``. Every shipped spec defines every metric and labels its opaque slice values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procbench.dsl import SpecError, check_file
from procbench.dsl.checker import check_text
from procbench.dsl.compiler import spec_digest
from procbench.dsl.parser import parse
from procbench.dsl.printer import format_file
from procbench.leaderboard.model import TaskInfo
from procbench.paths import SPECS_DIR

SHIPPED = sorted(SPECS_DIR.glob("*.spec"))

# A reader component declares the label values (paged.graphs: gateways none | exclusive | inclusive | parallel | mixed),
# so the checker knows which values a slice on it can have.
BASE = """task t {
  title   = "T"
  version = "1"
  primary = action
  data { splits = [dev]  reader = paged.graphs() }
  predictions { format = "jsonl"  reader = paged.graph_text() }
  score {
    scorer = paged.lexical()
    measure action { counts = [bleu_node.Activity]  stats = [p_sum, p_num, r_sum, r_num] }
  }
  metric action { display = "Action F1"%s }
  slice gateways {
    label = gateways
%s  }
}
"""


def _spec(values: str = "", description: str = "") -> str:
    return BASE % (
        f"  description = {json.dumps(description)}" if description else "",
        f"    {values}\n" if values else "",
    )


def _errors(text: str) -> list[tuple[int, int, str, str]]:
    with pytest.raises(SpecError) as caught:
        check_text(text, "t.spec")
    return [(d.span.line, d.span.column, d.message, d.hint) for d in caught.value.diagnostics]


def test_value_labels_are_read_in_order_and_exported_as_pairs() -> None:
    spec = check_text(
        _spec('values { exclusive = "Exclusive (XOR)"  parallel = "Parallel (AND)" }')
    ).spec
    (sl,) = spec.slices
    assert sl.values == (("exclusive", "Exclusive (XOR)"), ("parallel", "Parallel (AND)"))
    exported = json.loads(json.dumps(spec.to_dict()))  # as the store keeps it (spec_json)
    assert exported["slices"][0]["values"] == [
        ["exclusive", "Exclusive (XOR)"],
        ["parallel", "Parallel (AND)"],
    ]
    assert check_text(_spec()).spec.slices[0].values == ()  # labels are optional


def test_a_quoted_value_that_is_not_a_name_can_be_labelled() -> None:
    text = _spec('values { "sim > 0.5" = "Similar to a step" }').replace(
        "label = gateways", "label = gateways"
    )
    tree = parse(text)
    printed = format_file(tree)
    assert '"sim > 0.5" = "Similar to a step"' in printed and format_file(parse(printed)) == printed


def test_fmt_prints_a_values_block_canonically() -> None:
    messy = _spec('values {\nexclusive="Exclusive (XOR)"\n  mixed  =  "Several types" }')
    printed = format_file(parse(messy))
    assert '\n\n    values { exclusive = "Exclusive (XOR)"  mixed = "Several types" }\n' in printed
    assert format_file(parse(printed)) == printed
    many = format_file(
        parse(
            _spec(
                "values { "
                + "  ".join(
                    f'{v} = "{v.title()} gateways in the document"'
                    for v in ("none", "exclusive", "parallel")
                )
                + " }"
            )
        )
    )
    assert (
        '      exclusive = "Exclusive gateways in the document"\n' in many
    )  # too long for one line: one pair per line, '=' aligned


def test_a_label_for_a_value_the_slice_cannot_have_is_an_error_with_the_values_it_can_have() -> (
    None
):
    ((line, column, message, hint),) = _errors(
        _spec('values { exclusiv = "XOR"  parallel = "AND" }')
    )
    assert (line, column) == (14, 14)  # at the misspelt entry, not at the block
    assert (
        message
        == "slice 'gateways' labels the value 'exclusiv', which its label 'gateways' never has"
    )
    assert (
        hint.startswith("did you mean 'exclusive'?")
        and "'none', 'exclusive', 'inclusive', 'parallel', 'mixed'" in hint
    )


def test_a_value_labelled_twice_or_a_label_that_is_not_text_is_an_error_at_its_position() -> None:
    assert [
        (line, column, message)
        for line, column, message, _ in _errors(
            _spec('values { parallel = "AND"  parallel = "again" }')
        )
    ] == [(14, 32, "'parallel' is given twice in this values block")]
    ((line, column, message, hint),) = _errors(_spec("values { parallel = 3 }"))
    assert (line, column, message) == (
        14,
        25,
        "the label of slice value 'parallel' is text in double quotes, got a number",
    )
    assert "values {" in hint


def test_labels_of_a_label_read_from_a_path_are_not_checked_without_data() -> None:
    text = """task t {
  title   = "T"
  version = "1"
  primary = exact_f1
  data {
    splits = [dev]
    source gold { format = "jsonl"  path = "x/{split}.jsonl" }
    id     = gold.id
    fields { answers: list(str) = gold.answers }
    labels { topic = gold.topic  seen = map(gold.topic, { Health = "unseen" }, default = "seen") }
  }
  predictions { format = "jsonl"  id = id  schema { id = str  answers = list(str) } }
  score {
    match exact { gold = answers  prediction = answers  similarity = exact()  matcher = best_match() }
    aggregate = mean()
  }
  metric exact { family = prf }
  slice topic { label = topic  values { anything = "Any value: the data decides" } }
  slice seen { label = seen  values { unseen = "Health"  unsen = "typo" } }
}
"""
    ((line, _, message, hint),) = _errors(
        text
    )  # the map() fixes seen's values; topic's come from the data
    assert line == 19 and "'unsen'" in message and hint.startswith("did you mean 'unseen'?")


def test_value_labels_and_descriptions_leave_the_fingerprint_unchanged() -> None:
    plain = spec_digest(check_text(_spec()).spec)
    labelled = spec_digest(
        check_text(
            _spec(
                'values { none = "No gateway"  mixed = "Several types" }',
                "BLEU-1 of actions, pooled.",
            )
        ).spec
    )
    assert labelled == plain
    other_slice = _spec().replace("label = gateways", "label = constraints")
    assert spec_digest(check_text(other_slice).spec) != plain  # what the slice groups by is scored


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_metric_of_every_shipped_spec_has_a_definition(path: Path) -> None:
    spec = check_file(path).spec
    for metric in spec.metrics:
        text = metric.description.strip()
        assert text and text[0].isupper() and text.endswith("."), (path.name, metric.name)


OPAQUE = {  # slices whose values are codes or bare words: each value the spec's checker knows gets a label
    "pm-llm-benchmark": ("category", "modality"),
    "paged": ("gateways", "constraints"),
    "paradise-tip": ("explicitness", "similarity"),
    "paradise-warning": ("explicitness", "similarity"),
    "openpi": ("domain", "modality"),
}


@pytest.mark.parametrize("task", sorted(OPAQUE))
def test_opaque_slice_values_of_the_shipped_specs_have_labels(task: str) -> None:
    spec = check_file(SPECS_DIR / f"{task}.spec").spec
    for sl in spec.slices:
        if sl.name in OPAQUE[task]:
            assert sl.values and all(
                label.strip() and label != value for value, label in sl.values
            ), (task, sl.name)


def test_the_site_reads_the_labels_from_the_exported_spec() -> None:
    spec = check_file(SPECS_DIR / "pm-llm-benchmark.spec").spec
    row = {
        "task": "pm-llm-benchmark",
        "split": "main",
        "fingerprint": "f",
        "hidden": False,
        "spec_json": json.dumps(spec.to_dict(), default=str),
    }
    info = TaskInfo.from_row(row)
    category = info.slice("category")
    assert (
        category is not None and category.value_label("cat01") == "C1 PCo: process context (cat01)"
    )
    assert category.value_label("cat99") == "cat99"  # a value without a label shows as stored
    assert info.metric("c7").description.startswith(
        "The sum of the scores of the 6 visual interpretation"
    )
