"""Typos that used to pass `check`, each now refused with file:line:col, a hint and exit 3; paper rows in a file beside the spec."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.dsl import SpecError, check_file, check_text, compile_spec
from procbench.dsl.compiler import spec_digest
from procbench.dsl.datacheck import check_against_data
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT, SPECS_DIR

runner = CliRunner()
EXIT_SPEC_ERROR = 3


def _copy(tmp_path: Path, *names: str) -> Path:
    """The named files of specs/ (and the files beside openpi.spec) copied into a fresh folder."""
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    for path in SPECS_DIR.iterdir():
        if path.is_file() and (path.name in names or path.stem == "openpi"):
            shutil.copyfile(path, folder / path.name)
    return folder


def _edit(path: Path, old: str, new: str) -> tuple[int, int]:
    """Replace ``old`` once; the (line, column) where the new text starts."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    at = text.index(old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _refused(spec: Path, position: str, message: str, hint: str) -> None:
    """`procbench check` exits 3 with ``position: error: message`` and the hint."""
    result = runner.invoke(app, ["check", str(spec)])
    assert result.exit_code == EXIT_SPEC_ERROR, result.output
    assert f"{position}: error: {message}" in result.output, result.output
    assert f"hint: {hint}" in result.output, result.output


# -- paper rows beside the spec ---------------------------------------------------------------


def test_reported_rows_from_the_file_beside_the_spec_equal_the_rows_written_inline(
    tmp_path: Path,
) -> None:
    spec = (SPECS_DIR / "openpi.spec").read_text(encoding="utf-8")
    beside = (SPECS_DIR / "openpi.reported").read_text(encoding="utf-8")
    blocks = beside[beside.index('reported "') :]  # after the file's header comment
    inline_text = spec.replace('  reported    = file("openpi.reported")\n', "").replace(
        "\n  fetch {",
        "\n"
        + "".join("  " + line if line else line for line in blocks.splitlines(True))
        + "\n  fetch {",
    )
    assert inline_text.count('reported "') == beside.count('reported "') == 3
    folder = tmp_path / "inline"
    folder.mkdir()
    (folder / "openpi.spec").write_text(inline_text, encoding="utf-8")
    shutil.copyfile(SPECS_DIR / "openpi.bib", folder / "openpi.bib")
    inline = check_file(folder / "openpi.spec").spec
    from_file = check_file(SPECS_DIR / "openpi.spec").spec
    assert [r.path for r in from_file.reported] == [str(SPECS_DIR / "openpi.reported")] * 5
    assert (
        from_file.to_dict()["reported"] == inline.to_dict()["reported"]
        and len(inline.reported) == 5
    )
    assert spec_digest(from_file) == spec_digest(
        inline
    )  # paper rows are not part of the fingerprint
    # openpi-head names its own (empty) file: openpi's rows were computed without de-duplication; the citation is inherited
    head = check_file(SPECS_DIR / "openpi-head.spec", search=[SPECS_DIR]).spec
    assert head.reported == ()
    assert (
        head.citation
        == from_file.citation
        == (SPECS_DIR / "openpi.bib").read_text(encoding="utf-8")
    )
    # a variant naming no file of its own inherits its parent's rows, from beside the parent
    folder = _copy(tmp_path, "openpi-head.spec")
    _edit(
        folder / "openpi-head.spec",
        '\n  reported = file("openpi-head.reported")  # none: openpi\'s were computed without de-duplication\n',
        "\n",
    )
    assert [r.path for r in check_file(folder / "openpi-head.spec").spec.reported] == [
        str(folder / "openpi.reported")
    ] * 5


def test_a_mistake_in_the_reported_file_is_reported_at_its_own_line(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    line, col = _edit(
        folder / "openpi.reported",
        "columns = [bleu_p, bleu_r, bleu_f1]",
        "columns = [bleu_p, bleu_rr, bleu_f1]",
    )
    with pytest.raises(SpecError) as caught:
        check_file(folder / "openpi.spec")
    (error,) = caught.value.diagnostics
    assert error.path == str(folder / "openpi.reported") and (
        error.span.line,
        error.span.column,
    ) == (line, col + len("columns = [bleu_p, "))
    _refused(
        folder / "openpi.spec",
        f"{folder / 'openpi.reported'}:{line}:{col + len('columns = [bleu_p, ')}",
        "unknown metric 'bleu_rr'",
        "did you mean 'bleu_r'?",
    )
    rendered = str(caught.value)
    assert (
        "columns = [bleu_p, bleu_rr, bleu_f1]" in rendered
    )  # the caret line is the reported file's, not the spec's


def test_a_reported_file_holds_only_reported_blocks_and_file_names_stay_beside_the_spec(
    tmp_path: Path,
) -> None:
    folder = _copy(tmp_path)
    (folder / "openpi.reported").write_text(
        (SPECS_DIR / "openpi.reported").read_text(encoding="utf-8")
        + '\nmetric extra { display = "x" }\n',
        encoding="utf-8",
    )
    last = len((folder / "openpi.reported").read_text(encoding="utf-8").splitlines())
    _refused(
        folder / "openpi.spec",
        f"{folder / 'openpi.reported'}:{last}:1",
        "a reported file holds only",
        "the task's other statements belong in its spec",
    )
    line, col = _edit(
        folder / "openpi.spec", 'file("openpi.reported")', 'file("../openpi.reported")'
    )
    _refused(
        folder / "openpi.spec",
        f"{folder / 'openpi.spec'}:{line}:{col + len('file(')}",
        "file() names a file in the spec's folder",
        "a plain file name",
    )
    line, col = _edit(
        folder / "openpi.spec", 'license     = "MIT"', 'license     = file("openpi.bib")'
    )
    _refused(
        folder / "openpi.spec",
        f"{folder / 'openpi.spec'}:{line}:{col + len('license     = ')}",
        "license cannot be read from a file",
        "file() gives the text of",
    )


def test_a_missing_reported_file_is_a_warning_like_a_missing_lock(tmp_path: Path) -> None:
    folder = tmp_path / "alone"
    folder.mkdir()
    shutil.copyfile(SPECS_DIR / "openpi.spec", folder / "openpi.spec")
    result = check_file(folder / "openpi.spec")
    assert result.spec.reported == () and result.spec.citation == ""
    messages = [w.message for w in result.warnings]
    assert "no file 'openpi.reported' beside the spec: its paper rows are left out" in messages
    assert "no file 'openpi.bib' beside the spec: the citation is left out" in messages
    found = check_file(
        folder / "openpi.spec", search=[SPECS_DIR]
    ).spec  # found in the search path, as a parent spec is
    assert len(found.reported) == 5


def test_fmt_formats_the_reported_files_beside_the_specs(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fmt", "--check"])
    assert result.exit_code == 0, result.output
    folder = _copy(tmp_path)
    _edit(
        folder / "openpi.reported",
        "  split   = test\n  slice   = domain",
        "  split = test\n  slice   = domain",
    )
    result = runner.invoke(app, ["fmt", "--check", str(folder / "openpi.reported")])
    assert result.exit_code == 1 and "not canonically formatted" in result.output
    assert runner.invoke(app, ["fmt", str(folder / "openpi.reported")]).exit_code == 0
    assert (folder / "openpi.reported").read_text(encoding="utf-8") == (
        SPECS_DIR / "openpi.reported"
    ).read_text(encoding="utf-8")


# -- a. a variant setting a param its parent does not declare ---------------------------------


def test_a_variant_param_the_parent_does_not_declare_is_an_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "openpi-head.spec")
    line, col = _edit(
        folder / "openpi-head.spec", "params { dedup = true }", "params { edup = true }"
    )
    _refused(
        folder / "openpi-head.spec",
        f"{folder / 'openpi-head.spec'}:{line}:{col + len('params { ')}",
        "unknown param 'edup' (openpi declares: dedup, gold)",
        "did you mean 'dedup'?",
    )


def test_a_variant_may_add_a_param_it_uses_itself(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "openpi-head.spec")
    _edit(
        folder / "openpi-head.spec",
        "params { dedup = true }",
        'params { dedup = true  which = "current" }\n  title = "OpenPI ({which} scorer)"',
    )
    _edit(
        folder / "openpi-head.spec",
        '  title    = "OpenPI (current scorer: de-duplicated predictions)"\n',
        "",
    )
    assert check_file(folder / "openpi-head.spec").spec.title == "OpenPI (current scorer)"


# -- b. a task named otherwise than its file --------------------------------------------------


def test_a_task_name_that_differs_from_its_file_name_is_an_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "openpi-head.spec")
    line, col = _edit(folder / "openpi-head.spec", "task openpi-head {", "task openpi-heda {")
    _refused(
        folder / "openpi-head.spec",
        f"{folder / 'openpi-head.spec'}:{line}:{col + len('task ')}",
        "task 'openpi-heda' is written in openpi-head.spec",
        "write `task openpi-head { ... }`",
    )


# -- c. a template name nothing looks up, a variable it is not given --------------------------


def test_a_template_name_typo_is_an_error_listing_the_known_names(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "pm-llm-benchmark.spec", "pm-llm-benchmark.lock")
    spec = folder / "pm-llm-benchmark.spec"
    line, col = _edit(spec, "template judge_image {", "template judge_imag {")
    _refused(
        spec,
        f"{spec}:{line}:{col + len('template ')}",
        "unknown template 'judge_imag'",
        "did you mean 'judge_image'? known templates: judge (",
    )


def test_a_template_variable_it_is_not_given_is_an_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "pm-llm-benchmark.spec", "pm-llm-benchmark.lock")
    spec = folder / "pm-llm-benchmark.spec"
    _edit(spec, '{{ answer }}"""\n  }\n\n  fetch', '{{ answr }}"""\n  }\n\n  fetch')
    result = runner.invoke(app, ["check", str(spec)])
    assert (
        result.exit_code == EXIT_SPEC_ERROR
        and "template 'judge_image' uses the variable 'answr', which it is not given"
        in result.output
    ), result.output
    assert "did you mean 'answer'?" in result.output


# -- d. a reported value on an answer-label slice -----------------------------------------------


def test_a_reported_answer_label_value_the_data_lacks_is_an_error_on_check_data(
    tmp_path: Path,
) -> None:
    folder = _copy(tmp_path)
    line, _ = _edit(folder / "openpi.reported", "with_image = [", "with_imag = [")
    spec = check_file(
        folder / "openpi.spec"
    ).spec  # only the data knows the values of an answer label
    diagnostics, checked = check_against_data(
        spec, compile_spec(spec), SAMPLE_DATA_ROOT, splits=("test",)
    )
    assert checked == ["test"]
    (error,) = [d for d in diagnostics if "with_imag" in d.message]
    assert (
        error.severity == "error"
        and error.path == str(folder / "openpi.reported")
        and error.span.line == line
    )
    assert (
        "answer label 'modality' = 'with_imag'" in error.message
        and "did you mean 'with_image'?" in error.hint
    )
    assert "with_imag = [" in error.render()  # shown with the reported file's line
    spec = check_file(SPECS_DIR / "openpi.spec").spec
    assert not [
        d
        for d in check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT, splits=("test",))[0]
        if "reported row" in d.message
    ]


# -- e. field_match over fields of different types --------------------------------------------

FIELD_MATCH = """
task fm {{
  title = "t"
  version = "1"
  primary = correct
  data {{
    splits = [test]
    source gold {{ format = "jsonl"  path = "x/{{split}}.jsonl" }}
    id = gold.id
    fields {{ label: {gold} = gold.label }}
  }}
  predictions {{ format = "jsonl"  schema {{ id = str  label = {pred} }} }}
  score {{ scorer = field_match(gold_field = label, prediction_field = label)  aggregate = mean() }}
  metric correct {{ display = "Accuracy" }}
}}
"""


@pytest.mark.parametrize(
    ("gold", "pred"),
    [("str", "int"), ("int", "float"), ("str", "bool"), ('enum("0", "1")', "enum(0, 1, 2)")],
)
def test_field_match_over_fields_of_different_types_is_refused(gold: str, pred: str) -> None:
    with pytest.raises(SpecError) as caught:
        check_text(FIELD_MATCH.format(gold=gold, pred=pred), "fm.spec")
    (error,) = caught.value.diagnostics
    assert (
        error.message.startswith("field_match(): gold field 'label' is ")
        and "prediction field 'label' is" in error.message
    )
    assert error.span.line == 13 and "compared as text" in error.hint


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ("str", "str"),
        ("int", "int"),
        ('enum("0", "1", "2")', "enum(0, 1, 2)"),
        ("str", "optional(str)"),
        ("any", "int"),
    ],
)
def test_field_match_over_fields_that_compare_alike_passes(gold: str, pred: str) -> None:
    assert (
        check_text(FIELD_MATCH.format(gold=gold, pred=pred), "fm.spec").spec.score.scorer.name
        == "field_match"
    )  # type: ignore[union-attr]
