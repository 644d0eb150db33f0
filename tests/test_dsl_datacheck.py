"""``procbench check --data``: spec statements checked against the files, where present."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsl import check_file, compile_spec
from dsl.datacheck import check_against_data
from procbench.api import all_spec_paths
from procbench.paths import SAMPLE_DATA_ROOT, SPECS_DIR


@pytest.mark.parametrize("path", all_spec_paths(), ids=lambda p: p.stem)
def test_shipped_specs_fit_the_real_data(path: Path, data_root: Path) -> None:
    spec = check_file(path, search=[SPECS_DIR]).spec
    diagnostics, checked = check_against_data(spec, compile_spec(spec), data_root)
    assert checked, f"no split of {spec.name} could be read from {data_root}"
    assert [d.render() for d in diagnostics if d.severity == "error"] == []


@pytest.mark.parametrize("path", all_spec_paths(), ids=lambda p: p.stem)
def test_shipped_specs_fit_the_bundled_samples(path: Path) -> None:
    spec = check_file(path, search=[SPECS_DIR]).spec
    diagnostics, checked = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT)
    assert checked, f"the samples hold no split of {spec.name}"
    assert [d.render() for d in diagnostics if d.severity == "error"] == []


def test_a_wrong_field_path_is_reported_at_its_line(tmp_path: Path) -> None:
    source = (SPECS_DIR / "openpi.spec").read_text().replace("category = meta.question_metadata.topic", "category = meta.question_metadata.topik")
    spec_file = tmp_path / "openpi.spec"
    spec_file.write_text(source)
    spec = check_file(spec_file).spec
    diagnostics, _ = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT)
    warnings = [d for d in diagnostics if "category" in d.message]
    assert len(warnings) == 2  # one per split of the samples (dev, test)
    for warning in warnings:
        assert warning.severity == "warning" and "'unknown'" in warning.message
        assert source.splitlines()[warning.span.line - 1].lstrip().startswith('slice "category"')


def test_a_missing_gold_field_is_an_error(tmp_path: Path) -> None:
    source = (SPECS_DIR / "openpi.spec").read_text().replace("answers = gold.answers", "answers = gold.answer")
    spec_file = tmp_path / "openpi.spec"
    spec_file.write_text(source)
    spec = check_file(spec_file).spec
    diagnostics, _ = check_against_data(spec, compile_spec(spec), SAMPLE_DATA_ROOT)
    errors = [d for d in diagnostics if d.severity == "error"]
    assert errors and "field 'answers' <- gold.answer is missing in every record" in errors[0].message
    assert "answers = gold.answer" in source.splitlines()[errors[0].span.line - 1]
