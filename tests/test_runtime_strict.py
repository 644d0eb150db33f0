"""Run-time strictness: gold data that does not fit the spec is an error naming the file, line and item.

Before, a match block over a string field scored a string's characters as answers (0.976 where the
true exact match is 0.0), a missing field read as an empty list and a missing label path as
"unknown".  These tests build the declarative reader and the match scorer directly over small files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import MAX_DATA_PROBLEMS, DataProblem, GoldDataError, GoldSet
from procbench.runners.runtime.contracts import check_gold_against_contract
from procbench.runners.library.generic import MatchScorer, MatchStage
from procbench.runners.library.matching import BestMatch, PairScorer
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.library.similarity import Exact
from procbench.runners.runtime.tables import AnswerLabel, ItemLabel, TableReader, TableSource
from procbench.runners.library.text import Pipeline

GOLD = "gold/{split}.jsonl"
META = "meta/{split}.jsonl"
STR_LIST = FieldType.parse("list(str)")


def _write(root: Path, relative: str, records: list[object]) -> None:
    path = root / relative.format(split="dev")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _reader(
    *,
    typed: FieldType | None = None,
    labels: tuple[ItemLabel, ...] = (),
    answer_labels: tuple[AnswerLabel, ...] = (),
    meta: TableSource | None = None,
) -> TableReader:
    sources = (TableSource("gold", "jsonl", GOLD),) + ((meta,) if meta else ())
    return TableReader(
        sources=sources,
        id_path=("gold", "id"),
        fields=(("answers", ("gold", "answers"), typed),),
        labels=labels,
        answer_labels=answer_labels,
    )


def _exact() -> MatchScorer:
    plain = Pipeline.of([], [])
    return MatchScorer(
        (
            MatchStage(
                "answers",
                "answers",
                (),
                PairScorer(Exact(), plain, plain),
                BestMatch(),
                ("exact_p", "exact_r", "exact_f1"),
            ),
        )
    )


def _raises(call: object) -> GoldDataError:
    with pytest.raises(GoldDataError) as info:
        call()  # type: ignore[operator]
    return info.value


@pytest.mark.parametrize(
    ("value", "shown"), [("pan was hot", "a string ('pan was hot')"), (3, "a number (3)")]
)
def test_a_match_block_over_a_non_list_gold_field_names_the_item_and_line(
    tmp_path: Path, value: object, shown: str
) -> None:
    _write(tmp_path, GOLD, [{"id": "a", "answers": ["x"]}, {"id": "b", "answers": value}])
    gold = _reader()(tmp_path, "dev")  # untyped: the reader checks presence only
    error = _raises(
        lambda: _exact()(gold, {"a": {"answers": ["x"]}, "b": {"answers": ["pan was hot"]}})
    )
    assert [p.render() for p in error.problems] == [
        f"gold/dev.jsonl:2: item 'b': gold field 'answers' must be list(str) for a match block, got {shown}"
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("pan was hot", "a string ('pan was hot')"),
        (3, "a number (3)"),
        (["ok", 7], "a list whose element 2 is a number (7)"),
        (None, "null"),
    ],
)
def test_a_typed_field_is_checked_when_read(tmp_path: Path, value: object, shown: str) -> None:
    _write(tmp_path, GOLD, [{"id": "a", "answers": ["x"]}, {"id": "b", "answers": value}])
    error = _raises(lambda: _reader(typed=STR_LIST)(tmp_path, "dev"))
    assert [p.render() for p in error.problems] == [
        f"gold/dev.jsonl:2: item 'b': field 'answers' <- gold.answers must be list(str), got {shown}"
    ]
    assert error.render().startswith("1 problem in the gold data of split 'dev'\n")


def test_a_missing_field_is_an_error_unless_optional(tmp_path: Path) -> None:
    _write(tmp_path, GOLD, [{"id": "a", "answers": ["x"]}, {"id": "b"}])
    for typed in (None, STR_LIST):
        error = _raises(lambda: _reader(typed=typed)(tmp_path, "dev"))
        assert [p.render() for p in error.problems] == [
            "gold/dev.jsonl:2: item 'b': field 'answers' <- gold.answers is missing"
        ]
    gold = _reader(typed=FieldType.parse("optional(list(str))"))(tmp_path, "dev")
    assert gold.items["b"] == {"answers": None}


def test_a_gold_set_without_the_matched_field_is_an_error_and_a_missing_prediction_record_is_empty() -> (
    None
):
    gold = GoldSet(
        items={"a": {"answers": ["x"]}, "b": {"answer": ["x"]}}, origins={"b": "g.jsonl:7"}
    )
    error = _raises(lambda: _exact()(gold, {}))
    assert [(p.file, p.line, p.item_id) for p in error.problems] == [("g.jsonl", 7, "b")]
    scored = _exact()(GoldSet(items={"a": {"answers": ["x"]}}), {})
    assert (scored[0].values["exact_r"], scored[0].values["exact_f1"]) == (
        0.0,
        0.0,
    )  # scored as no answers


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"answer": ["x"]}, "item 'a': missing"),
        ({"answers": "x"}, "item 'a': a string ('x')"),
        ({}, "item 'a': missing"),
    ],
)
def test_a_prediction_record_without_a_list_of_strings_is_an_error(
    record: dict[str, object], why: str
) -> None:
    with pytest.raises(
        ValueError, match="prediction field 'answers' must be list\\(str\\)"
    ) as info:
        _exact()(GoldSet(items={"a": {"answers": ["x"]}}), {"a": record})
    assert why in str(info.value)


@given(
    st.one_of(
        st.text(),
        st.integers(),
        st.none(),
        st.dictionaries(st.text(), st.text()),
        st.lists(st.one_of(st.integers(), st.none()), min_size=1),
    )
)
def test_a_gold_value_that_is_not_a_list_of_strings_never_scores(value: object) -> None:
    with pytest.raises(GoldDataError):
        _exact()(GoldSet(items={"a": {"answers": value}}), {"a": {"answers": ["x"]}})


@given(st.lists(st.text(max_size=5), max_size=4), st.lists(st.text(max_size=5), max_size=4))
def test_lists_of_strings_score_within_bounds(gold: list[str], predicted: list[str]) -> None:
    (item,) = _exact()(GoldSet(items={"a": {"answers": gold}}), {"a": {"answers": predicted}})
    assert all(0.0 <= v <= 1.0 for v in item.values.values())


def _topic_reader(optional: bool = False) -> TableReader:
    mapping = {"Health": "unseen", "Helth": "typo"}
    return _reader(
        meta=TableSource("meta", "jsonl", META, key="id"),
        labels=(
            ItemLabel("domain", ("meta", "topic"), mapping, "seen", optional=optional),
            ItemLabel("topic", ("meta", "topic"), optional=optional),
        ),
    )


def test_a_missing_map_path_is_an_error_and_unmatched_keys_are_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        GOLD,
        [{"id": "a", "answers": []}, {"id": "b", "answers": []}, {"id": "c", "answers": []}],
    )
    _write(
        tmp_path,
        META,
        [
            {"id": "a", "topic": "Health"},
            {"id": "b", "topik": "Food"},
            {"id": "c", "topic": "Food"},
        ],
    )
    error = _raises(lambda: _topic_reader()(tmp_path, "dev"))
    assert [p.render() for p in error.problems] == [
        "meta/dev.jsonl:2: item 'b': label 'domain' <- meta.topic is missing",
        "meta/dev.jsonl:2: item 'b': label 'topic' <- meta.topic is missing",
    ]
    gold = _topic_reader(optional=True)(tmp_path, "dev")
    assert gold.labels == {
        "a": {"domain": "unseen", "topic": "Health"},
        "b": {"domain": "seen", "topic": "unknown"},
        "c": {"domain": "seen", "topic": "Food"},
    }
    assert gold.unmatched_map_keys == {"domain": ("Helth",)}


def test_a_label_that_is_an_object_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, GOLD, [{"id": "a", "answers": []}])
    _write(tmp_path, META, [{"id": "a", "topic": {"name": "Health"}}])
    error = _raises(lambda: _topic_reader()(tmp_path, "dev"))
    assert (
        "label 'domain' <- meta.topic must be a text or a number, got an object" in error.render()
    )


def test_a_join_key_without_a_row_is_an_error_unless_the_source_is_optional(tmp_path: Path) -> None:
    _write(tmp_path, GOLD, [{"id": "a", "answers": []}, {"id": "b", "answers": []}])
    _write(tmp_path, META, [{"id": "a", "topic": "Food"}])
    error = _raises(lambda: _topic_reader()(tmp_path, "dev"))
    # one problem for the missing row, not one more per label drawn from it
    assert [p.render() for p in error.problems] == [
        "gold/dev.jsonl:2: item 'b': source 'meta' (meta/dev.jsonl) has no row with id = 'b'"
    ]
    reader = _reader(
        meta=TableSource("meta", "jsonl", META, key="id", optional=True),
        labels=(ItemLabel("topic", ("meta", "topic"), optional=True),),
    )
    assert reader(tmp_path, "dev").labels == {"a": {"topic": "Food"}, "b": {"topic": "unknown"}}
    strict_label = _reader(
        meta=TableSource("meta", "jsonl", META, key="id", optional=True),
        labels=(ItemLabel("topic", ("meta", "topic")),),
    )
    error = _raises(lambda: strict_label(tmp_path, "dev"))
    assert [p.render() for p in error.problems] == [
        "gold/dev.jsonl:2: item 'b': label 'topic' <- meta.topic is missing: source 'meta' has no row for this item"
    ]


def _modality(tmp_path: Path, entries: list[object]) -> GoldSet:
    _write(tmp_path, GOLD, [{"id": "a", "answers": ["pan hot", "rack out"]}])
    _write(tmp_path, META, [{"id": "a", "answers_metadata": entries}])
    rule = AnswerLabel("modality", "answers", ("meta", "answers_metadata"), "answer", "modality")
    return _reader(meta=TableSource("meta", "jsonl", META, key="id"), answer_labels=(rule,))(
        tmp_path, "dev"
    )


def test_answer_label_entries_need_their_text_and_label_keys(tmp_path: Path) -> None:
    good = _modality(
        tmp_path,
        [
            {"answer": "pan hot", "modality": "with_image"},
            {"answer": "rack out", "modality": "without_image"},
        ],
    )
    assert good.answer_views["modality"]["with_image"]["a"]["answers"] == ["pan hot"]
    error = _raises(
        lambda: _modality(
            tmp_path,
            [
                {"answer": "pan hot", "modality": "with_image"},
                {"text": "rack out", "modality": "without_image"},
            ],
        )
    )
    assert [p.render() for p in error.problems] == [
        "meta/dev.jsonl:1: item 'a': answer_label 'modality': entry 2 of meta.answers_metadata has no 'answer'"
    ]
    error = _raises(lambda: _modality(tmp_path, [{"answer": "pan hot"}]))
    assert "entry 1 of meta.answers_metadata has no 'modality'" in error.render()
    error = _raises(lambda: _modality(tmp_path, "pan hot"))  # type: ignore[arg-type]
    assert (
        "items <- meta.answers_metadata must be a list of objects, got a string ('pan hot')"
        in error.render()
    )
    assert _modality(tmp_path, {}).answer_views["modality"] == {}  # type: ignore[arg-type]  # OpenPI's {} for no answers


def test_origins_name_the_line_of_each_item_and_the_later_duplicate_wins(tmp_path: Path) -> None:
    path = tmp_path / "gold" / "dev.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        '{"id": "a", "answers": []}\n\n{"id": "b", "answers": ["x"]}\n{"id": "a", "answers": ["y"]}\n'
    )
    gold = _reader(typed=STR_LIST)(tmp_path, "dev")
    assert list(gold.items) == ["a", "b"] and gold.items["a"] == {"answers": ["y"]}
    assert gold.origins == {"a": "gold/dev.jsonl:4", "b": "gold/dev.jsonl:3"}
    assert DataProblem.at(gold.origins["b"], "b", "m").render() == "gold/dev.jsonl:3: item 'b': m"


def test_a_record_without_an_id_is_reported_at_its_line(tmp_path: Path) -> None:
    _write(
        tmp_path,
        GOLD,
        [{"id": "a", "answers": []}, {"ident": "b", "answers": []}, {"id": ["c"], "answers": []}],
    )
    error = _raises(lambda: _reader()(tmp_path, "dev"))
    assert [p.render() for p in error.problems] == [
        "gold/dev.jsonl:2: record has no id at gold.id",
        "gold/dev.jsonl:3: record has an id that is a list, not a text or an integer at gold.id",
    ]


def test_problems_are_capped_and_the_rest_counted(tmp_path: Path) -> None:
    n = MAX_DATA_PROBLEMS + 7
    _write(tmp_path, GOLD, [{"id": str(i), "answers": "text"} for i in range(n)])
    error = _raises(lambda: _reader(typed=STR_LIST)(tmp_path, "dev"))
    assert len(error.problems) == MAX_DATA_PROBLEMS and error.more == 7
    lines = error.render().splitlines()
    assert (
        lines[0] == f"{n} problems in the gold data of split 'dev'"
        and lines[-1] == "  ... and 7 more"
    )
    assert lines[1].startswith("gold/dev.jsonl:1: item '0':", 2)


def test_a_reader_component_is_checked_against_its_contract() -> None:
    from procbench.runners.paradise.data import read_choices

    gold = read_choices(SAMPLE_DATA_ROOT, "test", task="tip")
    fields = {"goal": FieldType.parse("str"), "endings": STR_LIST, "label": FieldType.parse("int")}
    check_gold_against_contract(
        gold, fields, ["explicitness", "similarity"], "reader paradise.choices"
    )  # tuples fit list(str)
    check_gold_against_contract(
        read_choices(SAMPLE_DATA_ROOT, "dev", task="tip"),
        fields,
        ["explicitness"],
        "reader paradise.choices",
    )  # not given on dev
    error = _raises(
        lambda: check_gold_against_contract(
            gold,
            {"label": FieldType.parse("str"), "tip": FieldType.parse("str")},
            [],
            "reader paradise.choices",
        )
    )
    first = error.problems[0].render()
    assert (
        first
        == "item '0': field 'label' must be str (declared by reader paradise.choices), got a number (2)"
    )
    assert "field 'tip' (str, declared by reader paradise.choices) is missing" in error.render()
    labels = {i: dict(v) for i, v in gold.labels.items()}
    del labels["3"]["similarity"]
    partial = GoldSet(items=gold.items, labels=labels, origins={"3": "tip_test.csv:5"})
    error = _raises(
        lambda: check_gold_against_contract(
            partial,
            {},
            {"similarity": (), "explicitness": ("implicit",)},
            "reader paradise.choices",
        )
    )
    rendered = [p.render() for p in error.problems]
    assert (
        "tip_test.csv:5: item '3': label 'similarity' (declared by reader paradise.choices) is missing; 7 other items carry it"
        in rendered
    )
    assert any(
        "label 'explicitness' = 'explicit (>0.75)' is not one of 'implicit'" in r for r in rendered
    )


def test_openpi_sample_data_reads_through_the_shipped_spec() -> None:
    from procbench.api import load_task

    _, runner = load_task("openpi")
    gold, _ = runner.gold(SAMPLE_DATA_ROOT, "dev")
    first = next(iter(gold.items))
    assert gold.items[first]["answers"] and all(
        isinstance(a, str) for a in gold.items[first]["answers"]
    )
    assert gold.origins[first] == "openpi/data/gold/dev/id_answers.jsonl:1"
    assert set(gold.answer_views["modality"]) <= {"with_image", "without_image"}
