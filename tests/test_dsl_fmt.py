"""``procbench fmt``: comments attached to the tree and printed in place; the layout of the new syntax.

The round trip is fuzzed with comments (own-line and end-of-line) inserted at every kind of line
boundary of generated specs: parse → print → parse keeps every comment, in order, attached to the
same statement, and printing is idempotent.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.dsl import syntax as s
from procbench.dsl.comments import in_order
from procbench.dsl.parser import parse, parse_file
from procbench.dsl.printer import format_file
from procbench.cli import app
from procbench.paths import SPECS_DIR


def _shape(node: object) -> object:
    """The tree without positions; comments included (a blank line above a statement's comments is the printer's call)."""
    if isinstance(node, s.Comments):
        leading = node.leading[1:] if node.leading[:1] == ("",) else node.leading
        return ("comments", leading, node.trailing)
    if dataclasses.is_dataclass(node):
        skip = ("span", "source", "path", "label_spans")
        return (
            type(node).__name__,
            *(
                (f.name, _shape(getattr(node, f.name)))
                for f in dataclasses.fields(node)
                if f.name not in skip
            ),
        )
    if isinstance(node, tuple):
        return tuple(_shape(x) for x in node)
    return node


def _round_trip(source: str) -> tuple[s.SpecFile, str]:
    """Parse and print; asserts what fmt promises and returns (first tree, printed text)."""
    first = parse(source)
    assert in_order(first) == list(
        first.comments
    )  # the attacher placed every comment the lexer saw, in order
    printed = format_file(first)
    again = parse(printed)
    assert in_order(again) == list(first.comments)
    assert _shape(again) == _shape(first)
    assert format_file(again) == printed
    return first, printed


# --- generated specs with comments at random line boundaries -------------------------------------

names = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True).filter(
    lambda n: n not in ("true", "false")
)
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
comment_texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=8
)
keys = st.one_of(names, names.map(lambda n: n + "?"), texts)


def _key(k: str) -> str:
    return k if re.fullmatch(r"[a-z][a-z0-9_]*", k) else json.dumps(k)


@st.composite
def values(draw: st.DrawFn, depth: int = 0) -> list[str]:
    """A value as source lines (strings never span lines, so every line end can take a comment)."""
    kind = draw(
        st.sampled_from(
            ["str", "long", "num", "bool", "ref"]
            + (["list", "object", "call"] if depth < 3 else [])
        )
    )
    if kind == "str":
        return [json.dumps(draw(texts), ensure_ascii=False)]
    if kind == "long":
        return [
            '"""'
            + draw(texts.map(lambda t: t.replace('"', "").replace("\n", " ").replace("\r", " ")))
            + '"""'
        ]
    if kind == "num":
        return [
            repr(
                draw(
                    st.one_of(
                        st.integers(-999, 999),
                        st.floats(allow_nan=False, allow_infinity=False, width=32),
                    )
                )
            )
        ]
    if kind == "bool":
        return [draw(st.sampled_from(["true", "false"]))]
    if kind == "ref":
        return [".".join(draw(st.lists(names, min_size=1, max_size=3)))]
    if kind == "list":
        items = draw(st.lists(values(depth + 1), max_size=4))
        opening, closing = "[", "]"
    elif kind == "object":
        pairs = draw(st.lists(st.tuples(keys, values(depth + 1)), max_size=3))
        items = [[f"{_key(k)} = {v[0]}", *v[1:]] for k, v in pairs]
        opening, closing = "{", "}"
    else:
        callee = draw(names)
        args = draw(st.lists(values(depth + 1), max_size=2))
        kwargs = [
            [f"{k} = {v[0]}", *v[1:]]
            for k, v in draw(st.lists(st.tuples(names, values(depth + 1)), max_size=2))
        ]
        items = args + kwargs
        opening, closing = f"{callee}(", ")"
    if not draw(st.booleans()) and all(len(i) == 1 for i in items):  # on one line
        return [opening + ", ".join(i[0] for i in items) + closing]
    lines = [opening]
    for n, item in enumerate(items):
        comma = "," if n < len(items) - 1 or draw(st.booleans()) else ""
        lines += [*item[:-1], item[-1] + comma]
    return [*lines, closing]


@st.composite
def statements(draw: st.DrawFn, depth: int = 0) -> list[str]:
    if depth >= 2 or draw(st.booleans()):
        key = draw(keys)
        typed = draw(st.sampled_from(["", ": str", ": list(str)", ": map(str, int)"]))
        value = draw(values())
        if draw(st.integers(0, 5)) == 0:  # `key =` alone on its line
            return [f"{_key(key)}{typed} =", *value]
        return [f"{_key(key)}{typed} = {value[0]}", *value[1:]]
    labels = draw(
        st.lists(
            st.one_of(names, texts.map(lambda t: json.dumps(t, ensure_ascii=False))), max_size=2
        )
    )
    opener = " ".join([draw(names), *labels]) + " {"
    body = draw(st.lists(statements(depth + 1), max_size=3))
    if draw(st.booleans()) and all(len(b) == 1 for b in body):
        return [opener + " " + "  ".join(b[0] for b in body) + " }"]
    return [opener, *(line for b in body for line in b), "}"]


@st.composite
def commented_specs(draw: st.DrawFn) -> tuple[str, list[str]]:
    """(source, its comments in order): own-line comments and blank lines between lines, comments at line ends."""
    lines = [line for stmt in draw(st.lists(statements(), min_size=1, max_size=3)) for line in stmt]
    out: list[str] = []
    comments: list[str] = []

    def comment() -> str:
        text = f"# c{len(comments)}{draw(comment_texts)}".rstrip()
        comments.append(text)
        return text

    for line in [*lines, None]:
        for _ in range(draw(st.integers(0, 2))):
            out.append(
                "" if draw(st.integers(0, 3)) == 0 else " " * draw(st.integers(0, 4)) + comment()
            )
        if line is not None:
            out.append(line + ("  " + comment() if draw(st.integers(0, 2)) == 0 else ""))
    return "\n".join(out) + "\n", comments


@given(commented_specs())
def test_comments_survive_the_round_trip_in_order_and_in_place(case: tuple[str, list[str]]) -> None:
    source, comments = case
    first, printed = _round_trip(source)
    assert list(first.comments) == comments
    assert re.findall(r"# c\d+", printed) == [re.match(r"# c\d+", c).group() for c in comments]  # type: ignore[union-attr]


@given(
    st.lists(statements(), max_size=4).map(lambda ss: "\n".join(line for st_ in ss for line in st_))
)
def test_new_syntax_round_trips_without_comments(source: str) -> None:
    first, _ = _round_trip(source)
    assert first.comments == ()  # a '#' inside a string is text, not a comment


# --- where each comment goes --------------------------------------------------------------------

SPEC = """\
# OpenPI, the short version.
# Second header line.

task openpi {  # the task
  title = "OpenPI"   # display title
  # the primary metric
  primary = rouge_f1

  data {
    # the splits we score
    splits = [dev, test]  # no train
    fields { answers: list(str) = gold.answers }  # typed
    labels {
      domain = map(meta.topic, { Health = "unseen" }, default = "seen")
      # more labels later

      # (really)
    }
  }
  normaliser content {
    steps = [
      strip(),  # whitespace first
      # then case
      lowercase(),
    ]
  }
  reported "GPT-2 (Table 4)" { split = test }  # from the paper
  # trailing thoughts
}
# end of file
"""

CANONICAL = """\
# OpenPI, the short version.
# Second header line.

task openpi {  # the task
  title   = "OpenPI"  # display title
  # the primary metric
  primary = rouge_f1

  data {
    # the splits we score
    splits = [dev, test]  # no train

    fields { answers: list(str) = gold.answers }  # typed

    labels {
      domain = map(meta.topic, { Health = "unseen" }, default = "seen")
      # more labels later

      # (really)
    }
  }

  normaliser content {
    steps = [
      strip(),  # whitespace first
      # then case
      lowercase(),
    ]
  }

  reported "GPT-2 (Table 4)" { split = test }  # from the paper
  # trailing thoughts
}
# end of file
"""


def test_each_comment_is_printed_where_it_was() -> None:
    first, printed = _round_trip(SPEC)
    assert printed == CANONICAL
    (task,) = first.body
    assert first.header == (
        "# OpenPI, the short version.",
        "# Second header line.",
    ) and first.end_comments == ("# end of file",)
    assert task.open_comment == "# the task" and task.end_comments == ("# trailing thoughts",)
    title, primary, data, normaliser, reported = task.body
    assert title.comments == s.Comments((), "# display title")
    assert primary.comments == s.Comments(("# the primary metric",), None)
    splits, fields, labels = data.body
    assert (
        splits.comments == s.Comments(("# the splits we score",), "# no train")
        and fields.comments.trailing == "# typed"
    )
    assert labels.end_comments == ("# more labels later", "", "# (really)")
    steps = normaliser.body[0].value
    assert steps.item_comments == (
        s.Comments((), "# whitespace first"),
        s.Comments(("# then case",), None),
    )
    assert reported.comments.trailing == "# from the paper"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a trailing comment stays on the line of the statement it ends, however the statement is laid out
        ("x {\n  a = 1  # one\n  b = 2\n}\n", "x {\n  a = 1  # one\n  b = 2\n}\n"),
        ("x { a = 1  # one\n b = 2 }\n", "x {\n  a = 1  # one\n  b = 2\n}\n"),
        ("x { a = 1 }  # one\n", "x { a = 1 }  # one\n"),
        ("x {\n  a = 1\n}  # one\n", "x { a = 1 }  # one\n"),
        (
            't { d = """\nline\n"""  # after the text\n}\n',
            't {\n  d = """\nline\n"""  # after the text\n}\n',
        ),
        ("t { l = [1,\n 2]  # after the list\n}\n", "t {\n  l = [1, 2]  # after the list\n}\n"),
        ("t { l = [1,  # one\n 2] }\n", "t {\n  l = [\n    1,  # one\n    2,\n  ]\n}\n"),
        ("t { o = { k = 1,  # one\n } }\n", "t {\n  o = {\n    k = 1,  # one\n  }\n}\n"),
        # comments after an opening bracket stay there; blank lines among comments are kept as one
        (
            "t {  # open\n\n\n  # a\n\n\n  # b\n\n  a = 1\n}\n",
            "t {  # open\n  # a\n\n  # b\n\n  a = 1\n}\n",
        ),
        ("t { l = [  # open\n] }\n", "t {\n  l = [  # open\n  ]\n}\n"),
        ("t { l = [\n  # only\n] }\n", "t {\n  l = [\n    # only\n  ]\n}\n"),
        # a comment where the tree has no place (inside a call) moves above its statement, in order
        ("t { s = f(1,  # one\n 2)  # two\n}\n", "t {\n  # one\n  s = f(1, 2)  # two\n}\n"),
        ("t { s = f([1,  # one\n], 2  # two\n) }\n", "t {\n  # one\n  # two\n  s = f([1], 2)\n}\n"),
        ("t { s = f([1,  # one\n]) }\n", "t {\n  s = f([\n    1,  # one\n  ])\n}\n"),
        ("task t  # why\n{ a = 1 }\n", "# why\n\ntask t { a = 1 }\n"),
    ],
)
def test_comment_placement(source: str, expected: str) -> None:
    _, printed = _round_trip(source)
    assert printed == expected


# --- layout of the new syntax --------------------------------------------------------------------


def test_bare_labels_typed_attributes_and_quoted_keys() -> None:
    source = (
        'metric exact_p { display = "Exact P" }\nreported "GPT-2" { "ordered?" = gold.x  n = 1 }\n'
        'fields {\n  answers: list(str) = gold.answers\n  id: str = gold.id\n  "is ok?" = true\n  n = 1\n  m = 2\n}\n'
    )  # five attributes: a block of four fits one line
    first, printed = _round_trip(source)
    assert printed == (
        'metric exact_p { display = "Exact P" }\n'
        'reported "GPT-2" { "ordered?" = gold.x  n = 1 }\n'
        "\n"
        "fields {\n"
        "  answers: list(str) = gold.answers\n"
        "  id: str            = gold.id\n"
        '  "is ok?"           = true\n'
        "  n                  = 1\n"
        "  m                  = 2\n"
        "}\n"
    )
    assert [b.bare_labels for b in first.body] == [(True,), (False,), ()]


def test_long_objects_and_lists_of_lists_print_one_item_per_line() -> None:
    rows = '{ "GPT-2 (Tandon et al. 2020)" = [0.0428, 0.1612, 0.3244], "Flan-T5" = [0.1, _, 0.3], "T5-large (fine-tuned)" = [0.2, 0.3, 0.4] }'
    table = "[[0.0428, 0.1612, 0.3244, 0.5], [0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.2]]"
    _, printed = _round_trip(
        f'reported "EMNLP 2020, Table 4" {{\n  split = test\n  rows = {rows}\n  grid = {table}\n}}\n'
    )
    assert printed == (
        'reported "EMNLP 2020, Table 4" {\n'
        "  split = test\n"
        "  rows  = {\n"
        '    "GPT-2 (Tandon et al. 2020)" = [0.0428, 0.1612, 0.3244],\n'
        '    "Flan-T5" = [0.1, _, 0.3],\n'
        '    "T5-large (fine-tuned)" = [0.2, 0.3, 0.4],\n'
        "  }\n"
        "  grid  = [\n"
        "    [0.0428, 0.1612, 0.3244, 0.5],\n"
        "    [0.1, 0.2, 0.3, 0.4],\n"
        "    [0.5, 0.6, 0.7, 0.8],\n"
        "    [0.9, 1.0, 1.1, 1.2],\n"
        "  ]\n"
        "}\n"
    )
    # an object quotes all its keys when one is not a name, so a table's row names line up
    _, short = _round_trip(
        't { rows = { "Flan T5" = [0.1, _, 0.3], gpt2 = [1] }  keys = { "a" = 1, Flan-T5 = 2 } }\n'
    )
    assert (
        short
        == 't { rows = { "Flan T5" = [0.1, _, 0.3], "gpt2" = [1] }  keys = { a = 1, Flan-T5 = 2 } }\n'
    )


# --- the command ---------------------------------------------------------------------------------


def _commented(source: str) -> tuple[str, list[str]]:
    """The spec with a comment above every line inside the task block and one at the end of every line that takes one."""
    first = parse(source).body[0].span.line
    out, added = [], []
    in_long = False  # inside a """long string""", where '#' is text
    for number, line in enumerate(source.split("\n"), 1):
        if number > first and line.strip() and not in_long:
            added.append(f"# above line {number}")
            out.append(added[-1])
        in_long ^= line.count('"""') % 2 == 1
        if number >= first and line.strip() and not in_long and not line.lstrip().startswith("#"):
            added.append(f"# end of line {number}")
            line += "  " + added[-1]
        out.append(line)
    return "\n".join(out), added


@pytest.mark.parametrize("name", ["openpi.spec", "paged.spec", "propara.spec"])
def test_fmt_keeps_every_comment_of_a_commented_shipped_spec(name: str, tmp_path: Path) -> None:
    original = (SPECS_DIR / name).read_text(
        encoding="utf-8"
    )  # read only: the copy is what gets formatted
    source, added = _commented(original)
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    runner = CliRunner()
    assert (
        runner.invoke(app, ["fmt", "--check", str(path)]).exit_code == 1
    )  # the added comments moved things off canonical
    result = runner.invoke(app, ["fmt", str(path)])
    assert result.exit_code == 0, result.output
    checked = runner.invoke(app, ["fmt", "--check", str(path)])
    assert checked.exit_code == 0, checked.output
    formatted = parse_file(path)
    assert [c for c in formatted.comments if c in added] == added
    assert _shape(formatted.body) == _shape(
        parse(source).body
    )  # same tree, each comment on the same statement


def test_fmt_check_passes_on_a_formatted_spec_with_inner_comments(tmp_path: Path) -> None:
    path = tmp_path / "commented.spec"
    path.write_text(SPEC, encoding="utf-8")
    runner = CliRunner()
    before = runner.invoke(app, ["fmt", "--check", str(path)])
    assert before.exit_code == 1 and "not canonically formatted" in before.output
    assert path.read_text(encoding="utf-8") == SPEC  # --check writes nothing
    assert runner.invoke(app, ["fmt", str(path)]).exit_code == 0
    assert path.read_text(encoding="utf-8") == CANONICAL
    after = runner.invoke(app, ["fmt", "--check", str(path)])
    assert after.exit_code == 0, after.output
