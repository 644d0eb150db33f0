"""NAACL'18 sentence-level task: reading, validation, events, location match and bounds (docs/metrics.md §2B)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners import GoldSet, InvalidPredictions, PredictionWarning
from procbench.runners.propara.naacl18 import (
    aggregate_naacl18,
    read_naacl18,
    read_naacl18_grid,
    score_naacl18,
)
from procbench.runners.propara.naacl18_grid import needed_rows
from procbench.runners.metrics._outcomes import AnswerOutcomes
from procbench.runners.runtime.registry import get
from procbench.runners.library.text import Pipeline, delete_chars, lowercase, stem
from tests.naacl18_samples import SAMPLE_GOLD, SAMPLE_LINES, random_grids

PROGLOBAL = "proglobal.untuned.test.output.tsv"


def _validate(tmp_path: Path, text: str, gold: GoldSet = SAMPLE_GOLD):
    path = tmp_path / "grid.tsv"
    path.write_text(text, encoding="utf-8")
    return read_naacl18_grid(path, gold)


def _problems(
    tmp_path: Path, text: str, gold: GoldSet = SAMPLE_GOLD
) -> list[tuple[int | None, str, str | None]]:
    with pytest.raises(InvalidPredictions) as caught:
        _validate(tmp_path, text, gold)
    return [(p.line, p.message, p.item_id) for p in caught.value.problems]


def test_components_are_registered() -> None:
    assert get("reader", "propara.naacl18").fn is read_naacl18
    assert get("predictions", "propara.naacl18_grid").fn is read_naacl18_grid
    assert get("scorer", "propara.naacl18").fn is score_naacl18
    assert get("aggregator", "propara.naacl18").fn is aggregate_naacl18


def _location_counts(predicted: str, gold: str) -> bool:
    """Upstream's location check as the spec declares it: answer_outcomes(match = "contained") over the place normaliser."""
    place = Pipeline.of([lowercase(), delete_chars('"'), stem("porter2")])
    return AnswerOutcomes(match="contained").matches(place(predicted), place(gold))


def test_location_match_is_asymmetric() -> None:
    """docs/metrics.md §2B.4: "soil" matches gold "the soil"; "the soil" does not match gold "soil"."""
    assert _location_counts("soil", "the soil")
    assert not _location_counts("the soil", "soil")
    assert _location_counts(
        '"Roots"', "the root system"
    )  # quotes dropped, case folded, Porter2 stems
    assert not _location_counts("oil", "soil")  # whole tokens only


def test_porter2_backend_and_snowball_agree_on_alphabetic_tokens(
    data_root: Path, parity_dir: Path
) -> None:
    """docs/metrics.md §2B.4: NLTK's English Snowball equals Porter2 (the spec's stem("porter2")) on alphabetic ProPara tokens."""
    from nltk.stem.snowball import SnowballStemmer

    porter2 = stem("porter2")
    snowball = SnowballStemmer("english").stem
    text = (parity_dir / "propara" / "naacl18" / PROGLOBAL).read_text()
    text += (
        data_root
        / "propara"
        / "propara"
        / "tests"
        / "fixtures"
        / "eval"
        / "all-moves.full-grid.tsv"
    ).read_text()
    tokens = {t for t in re.split(r"\s+", text.lower()) if t.isalpha()}
    assert tokens and all(porter2(t) == snowball(t) for t in tokens)
    assert (
        porter2("g-rated") == "g-rate" != snowball("g-rated")
    )  # the two differ on tokens with non-letters


def test_reader_rejects_unknown_split_and_reports_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown ProPara split"):
        read_naacl18(SAMPLE_DATA_ROOT, "validation")
    with pytest.raises(FileNotFoundError):
        read_naacl18(tmp_path, "test")


def test_missing_participant_and_rows_are_named_with_the_paragraph(
    tmp_path: Path, data_root: Path, parity_dir: Path
) -> None:
    gold = read_naacl18(data_root, "test")
    paragraph = next(iter(gold.items.values()))
    (name, sid), questions = sorted(needed_rows(paragraph).items())[0]
    other = sorted(paragraph.labelled_participants() - {name})[0]
    lines = (parity_dir / "propara" / "naacl18" / PROGLOBAL).read_text().splitlines(keepends=True)

    def keep(line: str) -> bool:
        pid, row_sid, participant = line.split("\t")[:3]
        if int(pid) != paragraph.pid:
            return True
        return participant != other and not (participant == name and int(row_sid) == sid)

    problems = _problems(tmp_path, "".join(filter(keep, lines)), gold)
    item = str(paragraph.pid)
    assert (
        None,
        f"paragraph {paragraph.pid}: participant {other!r} has no prediction rows",
        item,
    ) in problems
    needed_by = ", ".join(sorted(questions, key=lambda q: int(q[1:])))
    assert (
        None,
        f"paragraph {paragraph.pid}: participant {name!r} has no row for sentence {sid} (needed by {needed_by})",
        item,
    ) in problems


def test_missing_paragraph_is_named(tmp_path: Path) -> None:
    dropped = next(iter(SAMPLE_GOLD.items))
    text = "".join(line for line in SAMPLE_LINES if line.split("\t")[0] != dropped)
    [(line, message, item)] = _problems(tmp_path, text)
    assert (
        line is None
        and item == dropped
        and message.startswith(f"paragraph {dropped} has no prediction rows")
    )


def test_unknown_paragraphs_and_participants_are_ignored_with_warnings(tmp_path: Path) -> None:
    extra = [
        "999\t1\tanything\tnull\tsoil\n",
        SAMPLE_LINES[0].replace(SAMPLE_LINES[0].split("\t")[2], "a stranger", 1),
    ]
    with pytest.warns(PredictionWarning) as caught:
        predictions = _validate(tmp_path, "".join([*SAMPLE_LINES, *extra]))
    messages = " | ".join(str(w.message) for w in caught)
    assert "999" in messages and "a stranger" in messages
    assert set(predictions) == set(SAMPLE_GOLD.items)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clean = score_naacl18(SAMPLE_GOLD, _validate(tmp_path, "".join(SAMPLE_LINES)))
    assert aggregate_naacl18(score_naacl18(SAMPLE_GOLD, predictions)) == aggregate_naacl18(clean)


BAD_LINES = st.sampled_from(
    [
        ("\n", "blank line"),
        ("   \n", "blank line"),
        ("x\t1\twater\tnull\tsoil\n", "paragraph id is not an integer"),
        ("101\tone\twater\tnull\tsoil\n", "sentence id is not an integer"),
        ("101\t1\twater\tnull\n", "expected 5 TAB-separated fields"),
        (
            "101\t1\twater\tnull\t\n",
            "expected 5 TAB-separated fields",
        ),  # empty last column is right-stripped away
    ]
)


@given(st.data())
def test_bad_lines_are_always_rejected_with_their_line_number(
    tmp_path_factory: pytest.TempPathFactory, data
) -> None:
    lines = list(SAMPLE_LINES)
    inserted = []
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(lines)))
        bad, message = data.draw(BAD_LINES)
        lines.insert(position, bad)
        inserted = [(p + 1 if p >= position else p, m) for p, m in inserted] + [(position, message)]
    problems = _problems(tmp_path_factory.mktemp("g"), "".join(lines))
    assert sorted({line for line, _, _ in problems}) == sorted(p + 1 for p, _ in inserted)
    for position, message in inserted:
        assert any(line == position + 1 and message in text for line, text, _ in problems)


@given(random_grids())
def test_any_complete_grid_scores_within_bounds(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    items = score_naacl18(SAMPLE_GOLD, _validate(tmp_path_factory.mktemp("g"), text))
    metrics = aggregate_naacl18(items, detail=True)
    assert all(value >= 0 for value in metrics.values())
    assert all(
        metrics[name] <= 100 for name in metrics if not name.endswith(("_tp", "_fp", "_tn", "_fn"))
    )


def test_prompt_slices_and_empty_subset(tmp_path: Path) -> None:
    items = score_naacl18(SAMPLE_GOLD, _validate(tmp_path, "".join(SAMPLE_LINES)))
    assert set(aggregate_naacl18([]).values()) == {0.0}
    by_prompt = {}
    for item in items:
        by_prompt.setdefault(SAMPLE_GOLD.labels[item.item_id]["prompt"], []).append(item)
    for subset in by_prompt.values():
        assert all(0 <= value <= 100 for value in aggregate_naacl18(subset).values())


def test_undecodable_bytes_are_reported_on_their_line(tmp_path: Path) -> None:
    path = tmp_path / "grid.tsv"
    path.write_bytes("".join(SAMPLE_LINES[:4]).encode() + b"101\t1\twater\t\xff\tsoil\n")
    with pytest.raises(InvalidPredictions) as caught:
        read_naacl18_grid(path, SAMPLE_GOLD)
    assert [(p.line, p.message.startswith("not valid UTF-8")) for p in caught.value.problems] == [
        (5, True)
    ]
