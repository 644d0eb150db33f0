"""The spec language: parsing, checking, errors with positions, and fuzzing for tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.dsl import SpecError, check_file, check_text, parse
from procbench.paths import SPECS_DIR

SHIPPED = sorted(SPECS_DIR.glob("*.spec"))
OPENPI = (SPECS_DIR / "openpi.spec").read_text()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_spec_checks(path: Path) -> None:
    result = check_file(path, search=[SPECS_DIR])
    assert result.spec.name == path.stem
    assert result.spec.primary in [m.name for m in result.spec.metrics]


def test_variant_differs_by_one_parameter() -> None:
    base = check_file(SPECS_DIR / "openpi.spec").spec
    head = check_file(SPECS_DIR / "openpi-head.spec").spec
    gold = "openpi/data/gold/{split}"
    assert dict(base.params) == {"dedup": False, "gold": gold} and dict(head.params) == {
        "dedup": True,
        "gold": gold,
    }
    assert [m.matcher.kwargs for m in base.score.matches] == [(("dedup", False),)] * 3
    assert [m.matcher.kwargs for m in head.score.matches] == [(("dedup", True),)] * 3
    assert base.data == head.data and base.metrics == head.metrics


def _sub(pattern: str, replacement: str, count: int = 0) -> str:
    """OPENPI with a regex substitution that must apply (whitespace in specs is formatting)."""
    import re

    out, n = re.subn(pattern, replacement, OPENPI, count=count)
    assert n, pattern
    return out


def _error(source: str, tmp_path: Path | None = None) -> SpecError:
    with pytest.raises(SpecError) as caught:
        check_text(source, "t.spec", search=[SPECS_DIR])
    return caught.value


def test_unknown_component_gets_did_you_mean() -> None:
    err = _error(_sub(r"coco_rouge_l\(", "coco_rouge_k("))
    d = err.first
    assert d.message == "unknown similarity 'coco_rouge_k'" and "coco_rouge_l" in d.hint
    assert "coco_rouge_l(" in OPENPI.splitlines()[d.span.line - 1]


def test_parameter_type_error_points_at_the_value() -> None:
    err = _error(_sub(r"coco_bleu\(n = 2\)", 'coco_bleu(n = "two")'))
    assert "parameter 'n' of coco_bleu() must be int, got a string" in str(err)


def test_unknown_parameter_reference() -> None:
    err = _error(_sub(r"params\.dedup\)", "params.dedupe)", count=1))
    assert "unknown parameter 'dedupe'" in str(err) and "did you mean 'dedup'?" in str(err)


def test_unknown_field_and_slice_label() -> None:
    err = _error(_sub(r"label(\s+)= domain\n", r"label\1= domian\n"))
    assert "unknown label 'domian'" in str(err) and "did you mean 'domain'?" in str(err)


def test_extends_cycle_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.spec").write_text("task a { extends = b }")
    (tmp_path / "b.spec").write_text("task b { extends = a }")
    with pytest.raises(SpecError, match="extends cycle"):
        check_file(tmp_path / "a.spec")


def test_unused_normaliser_is_a_warning() -> None:
    source = _sub(r"\n  score \{", "\n  normaliser spare { steps = [strip()] }\n  score {", count=1)
    result = check_text(source, "t.spec", search=[SPECS_DIR])
    assert any("normaliser 'spare' is never used" in w.message for w in result.warnings)


def test_template_syntax_checked_at_compile_time() -> None:
    source = _sub(
        r"\n  score \{", '\n  template judge { text = "Grade {{ answer " }\n  score {', count=1
    )
    assert "template 'judge'" in str(_error(source))


def test_error_rendering_has_file_line_column_caret_and_hint() -> None:
    err = _error('task x {\n  title = "t"\n  version = 3\n}\n')
    text = str(err)
    assert "t.spec:3:13: error: task.version is text, got a number" in text
    assert "   3 |   version = 3" in text and "^" in text and "hint:" in text


# --- fuzzing: no input ever produces anything but success or a SpecError ------------------------


def _never_crashes(source: str) -> None:
    try:
        check_text(source, "fuzz.spec", search=[SPECS_DIR])
    except SpecError as exc:
        assert exc.diagnostics and all(d.span.line >= 0 for d in exc.diagnostics)
        str(exc)


@given(
    st.lists(
        st.sampled_from([*'task"{}[]()=,.#\n abc123_-', '"""', "task", "metric", "data"]),
        max_size=60,
    ).map("".join)
)
def test_random_text_never_raises_anything_but_spec_error(source: str) -> None:
    _never_crashes(source)


@given(st.data())
def test_mutated_shipped_specs_never_crash(data: st.DataObject) -> None:
    source = (SPECS_DIR / data.draw(st.sampled_from([p.name for p in SHIPPED]))).read_text()
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(source)))
        op = data.draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if op == "delete":
            j = min(len(source), i + data.draw(st.integers(1, 12)))
            source = source[:i] + source[j:]
        elif op == "insert":
            source = (
                source[:i]
                + data.draw(
                    st.sampled_from(
                        ['"', "{", "}", "=", "(", ")", ",", "[", "x", "1", "\n", ".", "true"]
                    )
                )
                + source[i:]
            )
        else:
            j = min(len(source), i + data.draw(st.integers(1, 40)))
            source = source[:j] + source[i:j] + source[j:]
    _never_crashes(source)


@given(st.text(max_size=60))
def test_parser_alone_never_crashes(source: str) -> None:
    try:
        parse(source)
    except SpecError:
        pass


# --- fmt -----------------------------------------------------------------------------------------


def _shape(node: object) -> object:
    import dataclasses

    if dataclasses.is_dataclass(node):
        return tuple(
            (f.name, _shape(getattr(node, f.name)))
            for f in dataclasses.fields(node)
            if f.name not in ("span", "source", "path", "label_spans")
        )
    if isinstance(node, tuple):
        return tuple(_shape(x) for x in node)
    return node


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_specs_are_canonical(path: Path) -> None:
    from procbench.dsl.parser import parse_file
    from procbench.dsl.printer import format_file

    tree = parse_file(path)
    assert format_file(tree) == tree.source


names = st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True).filter(
    lambda n: n not in ("true", "false")
)
scalars = st.one_of(
    st.text(max_size=12).map(lambda t: ("str", t)),
    st.integers(-1000, 1000).map(lambda i: ("num", i)),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: ("num", f)),
    st.booleans().map(lambda b: ("bool", b)),
    names.map(lambda n: ("ref", n)),
)


def _render(value: tuple) -> str:
    import json

    kind, v = value
    if kind == "str":
        return json.dumps(v)
    if kind == "bool":
        return "true" if v else "false"
    if kind == "num":
        return repr(v)
    if kind == "ref":
        return v
    if kind == "list":
        return "[" + ", ".join(_render(x) for x in v) + "]"
    if kind == "call":
        return f"{v[0]}(" + ", ".join(_render(x) for x in v[1]) + ")"
    return "{ " + ", ".join(f"{k} = {_render(x)}" for k, x in v) + " }"


values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: ("list", xs)),
        st.tuples(names, st.lists(inner, max_size=2)).map(lambda t: ("call", t)),
        st.lists(st.tuples(names, inner), max_size=2).map(lambda ps: ("obj", ps)),
    ),
    max_leaves=6,
)
statements = st.recursive(
    st.tuples(names, values).map(lambda t: f"{t[0]} = {_render(t[1])}"),
    lambda inner: st.tuples(
        names, st.lists(st.text(max_size=5), max_size=1), st.lists(inner, max_size=3)
    ).map(
        lambda t: t[0]
        + "".join(" " + __import__("json").dumps(label) for label in t[1])
        + " {\n"
        + "\n".join(t[2])
        + "\n}"
    ),
    max_leaves=5,
)


@given(st.lists(statements, max_size=4).map("\n".join))
def test_parse_print_parse_is_the_identity(source: str) -> None:
    from procbench.dsl.printer import format_file

    first = parse(source)
    printed = format_file(first)
    assert _shape(parse(printed).body) == _shape(first.body)
    assert format_file(parse(printed)) == printed  # printing is idempotent


def test_one_mistake_gives_one_error_not_a_cascade() -> None:
    err = _error(_sub(r"coco_bleu\(n = 2\)", 'coco_bleu(n = "two")'))
    assert len(err.diagnostics) == 1
    err = _error(_sub(r"source gold \{ format", "source gold { formt"))
    # the missing `format` is the misspelt attribute itself: one error, whose hint names it
    assert [(d.message, d.hint) for d in err.diagnostics] == [
        ("unknown attribute 'formt' in a source block", "did you mean 'format'?")
    ]


def test_import_blocks_declare_the_log_mapping() -> None:
    from procbench.imports.mapping import mapping_for

    spec = check_file(SPECS_DIR / "paradise-tip.spec").spec
    (block,) = spec.imports
    assert (block.kind, block.field, block.choices, block.check.name if block.check else None) == (
        "choice",
        "label",
        4,
        "paradise.same_item",
    )
    assert mapping_for("openpi-head").separator == ", "  # inherited from openpi through extends
    err = _error(_sub(r'  separator = ", "', "", count=1))
    assert 'kind = "text_list" needs `separator' in str(err)


# --- names the checker resolves: each mistake is refused where it was written, once ------------

PROPARA = (SPECS_DIR / "propara.spec").read_text()
PMLLM = (SPECS_DIR / "pm-llm-benchmark.spec").read_text()


def _replace(source: str, old: str, new: str) -> str:
    """``source`` with ``old`` (which must occur exactly once) replaced by ``new``."""
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _at(source: str, needle: str) -> str:
    """``t.spec:LINE:COL`` of the first occurrence of ``needle`` (1-based, as diagnostics print it)."""
    offset = source.index(needle)
    line = source.count("\n", 0, offset) + 1
    return f"t.spec:{line}:{offset - source.rfind(chr(10), 0, offset)}"


def _only_error(source: str) -> str:
    """The one diagnostic ``source`` gets, as ``file:line:col: error: message`` (a cascade fails the test)."""
    err = _error(source)
    assert len(err.diagnostics) == 1, str(err)
    return str(err).splitlines()[0]


def test_a_metric_the_aggregator_does_not_produce_is_refused() -> None:
    source = _replace(
        OPENPI, "  metric exact {", '  metric exact_f2 { display = "Exact F2" }\n  metric exact {'
    )
    produced = ", ".join(f"{m}_{k}" for m in ("exact", "bleu", "rouge") for k in ("p", "r", "f1"))
    assert (
        _only_error(source)
        == f"{_at(source, 'exact_f2')}: error: unknown metric (not produced by mean() over the scorer's values ({produced})) 'exact_f2'"
    )
    assert "did you mean 'exact_f1'?" in str(_error(source))


NAACL18 = (SPECS_DIR / "propara-naacl18.spec").read_text()


def test_a_metric_a_python_aggregator_does_not_produce_is_refused() -> None:
    # every shipped task now declares its counting and aggregation; NAACL'18 as it was, with its Python scorer and aggregator
    counted = NAACL18[
        NAACL18.index("    derive = propara.naacl18_questions()") : NAACL18.index(
            "    measure cat1"
        )
    ]
    accuracy = "    measure q{n} {{ stats = [[q{n}_tp, q{n}_tn], [q{n}_tp, q{n}_fp, q{n}_tn, q{n}_fn]]  scale = 100 }}\n"
    old_measures = "".join(accuracy.format(n=n) for n in range(1, 11) if n != 8)
    old_measures += (
        "    measure q8 { stats = [q8_tp, [q8_tp, q8_fp], q8_tp, [q8_tp, q8_fn]]  scale = 100 }\n"
    )
    scored = _replace(
        NAACL18,
        counted,
        "    scorer = propara.naacl18()\n    aggregate = propara.naacl18()\n" + old_measures,
    )
    source = _replace(scored, "metric macro {", "metric overall_f1 {}\n  metric macro {")
    assert (
        _only_error(source)
        == f"{_at(source, 'overall_f1')}: error: unknown metric (not produced by propara.naacl18() or a measure) 'overall_f1'"
    )


def test_a_metric_no_measure_produces_is_refused() -> None:
    source = _replace(PROPARA, "metric f1 {", "metric f1 {}\n  metric overall_f1 {")
    assert (
        _only_error(source)
        == f"{_at(source, 'overall_f1')}: error: unknown metric (not produced by a measure) 'overall_f1'"
    )


def test_a_typo_in_primary_is_refused() -> None:
    source = _replace(OPENPI, "primary     = rouge_f1", "primary     = rouge_f2")
    assert _only_error(source) == f"{_at(source, 'rouge_f2')}: error: unknown metric 'rouge_f2'"
    assert "did you mean 'rouge_f1'?" in str(_error(source))


def test_a_typo_in_rank_by_is_refused() -> None:
    source = _replace(PMLLM, "rank_by      = [total, c1", "rank_by      = [totl, c1")
    assert _only_error(source) == f"{_at(source, 'totl')}: error: unknown metric 'totl'"
    assert "did you mean 'total'?" in str(_error(source))


def test_a_typo_in_a_match_prediction_field_is_refused() -> None:
    source = _replace(
        OPENPI, "match exact { similarity", "match exact { prediction = answrs  similarity"
    )
    assert (
        _only_error(source) == f"{_at(source, 'answrs')}: error: unknown prediction field 'answrs'"
    )
    assert "did you mean 'answers'?" in str(_error(source))


@pytest.mark.parametrize(
    "spelling",
    [
        'enum("a", "b")',
        "enum(a, b)",
    ],
)
def test_enum_is_a_schema_type(spelling: str) -> None:
    from procbench.runners.runtime.predictions import FieldType

    source = _replace(
        OPENPI,
        "schema { id = str  answers = list(str) }",
        f"schema {{ id = str  answers = list(str)  kind = {spelling} }}",
    )
    spec = check_text(source, "t.spec", search=[SPECS_DIR]).spec
    assert dict(spec.predictions.fields)["kind"] == FieldType("enum", values=("a", "b"))


def test_an_unknown_type_is_refused_with_a_suggestion() -> None:
    source = _replace(
        OPENPI,
        "schema { id = str  answers = list(str) }",
        "schema { id = str  answers = lst(str) }",
    )
    err = _error(source)
    assert len(err.diagnostics) == 1 and str(err).startswith(
        f"{_at(source, 'lst(str)')}: error: unknown type 'lst'"
    )
    assert "did you mean" in err.first.hint and "'list(T)'" in err.first.hint


def test_a_mistyped_reader_gives_exactly_one_error() -> None:
    source = _replace(PROPARA, "reader = propara.answers()", "reader = propara.answerz()")
    assert (
        _only_error(source)
        == f"{_at(source, 'propara.answerz')}: error: unknown reader 'propara.answerz'"
    )
    assert "did you mean 'propara.answers'?" in str(_error(source))


def test_a_typo_in_a_source_name_used_in_several_places_is_one_error() -> None:
    source = _replace(OPENPI, "source meta {", "source mta {")
    assert source.count("meta.question_metadata") >= 2  # used by both labels
    assert (
        _only_error(source)
        == f"{_at(source, 'meta.question_metadata')}: error: unknown source in label 'category' 'meta'"
    )


def test_a_name_written_as_a_string_is_refused_with_the_bare_spelling() -> None:
    source = _replace(OPENPI, "  metric bleu {", '  metric "bleu" {')
    assert (
        _only_error(source)
        == f"{_at(source, chr(34) + 'bleu' + chr(34))}: error: a metric's name is written without quotes"
    )
    assert "metric bleu { ... }" in _error(source).first.hint
