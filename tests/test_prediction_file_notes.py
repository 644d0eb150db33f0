"""Issue #30, deliverable 6: what a prediction file's problems say, read by the readers the upload page and intake use.

* a bad JSON line's column is the line's own column, as ``json.JSONDecodeError`` gives it for that line
  (a line cut short was reported at "column 1": decoded with its newline, the error fell after it);
* an empty file is "the file holds no records" (PARADISE listed every item of the split as missing;
  PM-LLM scored it 0 on every question);
* a field the task's prediction format does not declare is named in a warning with its first line.
"""

from __future__ import annotations

import json
import re
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from procbench.leaderboard import intake_form
from procbench.paths import SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime._types import PredictionWarning
from procbench.runners.runtime.predictions import (
    EMPTY_FILE,
    MAX_EXTRA_FIELDS,
    ExtraFields,
    json_objects,
    listed_ids,
)
from tests.site_app import build_demo_store

COLUMN = re.compile(r"^not valid JSON: .* \(column (\d+)\)$")

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(st.text(max_size=8), values, min_size=1, max_size=4)


@st.composite
def broken_lines(draw: st.DrawFn) -> tuple[str, json.JSONDecodeError]:
    """A JSON object's line with one edit (a character cut, inserted or replaced, or the line cut short) that no longer decodes."""
    line = json.dumps(draw(objects), ensure_ascii=draw(st.booleans()))
    at = draw(st.integers(0, len(line)))
    edit = draw(st.sampled_from(["cut", "insert", "replace", "truncate"]))
    noise = draw(st.sampled_from(list('"{}[],:\\ \tx1é😀') + ["\x00", "\x1f"]))
    broken = {
        "cut": line[:at] + line[at + 1 :],
        "insert": line[:at] + noise + line[at:],
        "replace": line[:at] + noise + line[at + 1 :],
        "truncate": line[:at],
    }[edit]
    assume(broken.strip() and "\n" not in broken and "\r" not in broken)
    try:
        json.loads(broken)
    except json.JSONDecodeError as exc:
        return broken, exc
    except ValueError:
        pass
    assume(False)
    raise AssertionError  # unreachable: assume(False) stops the example


@settings(max_examples=300)
@given(
    broken_lines(),
    st.integers(0, 3),
    st.integers(0, 2),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.booleans(),
)
def test_a_bad_json_lines_column_is_the_decode_errors_column_on_that_line(
    bad: tuple[str, json.JSONDecodeError],
    before: int,
    after: int,
    ending: str,
    bom: bool,
    last_ends: bool,
) -> None:
    line, error = bad
    good = '{"id": "x", "answers": ["a"]}'
    lines = [good] * before + [line] + [good] * after
    content = ending.join(lines) + (ending if last_ends or after else "")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.jsonl"
        path.write_bytes((b"\xef\xbb\xbf" if bom and before else b"") + content.encode("utf-8"))
        problems = [
            (number, message) for number, _, message in json_objects(path) if message is not None
        ]
    assert len(problems) == 1, problems
    number, message = problems[0]
    assert number == before + 1
    found = COLUMN.match(message)
    assert found is not None, message
    assert int(found.group(1)) == error.colno, (line, message, error.msg)
    assert error.msg in message


def test_a_line_cut_short_is_reported_at_its_end_not_at_column_1() -> None:
    line = '{"id": "x", "answers": ["a"]'  # the closing brace lost: an editor shows the problem at column 29
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.jsonl"
        path.write_text(line + "\n", encoding="utf-8")
        [(number, _, message)] = list(json_objects(path))
    assert number == 1 and message == "not valid JSON: Expecting ',' delimiter (column 29)"


# -- the upload page's validation (intake's staging, then the task's reader) ---------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_store(tmp_path_factory, "prediction-notes")


def validate(
    db: Path, task: str, split: str, content: bytes, name: str = "p.jsonl"
) -> intake_form.ValidationReport:
    with tempfile.TemporaryDirectory() as folder:
        return intake_form.validate(
            db, task, split, intake_form.stage_upload(content, name, Path(folder)), filename=name
        )


@settings(max_examples=25)
@given(broken_lines(), st.integers(0, 5))
def test_the_upload_pages_report_gives_the_decode_errors_column(
    demo_db: Path, bad: tuple[str, json.JSONDecodeError], at: int
) -> None:
    line, error = bad
    sample = (
        (SAMPLE_SUBMISSIONS_DIR / "openpi" / "template-guesser.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    lines = sample[:at] + [line] + sample[at:]
    report = validate(demo_db, "openpi", "test", ("\n".join(lines) + "\n").encode("utf-8"))
    bad_json = [p for p in report.problems if p.message.startswith("not valid JSON")]
    assert [(p.line, p.message) for p in bad_json] == [
        (at + 1, f"not valid JSON: {error.msg} (column {error.colno})")
    ]


@pytest.mark.parametrize(
    ("task", "split"), [("openpi", "test"), ("paradise-tip", "test"), ("pm-llm-benchmark", "main")]
)
@pytest.mark.parametrize("content", [b"", b"\n \n\r\n"])
def test_an_empty_file_holds_no_records(
    demo_db: Path, task: str, split: str, content: bytes
) -> None:
    report = validate(demo_db, task, split, content)
    assert not report.ok and [(p.line, p.message) for p in report.problems] == [(None, EMPTY_FILE)]


def test_a_paradise_csv_with_its_header_alone_holds_no_records(demo_db: Path) -> None:
    report = validate(demo_db, "paradise-tip", "test", b"id,label\n", name="p.csv")
    assert [(p.line, p.message) for p in report.problems] == [(None, EMPTY_FILE)]


def test_many_missing_ids_are_listed_in_a_bounded_message() -> None:
    ids = [str(i) for i in range(500)]
    assert listed_ids(ids) == ", ".join(ids[:20]) + " and 480 more"
    assert listed_ids(ids[:3]) == "0, 1, 2"


# -- fields the format does not declare ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "split", "sample", "field"),
    [
        ("openpi", "test", "openpi/template-guesser.jsonl", "answer"),
        ("paradise-tip", "test", "paradise-tip/sample-strong.jsonl", "lable"),
        ("pm-llm-benchmark", "main", "pm-llm-benchmark/acme-large.jsonl", "verdit"),
        ("paged", "dev", "paged/careful-extractor.jsonl", "grpah"),
    ],
)
def test_an_undeclared_field_is_named_with_its_first_line(
    demo_db: Path, task: str, split: str, sample: str, field: str
) -> None:
    lines = (SAMPLE_SUBMISSIONS_DIR / sample).read_text(encoding="utf-8").splitlines()
    plain = validate(demo_db, task, split, ("\n".join(lines) + "\n").encode())
    assert plain.ok and not [w for w in plain.warnings if "not part of" in w], (
        plain.warnings
    )  # the bundled file declares every field
    for at in (1, 2):  # lines 2 and 3 carry a misspelt field
        lines[at] = json.dumps({**json.loads(lines[at]), field: "x"})
    report = validate(demo_db, task, split, ("\n".join(lines) + "\n").encode())
    assert report.ok, report.problems  # said, not refused: the declared fields are all there
    named = [w for w in report.warnings if repr(field) in w]
    assert (
        len(named) == 1 and "(line 2 and 1 more records)" in named[0] and "ignored" in named[0]
    ), report.warnings


@settings(max_examples=100)
@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=6), max_size=40))
def test_undeclared_fields_are_bounded_and_each_named_once_at_its_first_line(
    records: list[dict[str, int]],
) -> None:
    extra = ExtraFields(("id",), cap=5)
    for number, record in enumerate(records, 1):
        extra.see(number, record)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        extra.warn()
    said = [str(w.message) for w in caught if issubclass(w.category, PredictionWarning)]
    first: dict[str, int] = {}
    for number, record in enumerate(records, 1):
        for key in record:
            if key != "id":
                first.setdefault(key, number)
    named = [k for k in first if any(f"field {k!r} (line {first[k]}" in s for s in said)]
    assert len(named) == min(len(first), 5)
    assert len(said) == min(len(first), 5) + (len(first) > 5)
    assert MAX_EXTRA_FIELDS >= 5
