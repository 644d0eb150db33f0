"""The component reference in docs/language.md is generated from the registry and must not drift."""

from __future__ import annotations

import typing
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from procbench.dsl import reference
from procbench.runners.runtime import registry


def test_the_reference_in_language_md_is_current() -> None:
    text = reference.DOC_PATH.read_text(encoding="utf-8")
    section = reference.section_of(text)
    assert section is not None, (
        f"{reference.DOC_PATH} lost its {reference.BEGIN} / {reference.END} markers"
    )
    assert section == reference.render_reference(), (
        f"the component reference in {reference.DOC_PATH.name} differs from the registry: run `{reference.REGENERATE}` and commit the result"
    )


def test_the_reference_has_every_builtin_with_signature_contract_and_doc() -> None:
    text = reference.render_reference()
    per_kind = dict(
        part.split("\n", 1) for part in text.split("\n#### ")[1:]
    )  # kind -> its entries
    builtins = [c for c in registry.all_components() if c.origin == registry.BUILTIN_ORIGIN]
    assert set(per_kind) == {c.kind for c in builtins}
    for comp in builtins:
        entry = f"\n- `{reference.signature(comp)}` (version {comp.version})"
        section = "\n" + per_kind[comp.kind]
        assert entry in section, entry
        block = section[section.index(entry) :].split("\n- ", 2)[1]
        assert reference._markdown(reference.first_paragraph(comp.doc)) in block
        for line in comp.contract.describe():
            assert f"\n  - {reference.contract_line(line)}" in block


def test_components_from_elsewhere_stay_out_of_the_shipped_reference() -> None:
    mine = registry.Component(
        "similarity",
        "only_in_my_folder",
        "1",
        lambda: None,
        (),
        "Mine.",
        registry.Contract(),
        "/tmp/specs/components/x.py",
    )
    shipped = registry.get("similarity", "coco_rouge_l")
    text = reference.render_reference([mine, shipped])
    assert "only_in_my_folder" not in text and "coco_rouge_l(beta: float = 1.2)" in text


def test_parameters_are_spelled_as_specs_write_them() -> None:
    assert (
        reference.type_spelling(typing.Literal["porter", "snowball_english"])
        == 'enum("porter", "snowball_english")'
    )
    assert reference.type_spelling(int | None) == "optional(int)"
    assert reference.type_spelling(list[str]) == "list(str)"
    assert reference.type_spelling(registry.GoldField) == "gold field"
    assert (
        reference.param_spelling(registry.Param("gold_field", registry.GoldField, "label"))
        == "gold_field: gold field = label"
    )
    assert reference.param_spelling(registry.Param("dedup", bool, False)) == "dedup: bool = false"
    assert (
        reference.param_spelling(registry.Param("round_digits", int | None, None))
        == "round_digits: optional(int)"
    )
    assert reference.param_spelling(registry.Param("words", list[str])) == "words: list(str)"
    assert (
        reference.first_paragraph("Scores ``a``\nagainst b (see :mod:`runners.x`).\n\nMore.")
        == "Scores `a` against b (see `runners.x`)."
    )


def test_long_name_lists_are_cut_and_markup_is_escaped() -> None:
    names = [f"q{i}_tp" for i in range(40)]
    line = reference.contract_line("emits: " + ", ".join(names))
    assert (
        line.startswith("emits: q0_tp, q1_tp,")
        and "q15_tp and 24 more" in line
        and "q16_tp" not in line
    )
    assert reference.contract_line("emits: a, b") == "emits: a, b"
    assert (
        reference._markdown("per q<n> and `q<n>` *x*, sim <= 0.5")
        == "per q&lt;n> and `q<n>` \\*x\\*, sim <= 0.5"
    )


_line = st.text(
    st.characters(
        blacklist_categories=["Cs"], blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    ),
    max_size=20,
)


@given(
    before=st.lists(_line, max_size=4),
    section=st.lists(_line, min_size=1, max_size=4),
    after=st.lists(_line, max_size=4),
)
def test_writing_a_section_keeps_the_rest_of_the_file(
    before: list[str], section: list[str], after: list[str]
) -> None:
    if any(
        reference.BEGIN in line or reference.END in line for line in [*before, *section, *after]
    ):
        return
    doc = "\n".join([*before, reference.BEGIN, "old", reference.END, *after])
    body = "\n".join(section).strip("\n") + "\n"
    updated = reference.with_section(doc, body)
    assert reference.section_of(updated) == body
    assert updated.startswith("\n".join([*before, reference.BEGIN])) and updated.endswith(
        "\n".join([reference.END, *after])
    )


def test_write_and_check_round_trip(tmp_path: Path) -> None:
    doc = tmp_path / "language.md"
    doc.write_text(
        f"# Language\n\n## Components\n\nProse.\n\n{reference.BEGIN}\n{reference.END}\n\n## Errors\n",
        encoding="utf-8",
    )
    assert reference.main(["--check", "--doc", str(doc)]) == 1
    assert reference.main(["--write", "--doc", str(doc)]) == 0
    assert reference.main(["--check", "--doc", str(doc)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Language\n\n## Components\n\nProse.\n\n") and text.endswith(
        f"{reference.END}\n\n## Errors\n"
    )
    assert reference.section_of(text) == reference.render_reference()
