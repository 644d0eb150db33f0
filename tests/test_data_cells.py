"""Typed CSV/TSV cells (issue #28, item 4): gold sources and prediction files read cells as the declared type.

Generated files mix valid and invalid cells; the expected values are Python's own ``int()`` /
``float()`` of the cell text (and the documented bool spellings), and every invalid cell must be
reported at its line, both by the gold reader (scoring and ``check --data``) and by the prediction
reader.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.dsl import check_file, compile_spec
from procbench.dsl.datacheck import MAX_PLACES, check_against_data
from procbench.runners.runtime._types import GoldDataError, GoldSet, InvalidPredictions
from procbench.runners.runtime.predictions import FieldType, SchemaReader

BOOL_TRUE = ("true", "yes", "1")
BOOL_FALSE = ("false", "no", "0")


def _spec(tmp_path: Path, ftype: str, fmt: str = "csv") -> Path:
    text = f"""task cells {{
  title   = "Cells"
  version = "1.0"
  primary = accuracy

  data {{
    splits = [dev]
    source gold {{ format = "{fmt}"  path = "cells/dev.{fmt}" }}
    id = gold.id
    fields {{ value: {ftype} = gold.value }}
  }}

  predictions {{ format = "{fmt}"  schema {{ id = str  value = {ftype} }} }}
  score {{ measure accuracy {{ metric = accuracy()  gold = value  prediction = value }} }}
}}
"""
    path = tmp_path / "cells.spec"
    path.write_text(text)
    return path


def _write(path: Path, cells: list[str], fmt: str = "csv") -> None:
    """A file with a header and one row per cell (ids r0, r1, ...); row i is on line i + 2."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(["id", "value"])
    writer.writerows([f"r{i}", cell] for i, cell in enumerate(cells))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buffer.getvalue())


def _python_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _python_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _python_bool(text: str) -> bool | None:
    spelled = text.strip().lower()
    return True if spelled in BOOL_TRUE else False if spelled in BOOL_FALSE else None


# single-line cells (a quoted newline would make a row span two lines), some padded with spaces
_noise = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=6)
_pad = st.sampled_from(["", " ", "  "])
_ints = st.builds(lambda n, a, b: f"{a}{n}{b}", st.integers(-(10**12), 10**12), _pad, _pad)
_floats = st.builds(
    lambda x, a: f"{a}{x!r}", st.floats(allow_nan=False, allow_infinity=False), _pad
)
_bools = st.builds(
    lambda w, upper, a: f"{a}{w.upper() if upper else w}",
    st.sampled_from(BOOL_TRUE + BOOL_FALSE),
    st.booleans(),
    _pad,
)
_specials = st.sampled_from(
    ["nan", "inf", "-inf", "1.0", "1e3", "0x10", "", " ", "1_000", "+7", "TRUE", "Yes", "2"]
)

KINDS = {
    "int": (_ints, _python_int),
    "float": (_floats, _python_float),
    "bool": (_bools, _python_bool),
}


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@pytest.mark.parametrize("kind", sorted(KINDS))
@given(data=st.data())
def test_gold_cells_read_as_python_reads_them_and_every_bad_cell_is_reported_at_its_line(
    tmp_path_factory: pytest.TempPathFactory, kind: str, fmt: str, data: st.DataObject
) -> None:
    valid, oracle = KINDS[kind]
    cells = data.draw(st.lists(st.one_of(valid, valid, _noise, _specials), min_size=1, max_size=30))
    if fmt == "tsv":
        cells = [c.replace("\t", " ") for c in cells]
    root = tmp_path_factory.mktemp("cells")
    spec = check_file(_spec(root, kind, fmt)).spec
    _write(root / "cells" / f"dev.{fmt}", cells, fmt)
    expected = [oracle(c) for c in cells]
    bad_lines = [i + 2 for i, value in enumerate(expected) if value is None]
    runner = compile_spec(spec)
    if not bad_lines:
        gold, _ = runner.gold(root, "dev")
        got = [gold.items[f"r{i}"]["value"] for i in range(len(cells))]
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected]
        return
    with pytest.raises(GoldDataError) as caught:
        runner.gold(root, "dev")
    assert [p.line for p in caught.value.problems] == bad_lines
    assert all(f"must be {kind}" in p.message for p in caught.value.problems)
    # check --data: one finding at the field's statement, counting every bad line and naming them (up to its cap of places)
    diagnostics, _ = check_against_data(spec, runner, root)
    (finding,) = diagnostics
    assert finding.span.line == 10
    if len(bad_lines) > 1:
        assert f"(and {len(bad_lines) - 1} more like it" in finding.message
    for line in bad_lines[: 1 + MAX_PLACES]:
        assert f"cells/dev.{fmt}:{line}" in finding.message


@pytest.mark.parametrize("kind", sorted(KINDS))
@given(data=st.data())
def test_prediction_cells_read_as_python_reads_them_and_every_bad_cell_is_reported_at_its_line(
    tmp_path_factory: pytest.TempPathFactory, kind: str, data: st.DataObject
) -> None:
    valid, oracle = KINDS[kind]
    cells = data.draw(st.lists(st.one_of(valid, valid, _noise, _specials), min_size=1, max_size=30))
    root = tmp_path_factory.mktemp("pred")
    _write(root / "p.csv", cells)
    gold = GoldSet(items={f"r{i}": {} for i in range(len(cells))})
    reader = SchemaReader("csv", "id", (("id", FieldType("str")), ("value", FieldType(kind))))
    expected = [oracle(c) for c in cells]
    bad_lines = [i + 2 for i, value in enumerate(expected) if value is None]
    if not bad_lines:
        got = reader(root / "p.csv", gold)
        assert [got[f"r{i}"]["value"] for i in range(len(cells))] == expected
        return
    with pytest.raises(InvalidPredictions) as caught:
        reader(root / "p.csv", gold)
    assert [p.line for p in caught.value.problems] == bad_lines


def test_a_row_with_several_bad_cells_reports_each_one(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("id,a,b,c\nr0,1,x,true\nr1,y,2.5,maybe\n")
    reader = SchemaReader(
        "csv",
        "id",
        (
            ("id", FieldType("str")),
            ("a", FieldType("int")),
            ("b", FieldType("float")),
            ("c", FieldType("bool")),
        ),
    )
    with pytest.raises(InvalidPredictions) as caught:
        reader(tmp_path / "p.csv", GoldSet(items={"r0": {}, "r1": {}}))
    assert [(p.line, p.message.split("'")[1]) for p in caught.value.problems] == [
        (2, "b"),
        (3, "a"),
        (3, "c"),
    ]


@pytest.mark.parametrize(
    ("cell", "value"),
    [("0", 0), ("2", 2), (" 1 ", 1), ("+1", 1), ("a", "a")],
)
def test_an_enum_of_integers_takes_a_cell_that_reads_as_one_of_them_and_gives_the_integer(
    tmp_path: Path, cell: str, value: object
) -> None:
    root = tmp_path
    spec = check_file(_spec(root, "enum(0, 1, 2, a)")).spec
    _write(root / "cells" / "dev.csv", [cell])
    gold, _ = compile_spec(spec).gold(root, "dev")
    got = gold.items["r0"]["value"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("cell", ["1.0", "3", "A", "", "01x"])
def test_an_enum_of_integers_refuses_other_cells(tmp_path: Path, cell: str) -> None:
    spec = check_file(_spec(tmp_path, "enum(0, 1, 2, a)")).spec
    _write(tmp_path / "cells" / "dev.csv", ["1", cell])
    with pytest.raises(GoldDataError) as caught:
        compile_spec(spec).gold(tmp_path, "dev")
    assert [p.line for p in caught.value.problems] == [3]


def test_an_empty_cell_is_absent_for_an_optional_type_and_an_error_otherwise(
    tmp_path: Path,
) -> None:
    spec = check_file(_spec(tmp_path, "optional(int)")).spec
    _write(tmp_path / "cells" / "dev.csv", ["4", "", "  "])
    gold, _ = compile_spec(spec).gold(tmp_path, "dev")
    assert [gold.items[f"r{i}"]["value"] for i in range(3)] == [4, None, None]
    strict = check_file(_spec(tmp_path, "int")).spec
    with pytest.raises(GoldDataError) as caught:
        compile_spec(strict).gold(tmp_path, "dev")
    assert [p.line for p in caught.value.problems] == [3, 4]
    assert "optional(int)" in caught.value.problems[0].message


def test_text_cells_are_kept_as_written(tmp_path: Path) -> None:
    spec = check_file(_spec(tmp_path, "str")).spec
    _write(tmp_path / "cells" / "dev.csv", [" 1 ", "", "x"])
    gold, _ = compile_spec(spec).gold(tmp_path, "dev")
    assert [gold.items[f"r{i}"]["value"] for i in range(3)] == [" 1 ", "", "x"]
