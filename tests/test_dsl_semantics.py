"""Language 2: composition (defaults, families, normaliser reuse, {param}), semantic fingerprints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from procbench.dsl import SpecError, check_text
from procbench.dsl.compiler import spec_digest
from procbench.paths import SPECS_DIR

OPENPI = (SPECS_DIR / "openpi.spec").read_text()
METRIC_EXACT = re.compile(r"  metric exact \{\n.*?\n  \}\n\n", re.S).search(OPENPI).group()  # type: ignore[union-attr]
SLICE_DOMAIN = re.compile(r"  slice domain \{\n.*?\n  \}\n\n", re.S).search(OPENPI).group()  # type: ignore[union-attr]


def _spec(text: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "openpi.spec"  # beside no lock: a warning, not an error
    path.write_text(text)
    return check_text(text, str(path), search=[SPECS_DIR]).spec


def _digest(text: str, tmp_path: Path) -> str:
    return spec_digest(_spec(text, tmp_path))


def _edit(old: str, new: str, text: str = OPENPI) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_composition_expands_to_the_written_out_model(tmp_path: Path) -> None:
    spec = _spec(OPENPI, tmp_path)
    assert [m.name for m in spec.metrics[:3]] == ["exact_p", "exact_r", "exact_f1"]
    assert [m.display for m in spec.metrics[:3]] == ["Exact P", "Exact R", "Exact F1"]
    assert [mt.outputs for mt in spec.score.matches] == [
        ("exact_p", "exact_r", "exact_f1"),
        ("bleu_p", "bleu_r", "bleu_f1"),
        ("rouge_p", "rouge_r", "rouge_f1"),
    ]
    exact = spec.score.matches[0]
    # defaults reached every match block; `content` inlined `clean`'s four steps before drop_words
    assert exact.gold == "answers" and exact.matcher.kwargs == (("dedup", False),)
    assert [s.name for s in exact.normaliser] == [
        "strip",
        "lowercase",
        "delete_chars",
        "squeeze_whitespace",
        "drop_words",
    ]
    assert [s.name for s in exact.similarity_normaliser] == [
        "strip",
        "lowercase",
        "delete_chars",
        "squeeze_whitespace",
        "stem",
    ]
    assert (
        spec.data.sources[0].path == "openpi/data/gold/{split}/id_answers.jsonl"
    )  # {gold} interpolated, {split} kept


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('display     = "Exact"', 'display     = "Exact match"'),
        (
            "the best exact match (1 or 0)",
            "the best exact match",
        ),  # a metric's description is display text
        ('"Health, unseen in training"', '"Health"'),  # so is a slice value's label
        (
            'title       = "OpenPI: open-vocabulary state changes in procedural text"',
            'title = "OpenPI"',
        ),
        (METRIC_EXACT, ""),  # moved below
        ("# Template words", "# Words of the answer template"),
        # paper rows (kept in openpi.reported beside the spec) written inline instead, and fewer of them
        (
            '  reported    = file("openpi.reported")\n',
            '  reported "EMNLP 2020, Table 4" { split = test  columns = [exact_f1]  rows = { "GPT-2" = [0.043] } }\n',
        ),
        (SLICE_DOMAIN, ""),  # moved below
    ],
)
def test_display_comments_and_order_keep_the_fingerprint(
    old: str, new: str, tmp_path: Path
) -> None:
    text = _edit(old, new)
    if not new and "metric exact" in old:
        text = _edit("  metric rouge {", old + "  metric rouge {", text)
    if not new and "slice domain" in old:
        text = _edit("  slice modality {", old + "  slice modality {", text)
    assert _digest(text, tmp_path) == _digest(OPENPI, tmp_path)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("params { dedup = false", "params { dedup = true"),
        ('path = "{gold}/id_answers.jsonl"', 'path = "{gold}/id_answers_v2.jsonl"'),
        ('drop_words(["and", "was",', 'drop_words(["and",'),
        ("coco_bleu(n = 2)", "coco_bleu(n = 3)"),
        ("meta.question_metadata.topic, {", "meta.question_metadata.category, {"),
        ("slice category {", "slice topic {"),
        ('{ Health = "unseen" }', '{ Health = "unseen", Food = "unseen" }'),
    ],
)
def test_anything_that_can_change_a_number_changes_the_fingerprint(
    old: str, new: str, tmp_path: Path
) -> None:
    assert _digest(_edit(old, new), tmp_path) != _digest(OPENPI, tmp_path)


def test_an_unknown_placeholder_is_an_error_at_its_column(tmp_path: Path) -> None:
    text = _edit('path = "{gold}/id_answers.jsonl"', 'path = "{gld}/id_answers.jsonl"')
    with pytest.raises(SpecError) as caught:
        _spec(text, tmp_path)
    (error,) = caught.value.diagnostics
    line = text.splitlines()[error.span.line - 1]
    assert "unknown parameter in {...} 'gld'" in error.message and line[
        error.span.column - 1 :
    ].startswith("{gld}")
    assert "did you mean 'gold'" in error.hint


def test_a_normaliser_cycle_is_an_error(tmp_path: Path) -> None:
    text = _edit(
        "normaliser clean { steps = [strip(),", "normaliser clean { steps = [content, strip(),"
    )
    with pytest.raises(SpecError, match="normaliser cycle: clean -> content -> clean"):
        _spec(text, tmp_path)


def _reported(old: str, new: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """openpi.spec checked beside an edited copy of its reported file (the paper rows)."""
    (tmp_path / "openpi.reported").write_text(
        _edit(old, new, (SPECS_DIR / "openpi.reported").read_text())
    )
    return _spec(OPENPI, tmp_path)


def test_a_reported_value_on_a_slice_value_that_cannot_occur(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        _reported("      seen = [0.251", "      sen = [0.251", tmp_path)
    (error,) = caught.value.diagnostics
    assert (
        "unknown value of slice 'domain' 'sen'" in error.message
        and "did you mean 'seen'" in error.hint
    )
    assert error.path == str(tmp_path / "openpi.reported")


def test_a_row_with_the_wrong_number_of_values(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="has 2 values for 3 columns"):
        _reported("[0.0428, 0.1612, 0.3244]", "[0.0428, 0.1612]", tmp_path)


@pytest.mark.parametrize(
    "path", ["../../../etc/gold.jsonl", "/etc/gold.jsonl", "openpi\\\\gold.jsonl"]
)
def test_a_data_path_that_would_leave_the_data_root_is_refused(path: str, tmp_path: Path) -> None:
    text = _edit('path = "{gold}/id_answers.jsonl"', f'path = "{path}"')
    with pytest.raises(SpecError) as caught:
        _spec(text, tmp_path)
    (error,) = caught.value.diagnostics
    assert error.message.startswith("source 'gold': path") and text.splitlines()[
        error.span.line - 1
    ].strip().startswith("source gold")
