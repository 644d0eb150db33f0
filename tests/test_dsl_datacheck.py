"""``procbench check --data``: spec statements checked against the files, where present."""

from __future__ import annotations

from pathlib import Path

import pytest

from procbench.dsl import SpecError, check_file, compile_spec
from procbench.dsl.datacheck import check_against_data
from procbench.api import all_spec_paths
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR


@pytest.mark.parametrize("path", all_spec_paths(), ids=lambda p: p.stem)
def test_shipped_specs_fit_the_real_data(path: Path, data_root: Path) -> None:
    spec = check_file(path, search=[SPECS_DIR]).spec
    diagnostics, checked = check_against_data(spec, compile_spec(spec), data_root)
    if (
        not checked and not spec.fetch
    ):  # fetch blocks say where the real data comes from; without them it is wherever its maintainer keeps it
        pytest.skip(f"{spec.name} has no fetch blocks and none of its files are under {data_root}")
    assert checked, f"no split of {spec.name} could be read from {data_root}"
    assert [d.render() for d in diagnostics if d.severity == "error"] == []


@pytest.mark.parametrize("path", all_spec_paths(), ids=lambda p: p.stem)
def test_shipped_specs_fit_the_bundled_samples(path: Path) -> None:
    spec = check_file(path, search=[SPECS_DIR]).spec
    diagnostics, checked = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT)
    if not checked and not any(
        (SAMPLE_SUBMISSIONS_DIR / name).is_dir() for name in (spec.name, str(spec.extends))
    ):
        pytest.skip(
            f"{spec.name} bundles no samples: not required of a new task until it ships (procbench check --ship)"
        )
    assert checked, f"the samples hold no split of {spec.name}, yet it has sample submissions"
    # the samples are a few items of some splits: a split they leave out is expected, nothing else
    assert [
        d.render()
        for d in diagnostics
        if d.severity == "error" and "a data file is missing" not in d.message
    ] == []


def test_missing_data_files_fail_the_check(tmp_path: Path) -> None:
    spec = check_file(SPECS_DIR / "openpi.spec", search=[SPECS_DIR]).spec
    diagnostics, checked = check_against_data(spec, compile_spec(spec), tmp_path)
    assert checked == []
    assert [d.severity for d in diagnostics] == ["error", "error"]  # dev and test
    assert all(
        "a data file is missing" in d.message and "procbench data fetch openpi" in d.hint
        for d in diagnostics
    )


def _variant(tmp_path: Path, old: str, new: str) -> tuple[str, list]:
    source = (SPECS_DIR / "openpi.spec").read_text()
    assert old in source
    source = source.replace(old, new)
    spec_file = tmp_path / "openpi.spec"
    spec_file.write_text(source)
    spec = check_file(spec_file).spec
    diagnostics, _ = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT)
    return source, [d for d in diagnostics if d.severity == "error"]


def test_a_wrong_label_path_is_one_error_at_its_line(tmp_path: Path) -> None:
    source, errors = _variant(
        tmp_path,
        "category = meta.question_metadata.topic",
        "category = meta.question_metadata.topik",
    )
    assert (
        len(errors) == 1
    )  # one mistake: not one per split of the samples (dev, test), nor one per item
    for error in errors:
        assert (
            "label 'category'" in error.message
            and "topik" in error.message
            and "more like it" in error.message
        )
        assert (
            "dev/id_question_metadata.jsonl" in error.message
            and "test/id_question_metadata.jsonl" in error.message
        )  # where the others are
        assert (
            source.splitlines()[error.span.line - 1]
            .lstrip()
            .startswith("category = meta.question_metadata.topik")
        )


def test_a_missing_gold_field_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    source, errors = _variant(
        tmp_path, "answers: list(str) = gold.answers", "answers: list(str) = gold.answer"
    )
    assert (
        errors
        and "field 'answers'" in errors[0].message
        and "id_answers.jsonl:1" in errors[0].message
    )
    assert "gold.answer" in source.splitlines()[errors[0].span.line - 1]


def test_a_field_of_the_wrong_type_is_an_error(tmp_path: Path) -> None:
    _, errors = _variant(
        tmp_path,
        "answers: list(str) = gold.answers",
        "answers: list(str) = gold.answers  topic: int = meta.question_metadata.topic",
    )
    assert len(errors) == 1 and all(
        "field 'topic'" in e.message and "must be int" in e.message for e in errors
    )  # one mistake, both splits


def test_a_text_field_under_a_match_block_is_refused_before_anything_runs(tmp_path: Path) -> None:
    source = (
        (SPECS_DIR / "openpi.spec")
        .read_text()
        .replace("answers: list(str) = gold.answers", "answers: str = gold.answers")
    )
    spec_file = tmp_path / "openpi.spec"
    spec_file.write_text(source)
    with pytest.raises(SpecError) as caught:
        check_file(spec_file)
    (error,) = (
        caught.value.diagnostics
    )  # three match blocks share the field: still one mistake, one error
    assert "gold field 'answers' is str, but best_match() matches list(any)" in error.message


def test_a_map_key_the_data_never_has_is_an_error(tmp_path: Path) -> None:
    source, errors = _variant(tmp_path, "{ Health = ", "{ Helth = ")
    assert len(errors) == 1 and "map() key 'Helth'" in errors[0].message
    assert "Helth" in source.splitlines()[errors[0].span.line - 1]


def test_the_bundled_samples_are_a_partial_root_where_missing_splits_are_warnings() -> None:
    spec = check_file(SPECS_DIR / "propara.spec", search=[SPECS_DIR]).spec
    strict, _ = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT)
    partial, checked = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT, partial=True)
    assert any(d.severity == "error" and "'train'" in d.message for d in strict)
    assert checked and not [d for d in partial if d.severity == "error"]
    assert any(d.severity == "warning" and "'train'" in d.message for d in partial)
