"""The NAACL'18 gold reader reads only what the split needs, with upstream's quirks intact (issue #19).

``read_annotator_sets`` expands rows into labels only for sets filed under a selected paragraph and
shares the labels of rows that repeat; ``_lines`` splits lines without ``io.StringIO``.  Both are
checked against the plain readings (written out below, the reader as it was before) on generated
files, including the quirks: a set with rows of several paragraphs (no separator line between them)
is filed under the last one, ``?`` sentence rows are skipped, and every line is checked.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.runners.propara import naacl18_gold as gold
from procbench.runners.propara.lines import split_lines


def _plain_annotator_sets(
    path: Path, inventory: dict[int, frozenset[str]], selected: frozenset[int]
) -> dict[int, list[tuple[gold.Label, ...]]]:
    """Every row expanded as it is read (the reader before issue #19)."""
    lines = [line.rstrip("\r\n") for line in split_lines(path.read_text(encoding="utf-8"))]
    sets: dict[int, list[tuple[gold.Label, ...]]] = {}
    running: list[gold.Label] = []
    last_pid = None
    for number, line in enumerate(lines, start=1):
        if number == 1:
            continue
        fields = line.rstrip().split("\t")
        if len(fields) == 1:
            if last_pid in selected:
                sets.setdefault(last_pid, []).append(tuple(running))
            running = []
            continue
        if len(fields) != 11:
            raise ValueError("irregular")
        if fields[1] == "?":
            continue
        pid, sid = int(fields[0]), int(fields[1])
        last_pid = pid
        participants = [p.strip() for p in fields[3].split(";")]
        if pid in selected:
            participants = gold.align_participant(fields[3], inventory[pid])
        for who, source, target in itertools.product(
            participants, gold._location_parts(fields[5]), gold._location_parts(fields[6])
        ):
            running.append(gold.Label(sid, who, fields[4], source, target))
    return sets


NAMES = ["water", "waters", "ice", "the sun", "sun", "magma", "rock; stone", "Water"]
LOCATIONS = ["-", "?", "soil", "soil; air", "ocean", " sea "]


@st.composite
def annotator_files(draw: st.DrawFn) -> tuple[str, dict[int, frozenset[str]], frozenset[int]]:
    pids = draw(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=6))
    lines = ["PID\tSID\tx\tparticipant\tkind\tfrom\tto\ta\tb\tc\td"]
    for pid in pids:
        for _ in range(draw(st.integers(1, 4))):
            sid = draw(st.sampled_from(["1", "2", "3", "?"]))
            row = [
                str(pid),
                sid,
                "s",
                draw(st.sampled_from(NAMES)),
                draw(st.sampled_from(["create", "destroy", "move"])),
                draw(st.sampled_from(LOCATIONS)),
                draw(st.sampled_from(LOCATIONS)),
                "a",
                "b",
                "c",
                "d",
            ]
            lines.append("\t".join(row) + draw(st.sampled_from(["", " ", "\t"])))
        if draw(
            st.booleans()
        ):  # a separator closes the set; without one the next paragraph's rows join it
            lines.append(draw(st.sampled_from(["", "\t\t", "  "])))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    inventory = {
        pid: frozenset(
            draw(st.sets(st.sampled_from(["water", "ice", "sun", "magma", "rock"]), min_size=1))
        )
        for pid in (1, 2, 3, 4)
    }
    selected = frozenset(draw(st.sets(st.sampled_from([1, 2, 3, 4]))))
    return ending.join(lines) + draw(st.sampled_from(["", ending])), inventory, selected


@settings(max_examples=150)
@given(annotator_files())
def test_annotator_sets_equal_the_plain_reading(
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[str, dict[int, frozenset[str]], frozenset[int]],
) -> None:
    text, inventory, selected = case
    path = tmp_path_factory.mktemp("naacl") / "labels.tsv"
    path.write_bytes(text.encode("utf-8"))
    assert gold.read_annotator_sets(path, inventory, selected) == _plain_annotator_sets(
        path, inventory, selected
    )


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(["a", "\t", " ", "\n", "\r", "\r\n", "\x0c", "\u2028", "é"]), max_size=40
    ).map("".join)
)
def test_lines_split_as_text_mode_iteration_splits(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    path = tmp_path_factory.mktemp("lines") / "file.txt"
    path.write_bytes(text.encode("utf-8"))
    assert gold._lines(path) == [line.rstrip("\r\n") for line in split_lines(text)]


def test_an_irregular_line_of_an_unselected_paragraph_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.tsv"
    row = "\t".join(["7", "1", "", "water", "move", "-", "soil", "a", "b", "c", "d"])
    path.write_text("header\n" + row + "\n" + "7\t1\tonly three\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=r"labels.tsv:3: the number of fields in this line is irregular \(3, expected 11\)",
    ):
        gold.read_annotator_sets(path, {1: frozenset({"water"})}, frozenset({1}))


def test_the_real_gold_reads_as_the_plain_reading(data_root: Path) -> None:
    eval_dir = data_root / "propara" / "propara" / "tests" / "fixtures" / "eval"
    if not (eval_dir / "all-moves.full-grid.tsv").is_file():
        pytest.skip(f"ProPara NAACL'18 gold absent under {eval_dir}")
    ids = frozenset(gold.read_para_ids(eval_dir / "para_id.test.txt"))
    inventory = gold.read_inventory(eval_dir / "gold_labels.test.tsv")
    path = eval_dir / "all-moves.full-grid.tsv"
    assert gold.read_annotator_sets(path, inventory, ids) == _plain_annotator_sets(
        path, inventory, ids
    )
