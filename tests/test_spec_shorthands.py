"""Shorthands that keep specs short without changing a number: each equals its spelled-out form.

Fetch blocks without ``files`` fetch the data sources' paths, an answer label reads the key named
like its block, ``delete_punctuation()`` is ``delete_chars`` of ``string.punctuation`` (a preset,
same fingerprint), and ``fmt`` keeps a block of up to four one-line statements on one line.
"""

from __future__ import annotations

import shutil
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.dsl import SpecError, check_file, check_text
from procbench.dsl.compiler import spec_digest
from procbench.dsl.parser import parse as parse_text
from procbench.dsl.printer import format_file
from procbench.paths import SPECS_DIR
from procbench.runners.runtime import registry

SPELLED_OUT = {
    "delete_punctuation()": 'delete_chars("!\\"#$%&\'()*+,-./:;<=>?@[\\\\]^_`{|}~")',
    "text = answer }": "text = answer  label = modality }",
    '    into = "openpi/"\n': '    into = "openpi/"\n'
    '    files = ["data/gold/{split}/id_answers.jsonl", "data/gold/{split}/id_answers_metadata.jsonl", "data/gold/{split}/id_question_metadata.jsonl"]\n',
}


def _openpi_copy(tmp_path: Path, edits: dict[str, str]) -> Path:
    folder = tmp_path / "specs"
    folder.mkdir()
    for path in SPECS_DIR.iterdir():
        if path.is_file() and path.stem == "openpi":
            shutil.copyfile(path, folder / path.name)
    spec = folder / "openpi.spec"
    text = spec.read_text(encoding="utf-8")
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec.write_text(text, encoding="utf-8")
    return spec


def test_the_shipped_openpi_spec_equals_its_spelled_out_form(tmp_path: Path) -> None:
    shipped = check_file(SPECS_DIR / "openpi.spec").spec
    spelled = check_file(_openpi_copy(tmp_path, SPELLED_OUT)).spec
    assert shipped.to_dict() == spelled.to_dict()
    assert spec_digest(shipped) == spec_digest(spelled)
    gold_files = ["id_answers.jsonl", "id_answers_metadata.jsonl", "id_question_metadata.jsonl"]
    assert [f.path for f in shipped.fetch] == [
        f"openpi/data/gold/{split}/{name}" for split in ("dev", "test") for name in gold_files
    ]
    assert shipped.data.answer_labels[0].label == "modality"
    steps = next(mt.normaliser for mt in shipped.score.matches if mt.name == "exact")
    assert ("delete_chars", (("chars", string.punctuation),)) in [(c.name, c.kwargs) for c in steps]


def test_an_answer_label_naming_another_key_reads_that_key(tmp_path: Path) -> None:
    spec = check_file(
        _openpi_copy(tmp_path, {"text = answer }": "text = answer  label = kind }"})
    ).spec
    assert spec.data.answer_labels[0].label == "kind"


def test_a_fetch_block_without_files_and_no_source_under_into_is_refused() -> None:
    text = (
        (SPECS_DIR / "openpi.spec")
        .read_text(encoding="utf-8")
        .replace('into = "openpi/"', 'into = "elsewhere/"')
    )
    with pytest.raises(SpecError) as refused:
        check_text(text, "openpi.spec", search=[SPECS_DIR])
    errors = [d.render(text) for d in refused.value.diagnostics if d.severity == "error"]
    assert len(errors) == 1, errors
    assert (
        "this fetch block lists no files and no data source reads a path under into = 'elsewhere/'"
        in errors[0]
    )
    line = text[: text.index("  fetch {")].count("\n") + 1
    assert (
        f"openpi.spec:{line}:3" in errors[0]
        and 'files = ["path/relative/to/the/origin"]' in errors[0]
    )


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_delete_punctuation_removes_exactly_pythons_ascii_punctuation(text: str) -> None:
    step = registry.get("normaliser", "delete_punctuation").build()
    assert step(text) == "".join(ch for ch in text if ch not in string.punctuation)


def test_fmt_keeps_four_one_line_statements_on_one_line_and_breaks_five_or_wide_ones() -> None:
    source = 'task t {\n  predictions {\n    format = "jsonl"\n    id = id\n    schema { id = str  answers = list(str) }\n  }\n}\n'
    assert (
        '  predictions { format = "jsonl"  id = id  schema { id = str  answers = list(str) } }\n'
        in format_file(parse_text(source))
    )
    five = source.replace(
        "    id = id\n", '    id = id\n    encoding = "utf-8"\n    optional = false\n'
    )
    assert "  predictions {\n" in format_file(parse_text(five))
    wide = source.replace(
        "answers = list(str)",
        "answers_with_a_very_long_field_name_for_the_state_changes_of_each_step = list(str)",
    )
    printed = format_file(parse_text(wide))
    assert "  predictions {\n" in printed and all(len(line) <= 100 for line in printed.splitlines())
    assert format_file(parse_text(printed)) == printed
