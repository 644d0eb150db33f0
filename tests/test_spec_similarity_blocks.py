"""Similarity blocks, record similarities and ``derive`` in the language: each mistake is one `check` error.

The shipped ProPara spec is the base; each case edits one line and expects an error at that line and
column with the message and hint a maintainer needs (docs: the generated spec reference).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procbench.dsl import SpecError, check_file, check_text
from procbench.dsl.compiler import spec_digest
from procbench.paths import SPECS_DIR

BASE = (SPECS_DIR / "propara.spec").read_text(encoding="utf-8")


def _edited(old: str, new: str) -> str:
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


def _error(text: str) -> tuple[int, int, str]:
    with pytest.raises(SpecError) as caught:
        check_text(text, "propara.spec", search=[SPECS_DIR])
    first = caught.value.first
    return first.span.line, first.span.column, str(caught.value)


def _line_of(text: str, fragment: str) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines(), 1):
        if fragment in line:
            return number, line.index(fragment) + 1
    raise AssertionError(fragment)


CASES = [
    # (old, new, where the caret goes, what the message says)
    (
        "match inputs { gold = inputs  prediction = inputs  similarity = participant }",
        "match inputs { gold = inputs  prediction = inputs  similarity = participnt }",
        "participnt",
        "unknown similarity 'participnt'",
    ),
    (
        "match inputs { gold = inputs  prediction = inputs  similarity = participant }",
        "match inputs { gold = inputs  prediction = inputs  similarity = move }",
        "move }",
        "a record similarity (same/mean) compares records, but the answers are str",
    ),
    (
        "mean { locations = location  destroyed = participant  created = participant }",
        "mean { locaton = location  destroyed = participant  created = participant }",
        "conversion }",
        "unknown field of the records match 'conversions' compares 'locaton'",
    ),
    (
        "similarity move {\n    same = [step]",
        "similarity move {\n    same = [sentence]",
        "move }",
        "'sentence'",
    ),
    (
        "mean { participant = participant  before = location  after = location }",
        "mean { participant = participant  before = location  after = location  step = participant }",
        "move }",
        "similarity phrase_overlap() compares str, but the answers are int",
    ),
    (
        "similarity participant { use = phrase_overlap() }",
        "similarity participant {\n    use  = phrase_overlap()\n    same = [step]\n  }",
        "phrase_overlap()",
        "has both `use` and a record form",
    ),
    (
        "mean { participant = participant  before = location  after = location }",
        "mean { participant = participant  before = location  after = move }",
        "move }",
        "similarity cycle: move -> move",
    ),
    (
        'use = phrase_overlap(alternatives = place, blank_alternative = "empties_group")\n  }',
        'use = phrase_overlap(alternatives = plaec, blank_alternative = "empties_group")\n  }',
        "plaec",
        "unknown normaliser 'plaec'",
    ),
    (
        "similarity participant { use = phrase_overlap() }",
        'similarity participant { use = record_mean(same = ["step"], parts = []) }',
        "[]) }",
        "record_mean() takes its 'parts' from a similarity block",
    ),
    (
        "derive = propara.summaries()",
        "derive = propara.sumaries()",
        "propara.sumaries",
        "unknown deriver 'propara.sumaries'",
    ),
]


@pytest.mark.parametrize(("old", "new", "at", "message"), CASES, ids=[c[3][:40] for c in CASES])
def test_each_mistake_is_one_error_at_its_place(old: str, new: str, at: str, message: str) -> None:
    text = _edited(old, new)
    line, column, report = _error(text)
    assert message in report, report
    assert (line, column) == _line_of(text, at), report
    assert report.count(": error: ") == 1, report  # one mistake, one error
    assert "propara.spec:" in report and "^" in report  # file:line:col, the line and a caret


def test_a_deriver_reading_a_field_the_records_lack_is_refused(tmp_path: Path) -> None:
    text = _edited(
        "reader = propara.answers() }", 'reader = propara.answers() }\n  params { unused = "x" }'
    )
    schema = '  predictions { format = "jsonl"  id = id  schema { id = str  text = str } }'
    text = text.replace('  predictions { format = "tsv"  reader = propara.action_file() }', schema)
    line, column, report = _error(text)
    assert (
        "propara.summaries() reads field 'num_sentences', which the prediction records do not have"
        in report
    )
    assert (line, column) == _line_of(text, "propara.summaries()")


def test_an_unused_similarity_block_is_a_warning() -> None:
    declared = "similarity participant { use = phrase_overlap() }"
    text = _edited(declared, declared + "\n  similarity spare { use = exact() }")
    warnings = check_text(text, "propara.spec", search=[SPECS_DIR]).warnings
    assert any("similarity 'spare' is never used" in w.message for w in warnings)


def test_similarity_block_names_are_not_part_of_the_fingerprint() -> None:
    shipped = check_file(SPECS_DIR / "propara.spec").spec
    renamed = check_text(
        BASE.replace("participant_bounded", "participant_one_to_one"),
        "propara.spec",
        search=[SPECS_DIR],
    ).spec
    assert spec_digest(renamed) == spec_digest(shipped)
    changed = check_text(
        BASE.replace('groups = "one_to_one") }', 'groups = "all_pairs") }'),
        "propara.spec",
        search=[SPECS_DIR],
    ).spec
    assert spec_digest(changed) != spec_digest(
        shipped
    )  # what a block says is scored, inlined into the match blocks


def test_derive_beside_a_scorer_component_is_refused() -> None:
    text = _edited(
        "derive = propara.summaries()",
        "derive = propara.summaries()\n    scorer = propara.leaderboard()",
    )
    with pytest.raises(SpecError) as caught:
        check_text(text, "propara.spec", search=[SPECS_DIR])
    found = [
        d
        for d in caught.value.diagnostics
        if "derive gives the fields of match and measure blocks" in d.message
    ]
    assert [(d.span.line, d.span.column) for d in found] == [_line_of(text, "propara.summaries()")]


@pytest.mark.parametrize("id_field", ["pid", "process_id"])
def test_the_prediction_id_names_a_field_of_the_file_not_of_the_deriver(id_field: str) -> None:
    """With ``derive``, the score fields are the deriver's; the id is still a field of the file's schema."""
    schema = f'  predictions {{ format = "jsonl"  id = {id_field}  schema {{ {id_field} = str  num_sentences = int  participants = list(str) }} }}'
    text = _edited('  predictions { format = "tsv"  reader = propara.action_file() }', schema)
    check_text(text, "propara.spec", search=[SPECS_DIR])  # no "unknown prediction field" for the id
    line, column, report = _error(text.replace(f"id = {id_field}  schema", "id = pidd  schema"))
    assert "unknown schema field 'pidd'" in report and report.count(": error: ") == 1, report
    assert (line, column) == _line_of(
        text.replace(f"id = {id_field}  schema", "id = pidd  schema"), "pidd"
    )
