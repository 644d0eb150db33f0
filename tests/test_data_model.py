"""The data model (issue #15): explode one record into many items, JSON object keys as ids, quoted path segments.

Each test writes a small spec and its data under tmp_path, so the expected items are read off the
data written here, not off the reader.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.dsl import SpecError, check_file, compile_spec
from procbench.dsl import syntax as s
from procbench.dsl.datacheck import check_against_data
from procbench.dsl.parser import parse
from procbench.dsl.printer import format_file
from procbench.runners.runtime._types import GoldDataError

FIELDS = """question: str = step.text
      answer: enum(yes, no) = step.answer
      title: str = proc.title"""


def _spec(
    tmp_path: Path,
    *,
    source: str = 'source proc { format = "jsonl"  path = "guide/{split}.jsonl" }',
    id_: str = "proc.id",
    explode: str = "explode step { items = proc.questions  id = index }",
    fields: str = FIELDS,
    labels: str = "",
) -> Path:
    text = f"""task guide {{
  title   = "Guide"
  version = "1.0"
  primary = correct

  data {{
    splits = [dev]
    {source}
    id = {id_}
    {explode}
    fields {{
      {fields}
    }}
    {labels}
  }}

  predictions {{
    format = "jsonl"
    schema {{ id = str  answer = str }}
  }}

  score {{ scorer = field_match(gold_field = answer, prediction_field = answer)  aggregate = mean() }}
  metric correct {{ display = "Correct" }}
}}
"""
    path = tmp_path / "guide.spec"
    path.write_text(text)
    return path


def _jsonl(tmp_path: Path, records: list[dict], name: str = "guide/dev.jsonl") -> None:
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(r) + "\n" for r in records))


def _gold(spec_path: Path, data_root: Path):  # type: ignore[no-untyped-def]
    spec = check_file(spec_path).spec
    gold, _ = compile_spec(spec).gold(data_root, "dev")
    return gold


def _check_error(spec_path: Path) -> s.Span:
    with pytest.raises(SpecError) as caught:
        check_file(spec_path)
    (error,) = caught.value.diagnostics
    return error


TEA = {
    "id": "p1",
    "title": "Tea",
    "questions": [
        {"text": "boil?", "answer": "yes", "kind": "a"},
        {"text": "milk?", "answer": "no", "kind": "b"},
    ],
}
EGGS = {
    "id": "p2",
    "title": "Eggs",
    "questions": [{"text": "crack?", "answer": "yes", "kind": "a"}],
}


# --- explode ------------------------------------------------------------------------------------


def test_explode_a_list_gives_one_item_per_element_with_composed_ids_in_file_order(
    tmp_path: Path,
) -> None:
    _jsonl(tmp_path, [TEA, EGGS])
    gold = _gold(_spec(tmp_path, labels="labels { kind = step.kind  dish = proc.title }"), tmp_path)
    assert list(gold.items) == ["p1/0", "p1/1", "p2/0"]
    assert gold.items["p1/1"] == {"question": "milk?", "answer": "no", "title": "Tea"}
    assert gold.labels["p1/1"] == {"kind": "b", "dish": "Tea"}
    assert gold.origins["p2/0"] == "guide/dev.jsonl:2"  # the parent's line


def test_explode_a_mapping_by_key_with_a_separator(tmp_path: Path) -> None:
    _jsonl(
        tmp_path,
        [
            {
                "id": "p1",
                "title": "Tea",
                "questions": {
                    "q7": {"text": "boil?", "answer": "yes"},
                    "q3": {"text": "milk?", "answer": "no"},
                },
            }
        ],
    )
    gold = _gold(
        _spec(
            tmp_path, explode='explode step { items = proc.questions  id = key  separator = "::" }'
        ),
        tmp_path,
    )
    assert list(gold.items) == ["p1::q7", "p1::q3"]  # the mapping's order, not sorted
    assert gold.items["p1::q3"]["question"] == "milk?"


def test_explode_ids_from_a_field_of_each_element_and_scalar_elements(tmp_path: Path) -> None:
    _jsonl(
        tmp_path,
        [
            {
                "id": "p1",
                "title": "Tea",
                "questions": [{"qid": 12, "text": "boil?", "answer": "yes"}],
            }
        ],
    )
    gold = _gold(
        _spec(tmp_path, explode="explode step { items = proc.questions  id = step.qid }"), tmp_path
    )
    assert list(gold.items) == ["p1/12"]
    _jsonl(tmp_path, [{"id": "p1", "title": "Tea", "words": ["yes", "no"]}])
    scalar = _spec(
        tmp_path,
        explode="explode step { items = proc.words  id = step }",
        fields="answer: enum(yes, no) = step  title: str = proc.title",
    )
    gold = _gold(scalar, tmp_path)
    assert gold.items == {
        "p1/yes": {"answer": "yes", "title": "Tea"},
        "p1/no": {"answer": "no", "title": "Tea"},
    }


def test_explode_joins_a_secondary_source_on_the_parent_id(tmp_path: Path) -> None:
    _jsonl(tmp_path, [TEA, EGGS])
    _jsonl(
        tmp_path,
        [{"id": "p2", "cuisine": "any"}, {"id": "p1", "cuisine": "uk"}],
        "guide/meta.jsonl",
    )
    source = 'source proc { format = "jsonl"  path = "guide/{split}.jsonl" }\n    source meta { format = "jsonl"  path = "guide/meta.jsonl"  key = id }'
    gold = _gold(
        _spec(tmp_path, source=source, fields=FIELDS + "\n      cuisine: str = meta.cuisine"),
        tmp_path,
    )
    assert [gold.items[i]["cuisine"] for i in gold.items] == ["uk", "uk", "any"]


def test_per_answer_labels_read_the_element(tmp_path: Path) -> None:
    answers = [{"answer": "kettle", "modality": "image"}, {"answer": "water", "modality": "text"}]
    _jsonl(
        tmp_path,
        [
            {
                "id": "p1",
                "title": "Tea",
                "questions": [
                    {"gold": ["kettle", "water"], "meta": answers},
                    {"gold": [], "meta": []},
                ],
            }
        ],
    )
    fields = "answers: list(str) = step.gold  answer: str = proc.title"
    path = _spec(
        tmp_path,
        fields=fields,
        labels="answer_label modality { field = answers  items = step.meta  text = answer  label = modality }",
    )
    gold = _gold(path, tmp_path)
    assert gold.answer_views["modality"]["image"] == {
        "p1/0": {"answers": ["kettle"], "answer": "Tea"},
        "p1/1": {"answers": [], "answer": "Tea"},
    }


@pytest.mark.parametrize(
    ("parent", "explode", "expected"),
    [
        (
            {"id": "p1", "title": "Tea"},
            "explode step { items = proc.questions }",
            "explode 'step': items <- proc.questions is missing, not a list or a mapping",
        ),
        (
            {"id": "p1", "title": "Tea", "questions": "boil?"},
            "explode step { items = proc.questions }",
            "items <- proc.questions is a string ('boil?'), not a list or a mapping",
        ),
        (
            TEA,
            "explode step { items = proc.questions  id = key }",
            "id = key needs a mapping, but items <- proc.questions is a list",
        ),
        (
            TEA,
            "explode step { items = proc.questions  id = step.qid }",
            "element proc.questions[0] has no id at step.qid",
        ),
        (
            {
                "id": "p1",
                "title": "Tea",
                "questions": [
                    {"qid": "a", "text": "x", "answer": "yes"},
                    {"qid": "a", "text": "y", "answer": "no"},
                ],
            },
            "explode step { items = proc.questions  id = step.qid }",
            "element proc.questions[1] has the id 'a' of element proc.questions[0]",
        ),
    ],
)
def test_explode_data_errors_name_file_line_and_parent(
    tmp_path: Path, parent: dict, explode: str, expected: str
) -> None:
    _jsonl(tmp_path, [EGGS, parent])
    with pytest.raises(GoldDataError) as caught:
        _gold(_spec(tmp_path, explode=explode), tmp_path)
    rendered = [p.render() for p in caught.value.problems]
    assert any(
        r.startswith("guide/dev.jsonl:2: item 'p1': ") and expected in r for r in rendered
    ), rendered


def test_a_typed_field_error_of_an_element_names_the_parent_line_and_element(
    tmp_path: Path,
) -> None:
    bad = {
        "id": "p3",
        "title": "Rice",
        "questions": [{"text": "rinse?", "answer": "yes"}, {"text": "salt?", "answer": "maybe"}],
    }
    _jsonl(tmp_path, [TEA, EGGS, bad])
    with pytest.raises(GoldDataError) as caught:
        _gold(_spec(tmp_path), tmp_path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.item_id) == ("guide/dev.jsonl", 3, "p3/1")
    assert (
        "field 'answer' <- step.answer must be enum" in problem.message
        and "(element proc.questions[1])" in problem.message
    )


def test_check_data_reports_explode_problems_at_the_explode_statement(tmp_path: Path) -> None:
    _jsonl(
        tmp_path,
        [
            TEA,
            {"id": "p2", "title": "Eggs", "questions": [{"text": "crack?", "answer": "maybe"}]},
            {"id": "p3", "title": "Rice"},
        ],
    )
    path = _spec(tmp_path)
    spec = check_file(path).spec
    diagnostics, _ = check_against_data(spec, compile_spec(spec), tmp_path)
    lines = path.read_text().splitlines()
    by_line = {lines[d.span.line - 1].strip(): d.message for d in diagnostics}
    assert set(by_line) == {
        "explode step { items = proc.questions  id = index }",
        "answer: enum(yes, no) = step.answer",
    }
    assert "guide/dev.jsonl:3" in by_line["explode step { items = proc.questions  id = index }"]
    assert "guide/dev.jsonl:2" in by_line["answer: enum(yes, no) = step.answer"]


def test_a_misspelt_explode_name_is_one_error_at_its_place(tmp_path: Path) -> None:
    path = _spec(
        tmp_path, fields="question: str = stpe.text\n      answer: enum(yes, no) = stpe.answer"
    )
    error = _check_error(path)
    line = path.read_text().splitlines()[error.span.line - 1]
    assert line[error.span.column - 1 :].startswith("stpe.text")  # the first use, file:line:col
    assert (
        "unknown source or explode name" in error.message
        and "'stpe'" in error.message
        and "'step'" in error.hint
    )
    assert error.render().startswith(f"{path}:{error.span.line}:{error.span.column}: error")


@pytest.mark.parametrize(
    ("explode", "fields", "message"),
    [
        (
            "explode proc { items = proc.questions }",
            FIELDS,
            "explode 'proc' has the name of a source",
        ),
        (
            "explode step { items = proc.questions  id = proc.qid }",
            FIELDS,
            "id is index, key or a path into the element (step.<key>)",
        ),
        ("explode step { items = prc.questions }", FIELDS, "unknown source in explode.items 'prc'"),
        (
            "explode step { items = proc.questions  id = 3 }",
            FIELDS,
            "explode.id is index, key or a path into the element",
        ),
    ],
)
def test_explode_mistakes_are_caught_before_anything_runs(
    tmp_path: Path, explode: str, fields: str, message: str
) -> None:
    error = _check_error(_spec(tmp_path, explode=explode, fields=fields))
    assert message in error.message


# --- JSON object keys as ids --------------------------------------------------------------------


def _keyed_spec(tmp_path: Path) -> Path:
    """A spec whose ids are the keys of one JSON object of questions (no explode)."""
    return _spec(
        tmp_path,
        source='source gold { format = "json"  path = "guide/{split}.json" }',
        id_="key(gold)",
        explode="",
        fields="answer: enum(yes, no) = gold.answer",
    )


def test_key_ids_from_a_json_object(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide/dev.json").write_text(
        json.dumps(
            {"b7": {"text": "boil?", "answer": "yes"}, "a2": {"text": "milk?", "answer": "no"}}
        )
    )
    path = _keyed_spec(tmp_path)
    gold = _gold(path, tmp_path)
    assert gold.items == {"b7": {"answer": "yes"}, "a2": {"answer": "no"}}
    assert gold.origins["a2"] == "guide/dev.json#2"


def test_key_ids_with_explode(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide/dev.json").write_text(
        json.dumps({"tea": {"title": "Tea", "questions": [{"text": "boil?", "answer": "yes"}]}})
    )
    source = 'source proc { format = "json"  path = "guide/{split}.json" }'
    gold = _gold(_spec(tmp_path, source=source, id_="key(proc)"), tmp_path)
    assert list(gold.items) == ["tea/0"]


def test_key_ids_need_a_json_object(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide/dev.json").write_text(json.dumps([{"text": "boil?", "answer": "yes"}]))
    path = _keyed_spec(tmp_path)
    with pytest.raises(
        GoldDataError, match=r"guide/dev.json: id = key\(gold\) needs the file to be a JSON object"
    ):
        _gold(path, tmp_path)
    error = _check_error(_spec(tmp_path, id_="key(proc)"))  # a jsonl source has no keys
    assert "key(proc) needs a json source" in error.message


# --- quoted path segments -----------------------------------------------------------------------


def test_quoted_segments_read_keys_that_are_not_names(tmp_path: Path) -> None:
    _jsonl(
        tmp_path,
        [
            {
                "id": "p1",
                "title": "Tea",
                "questions": [
                    {"text": "boil?", "answer": "yes", "ordered?": True, "the kind": {"x.y": "a"}}
                ],
            }
        ],
    )
    fields = FIELDS + '\n      ordered: bool = step."ordered?"'
    gold = _gold(
        _spec(tmp_path, fields=fields, labels='labels { kind = step."the kind"."x.y" }'), tmp_path
    )
    assert gold.items["p1/0"]["ordered"] is True and gold.labels["p1/0"] == {"kind": "a"}


def test_a_quoted_first_segment_is_a_syntax_error() -> None:
    with pytest.raises(SpecError) as caught:
        parse('task t { x = "gold".answers }')
    (error,) = caught.value.diagnostics
    assert (
        (error.span.line, error.span.column) == (1, 20)
        and "unexpected '.'" in error.message
        and "a path starts with a bare name" in error.hint
    )


def _shape(node: object) -> object:
    if dataclasses.is_dataclass(node):
        return (
            type(node).__name__,
            *(
                (f.name, _shape(getattr(node, f.name)))
                for f in dataclasses.fields(node)
                if f.name not in ("span", "source", "path", "label_spans")
            ),
        )
    if isinstance(node, tuple):
        return tuple(_shape(x) for x in node)
    return node


segments = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,6}", fullmatch=True),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8),
)


@given(
    st.lists(segments, min_size=1, max_size=4),
    st.sampled_from(["x = {}", "x: bool = {}", "x = f({})", "x = [{}, 1]", "x = {{ k = {} }}"]),
)
def test_quoted_segments_survive_parse_print_parse(parts: list[str], statement: str) -> None:
    ref = "step." + ".".join(json.dumps(p, ensure_ascii=False) for p in parts)
    source = "task t {\n  data { " + statement.format(ref) + " }\n}\n"
    first = parse(source)
    printed = format_file(first)
    again = parse(printed)
    assert _shape(again) == _shape(first)
    assert format_file(again) == printed
    bare = re.compile(
        r"[A-Za-z_][A-Za-z0-9_\-]*"
    )  # what the grammar reads back as a name: quoted only otherwise
    assert (
        "step."
        + ".".join(p if bare.fullmatch(p) else json.dumps(p, ensure_ascii=False) for p in parts)
        in printed
    )
