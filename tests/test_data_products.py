"""Records that expand into items by a cross product (issue #28): product, distinct, lookup, any/all, where/skip.

Generated records are read by the declarative reader and, independently, expanded here in plain
Python following docs/language.md ("Computed values"); both must give the same items, ids, values
and order.  Mistakes in the constructs are refused by ``check`` at their place, and problems in the
data are reported at the record's line naming the element.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.dsl import SpecError, check_file, compile_spec
from procbench.dsl.compiler import explain
from procbench.dsl.datacheck import check_against_data
from procbench.cli import app
from procbench.runners.runtime._types import GoldDataError

EXPLODE = """explode cell {
      items = product(step = rec.steps, event = distinct(rec.events, name, where = { kind = "real" }))
      id    = index
      skip  = [equals(cell.step, "END"), any(rec.ignored, cell.step)]
    }"""
FIELDS = """label: str     = lookup(rec.labels, { step = cell.step, event = cell.event, kind = "gold" }, label, default = "none")
      any_yes: bool  = any(rec.labels, { step = cell.step, label = "yes" })
      all_gold: bool = all(rec.labels, { kind = "gold" })
      events: list(str) = distinct(rec.events, name)"""
LABELS = "labels { tagged = any(rec.labels, { event = cell.event }) }"


def _spec(
    tmp_path: Path, explode: str = EXPLODE, fields: str = FIELDS, labels: str = LABELS
) -> Path:
    text = f"""task grid {{
  title   = "Grid"
  version = "1.0"
  primary = accuracy

  data {{
    splits = [dev]
    source rec {{ format = "jsonl"  path = "grid/{{split}}.jsonl" }}
    id = rec.id
    {explode}
    fields {{
      {fields}
    }}
    {labels}
  }}

  predictions {{ format = "jsonl"  schema {{ id = str  label = str }} }}
  score {{ measure accuracy {{ metric = accuracy()  gold = label  prediction = label }} }}
}}
"""
    path = tmp_path / "grid.spec"
    path.write_text(text)
    return path


def _write(root: Path, records: list[dict]) -> None:
    target = root / "grid" / "dev.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(r) + "\n" for r in records))


def _expand(records: list[dict]) -> dict[str, dict]:
    """The items the spec above describes, written out in plain Python (the docs' rules, not the reader's code)."""
    items = {}
    for rec in records:
        events: list[str] = []
        for event in rec["events"]:
            if event["kind"] == "real" and event["name"] not in events:
                events.append(event["name"])
        every_name: list[str] = []
        for event in rec["events"]:
            if event["name"] not in every_name:
                every_name.append(event["name"])
        for i, step in enumerate(rec["steps"]):
            for j, event in enumerate(events):
                if step == "END" or step in rec["ignored"]:
                    continue
                found = [
                    lab["label"]
                    for lab in rec["labels"]
                    if lab["step"] == step and lab["event"] == event and lab["kind"] == "gold"
                ]
                items[f"{rec['id']}/{i}/{j}"] = {
                    "label": found[0] if found else "none",
                    "any_yes": any(
                        lab["step"] == step and lab["label"] == "yes" for lab in rec["labels"]
                    ),
                    "all_gold": all(lab["kind"] == "gold" for lab in rec["labels"]),
                    "events": every_name,
                    "tagged": str(any(lab["event"] == event for lab in rec["labels"])),
                }
    return items


STEPS = st.sampled_from(["mix", "bake", "cool", "cut", "END"])
NAMES = st.sampled_from(["burn", "rise", "spill", "crack"])
_event = st.fixed_dictionaries({"name": NAMES, "kind": st.sampled_from(["real", "hypothetical"])})
_label = st.fixed_dictionaries(
    {
        "step": STEPS,
        "event": NAMES,
        "label": st.sampled_from(["yes", "no", "maybe"]),
        "kind": st.sampled_from(["gold", "draft"]),
    }
)
_record = st.fixed_dictionaries(
    {
        "steps": st.lists(STEPS, max_size=5),
        "events": st.lists(_event, max_size=5),
        "labels": st.lists(_label, max_size=8),
        "ignored": st.lists(STEPS, max_size=2),
    }
)


@given(bodies=st.lists(_record, min_size=1, max_size=5))
def test_the_reader_expands_records_as_plain_python_does(
    tmp_path_factory: pytest.TempPathFactory, bodies: list[dict]
) -> None:
    root = tmp_path_factory.mktemp("grid")
    records = [{"id": f"r{n}", **body} for n, body in enumerate(bodies)]
    _write(root, records)
    spec = check_file(_spec(root)).spec
    gold, _ = compile_spec(spec).gold(root, "dev")
    expected = _expand(records)
    assert list(gold.items) == list(expected)
    for item_id, want in expected.items():
        assert gold.items[item_id] == {k: v for k, v in want.items() if k != "tagged"}
        assert gold.labels[item_id] == {"tagged": want["tagged"]}
        assert gold.origins[item_id] == f"grid/dev.jsonl:{int(item_id.split('/')[0][1:]) + 1}"


@given(steps=st.lists(STEPS, max_size=6), events=st.lists(NAMES, max_size=6))
def test_a_joined_id_names_each_pair_and_a_repeated_pair_is_reported_once_at_the_record(
    tmp_path_factory: pytest.TempPathFactory, steps: list[str], events: list[str]
) -> None:
    root = tmp_path_factory.mktemp("joined")
    _write(root, [{"id": "r0", "steps": steps, "events": events}])
    explode = """explode cell {
      items = product(step = rec.steps, event = rec.events)
      id    = [cell.step, cell.event]
      separator = ":"
    }"""
    spec = check_file(_spec(root, explode, "label: str = cell.step", "")).spec
    pairs = [(s, e) for s in steps for e in events]
    repeated = len(set(pairs)) != len(pairs)
    if not repeated:
        gold, _ = compile_spec(spec).gold(root, "dev")
        assert list(gold.items) == [f"r0:{s}:{e}" for s, e in pairs]
        return
    with pytest.raises(GoldDataError) as caught:
        compile_spec(spec).gold(root, "dev")
    seen: set[tuple[str, str]] = set()
    dupes = 0
    for pair in pairs:
        dupes += pair in seen
        seen.add(pair)
    assert len(caught.value.problems) == dupes
    assert all(
        p.line == 1 and "has the id" in p.message and "rec.steps[" in p.message
        for p in caught.value.problems
    )


def test_the_spec_is_formatted_and_explained(tmp_path: Path) -> None:
    path = _spec(tmp_path)
    spec = check_file(path).spec
    text = explain(spec)
    assert "every element" not in text.split("field any_yes")[0]  # any(): some element
    assert (
        'combination of one element of each of rec.steps x distinct(rec.events, name, where = { kind = "real" })'
        in text
    )
    assert 'skipped where equals(cell.step, "END")' in text
    assert 'else "none"' in text
    formatted = CliRunner().invoke(app, ["fmt", str(path)])
    assert formatted.exit_code == 0, formatted.output
    assert check_file(path).spec == spec  # formatting keeps the meaning


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _one_error(path: Path) -> tuple[int, int, str, str]:
    with pytest.raises(SpecError) as caught:
        check_file(path)
    (error,) = caught.value.diagnostics
    return error.span.line, error.span.column, error.message, error.hint


@pytest.mark.parametrize(
    ("old", "new", "at", "says", "hint"),
    [
        (
            "lookup(rec.labels",
            "lokup(rec.labels",
            "lokup",
            "unknown computed value 'lokup'",
            "did you mean 'lookup'?",
        ),
        (
            'default = "none"',
            'defualt = "none"',
            "defualt",
            "lookup() takes no argument 'defualt'",
            "lookup(rec.labels",
        ),
        (
            "event = distinct(",
            "event = distnct(",
            "distnct",
            "distnct() does not give a list",
            "distinct",
        ),
        (
            'equals(cell.step, "END")',
            'equals(cel.step, "END")',
            "cel.step",
            "'cel'",
            "did you mean 'cell'?",
        ),
        (
            "any_yes: bool ",
            "any_yes: str  ",
            "any_yes: |str",
            "gives true or false",
            "any_yes: bool",
        ),
        ("id    = index", "id    = key", "key", "id = key needs a mapping", "id = index"),
        ('{ kind = "real" }', "{ }", "{ }", "an empty match", "at least one member"),
        (
            "any(rec.ignored, cell.step)",
            "lookup(rec.ignored, cell.step)",
            "lookup(rec.ignored",
            "lookup() is not a condition",
            "any(...)",
        ),
        (
            "product(step = rec.steps, event",
            "product(step = rec.steps, step",
            "product(",
            "names each list once",
            "product(",
        ),
        (
            "event = distinct(rec.events, name",
            "event = distinct(cell.events, name",
            "product(",
            "before there is an element 'cell'",
            "a source",
        ),
        (
            "label: str     = lookup(",
            "label: enum(yes, no, maybe) = lookup(",
            "lookup(rec.labels",
            'default "none" is not a value',
            "the default",
        ),
    ],
)
def test_a_mistake_in_the_constructs_is_one_error_at_its_place(
    tmp_path: Path, old: str, new: str, at: str, says: str, hint: str
) -> None:
    path = _spec(tmp_path)
    text = path.read_text()
    assert old in text
    text = text.replace(old, new, 1)
    path.write_text(text)
    position = text.index(at.replace("|", "")) + max(
        at.find("|"), 0
    )  # `|` marks the caret within the anchor
    where = (text.count("\n", 0, position) + 1, position - text.rfind("\n", 0, position))
    got = _one_error(path)
    assert says in got[2], got
    assert hint in got[3], got
    assert got[:2] == where, got


def test_a_member_no_element_has_is_a_data_error_not_a_silent_default(tmp_path: Path) -> None:
    _write(
        tmp_path,
        [
            {
                "id": "r0",
                "steps": ["mix"],
                "events": [{"name": "burn", "kind": "real"}],
                "labels": [{"step": "mix", "event": "burn", "label": "yes", "kind": "gold"}],
                "ignored": [],
            }
        ],
    )
    path = _spec(
        tmp_path, fields=FIELDS.replace("event = cell.event, kind", "evnt = cell.event, kind")
    )
    spec = check_file(path).spec
    with pytest.raises(GoldDataError) as caught:
        compile_spec(spec).gold(tmp_path, "dev")
    (problem,) = caught.value.problems
    assert (
        problem.line == 1
        and "no element of rec.labels has a member 'evnt'" in problem.message
        and "(element rec.steps[0] x" in problem.message
    )
    diagnostics, _ = check_against_data(spec, compile_spec(spec), tmp_path)
    (finding,) = diagnostics
    assert finding.span.line == _line_of(path, "label: str")  # the field's statement


def test_a_condition_that_is_not_true_or_false_is_reported_at_the_skip(tmp_path: Path) -> None:
    _write(
        tmp_path,
        [
            {
                "id": "r0",
                "steps": ["mix"],
                "events": [{"name": "burn", "kind": "real"}],
                "labels": [],
                "ignored": [],
            }
        ],
    )
    path = _spec(
        tmp_path,
        explode=EXPLODE.replace(
            '[equals(cell.step, "END"), any(rec.ignored, cell.step)]', "cell.step"
        ),
    )
    spec = check_file(path).spec
    diagnostics, _ = check_against_data(spec, compile_spec(spec), tmp_path)
    (finding,) = diagnostics
    assert (
        finding.span.line == _line_of(path, "skip")
        and "gives a string ('mix'), not true or false" in finding.message
    )


def test_the_example_in_the_language_reference_checks_and_reads(tmp_path: Path) -> None:
    from procbench.paths import PROJECT_ROOT

    doc = (PROJECT_ROOT / "docs" / "language.md").read_text()
    block = doc.split("**Computed values")[1].split("```\n")[1]
    assert block.startswith("data {")
    (tmp_path / "events.spec").write_text(
        f"""task events {{
  title = "Events"
  version = "1.0"
  primary = accuracy
  {block}
  predictions {{ format = "jsonl"  schema {{ id = str  label = enum(likely, unlikely, none) }} }}
  score {{ measure accuracy {{ metric = accuracy()  gold = label  prediction = label }} }}
}}
"""
    )
    record = {
        "id": "p1",
        "steps": [
            {"sid": "s1", "kind": "header"},
            {"sid": "s2", "kind": "action"},
            {"sid": "s3", "kind": "action"},
        ],
        "events": [
            {"name": "burn", "kind": "real"},
            {"name": "flood", "kind": "imagined"},
            {"name": "burn", "kind": "real"},
        ],
        "excluded": ["s3"],
        "labels": [{"step": "s2", "event": "burn", "label": "likely", "checked": True}],
    }
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "test.jsonl").write_text(json.dumps(record) + "\n")
    spec = check_file(tmp_path / "events.spec").spec
    gold, _ = compile_spec(spec).gold(tmp_path, "test")
    assert gold.items == {"p1/s2/burn": {"label": "likely", "seen": True}}
    assert gold.labels == {"p1/s2/burn": {"all_checked": "True"}}


_scalars = st.one_of(
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5]),
    st.sampled_from(["a", "b", "1"]),
    st.none(),
)


@given(values=st.lists(_scalars, max_size=12), wanted=_scalars)
def test_distinct_any_all_and_lookup_follow_the_documented_equality(
    values: list, wanted: object
) -> None:
    from procbench.runners.runtime.data_exprs import evaluate

    def equal(
        a: object, b: object
    ) -> bool:  # docs/language.md: Python's equality, but true is never 1
        return isinstance(a, bool) == isinstance(b, bool) and a == b

    scope = {
        "rec": {"xs": values, "rows": [{"v": v, "at": i} for i, v in enumerate(values)]},
        "q": {"w": wanted},
    }
    unique: list = []
    for v in values:
        if not any(equal(v, u) for u in unique):
            unique.append(v)
    got = evaluate(("#distinct", ("rec", "xs"), (), ()), scope)
    assert len(got) == len(unique) and all(equal(a, b) for a, b in zip(got, unique))
    assert evaluate(("#any", ("rec", "xs"), (("", ("q", "w")),)), scope) == any(
        equal(v, wanted) for v in values
    )
    assert evaluate(("#all", ("rec", "xs"), (("", ("q", "w")),)), scope) == all(
        equal(v, wanted) for v in values
    )
    hits = [i for i, v in enumerate(values) if equal(v, wanted)]
    found = evaluate(("#lookup", ("rec", "rows"), (("v", ("q", "w")),), ("at",), True, -1), scope)
    assert found == (hits[0] if hits else -1)
