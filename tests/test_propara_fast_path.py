"""The clean-file path of the ProPara action-file reader (issue #31): a file without problems is read in
one pass over its text and checked against the gold over its columns, building no problem report; a
file with any problem goes the line-by-line way and gets the same full report as before.

The reference for "the same" is the line-by-line reader itself (``parse_action_lines``, whose messages
tests/test_propara_action_file.py and the parity tests hold to the official evaluator's), run on the
same text; files are real test answers edited by Hypothesis.  Counts, never timings.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procbench.runners import GoldSet, InvalidPredictions, PredictionWarning
from procbench.runners.runtime import _types
from procbench.runners.propara import action_file, leaderboard
from procbench.runners.propara.action_file import parse_action_lines, parse_action_text
from procbench.runners.propara.leaderboard import read_answers, read_predictions
from procbench.runners.propara.lines import split_lines

ANSWERS = Path("propara", "aristo-leaderboard", "propara", "data", "test", "answers.tsv")


@pytest.fixture(scope="module")
def gold(data_root: Path) -> GoldSet:
    return read_answers(data_root, "test")


@pytest.fixture(scope="module")
def gold_lines(data_root: Path) -> list[str]:
    return (data_root / ANSWERS).read_text(encoding="utf-8").splitlines(keepends=True)


def _Counted(owner: object, name: str) -> mock._patch[mock.MagicMock]:  # noqa: N802 - reads as a spy
    """Counts the calls of a real function (it still runs)."""
    return mock.patch.object(owner, name, wraps=getattr(owner, name))


def _problem_inits() -> mock._patch[mock.MagicMock]:
    """Every Problem built anywhere (the dataclass's own __init__, counted)."""
    return mock.patch.object(_types.Problem, "__init__", autospec=True, side_effect=_REAL_INIT)


_REAL_INIT = _types.Problem.__init__


def test_a_clean_file_builds_no_problem_report(
    tmp_path: Path, gold: GoldSet, gold_lines: list[str]
) -> None:
    """The real test answers as predictions: no line-by-line pass, no rule-by-rule check, no Problem."""
    path = tmp_path / "predictions.tsv"
    path.write_text("".join(gold_lines), encoding="utf-8")
    with (
        _Counted(action_file, "parse_action_lines") as by_line,
        _Counted(action_file, "_parse_line") as per_line,
        _Counted(leaderboard, "_out_of_range") as out_of_range,
        _Counted(leaderboard, "_participant_diff") as diff,
        _Counted(leaderboard, "_warn_row_oddities") as oddities,
        _problem_inits() as problems,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error")
        predicted = read_predictions(path, gold)
    assert set(predicted) == set(gold.items)
    assert predicted == gold.items  # the same file, the same tracks
    for spy in (by_line, per_line, out_of_range, diff, oddities, problems):
        assert spy.call_count == 0


def test_a_bad_line_takes_the_line_by_line_path_with_its_report(
    tmp_path: Path, gold: GoldSet, gold_lines: list[str]
) -> None:
    lines = list(gold_lines)
    lines[4] = lines[4].replace("\t", " ", 1)
    path = tmp_path / "predictions.tsv"
    path.write_text("".join(lines), encoding="utf-8")
    with (
        _Counted(action_file, "parse_action_lines") as by_line,
        pytest.raises(InvalidPredictions) as caught,
    ):
        read_predictions(path, gold)
    assert by_line.call_count == 1
    assert [p.line for p in caught.value.problems][:1] == [5]


# (field index, values): each edit rewrites one field of one line with a value that breaks some rule
_FIELD_VALUES = {
    "process": (0, ("900000", "900001", " 7", "+3", "x", "1" * 30)),
    "sentence": (1, ("0", "-1", "1", "2", "99", "99999", " 2", "+3", "٣", "1" * 30)),
    "participant": (2, ("something else", "", "a b", "water")),
    "action": (3, ("NONE", "CREATE", "MOVE", "DESTROY", "none", "")),
    "before": (4, ("-", "?", "", "soil", "\x0c")),
    "after": (5, ("-", "?", "", "soil", "\r")),
    "cell": (None, ("\t", "\r", "\x0c", " ", "")),
}


def _edits() -> st.SearchStrategy[list[tuple[str, int, int]]]:
    """Edits of a real file: drop, repeat, blank, swap or CRLF a line, or rewrite one of its fields."""
    edit = st.tuples(
        st.sampled_from(["drop", "repeat", "blank", "swap", "crlf", *_FIELD_VALUES]),
        st.integers(min_value=0, max_value=10_000),
        st.integers(min_value=0, max_value=100),
    )
    return st.lists(edit, max_size=4)


def _apply(lines: list[str], edits: list[tuple[str, int, int]], final: bool) -> str:
    lines = list(lines)
    for what, where, choice in edits:
        i = where % len(lines)
        if what == "drop" and len(lines) > 1:
            del lines[i]
        elif what == "repeat":
            lines.insert(i, lines[i])
        elif what == "blank":
            lines.insert(i, ("", " ", "\t")[choice % 3] + "\n")
        elif what == "swap":
            j = choice % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        elif what == "crlf":
            lines[i] = lines[i].replace("\n", "\r\n")
        elif what in _FIELD_VALUES:
            cells = lines[i].rstrip("\r\n").split("\t")
            index, values = _FIELD_VALUES[what]
            if index is not None and index >= len(
                cells
            ):  # a blank line inserted above has no such field
                continue
            cells[choice % len(cells) if index is None else index] = values[choice % len(values)]
            lines[i] = "\t".join(cells) + "\n"
    text = "".join(lines)
    return text if final else text[:-1]  # sometimes no final newline


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=_edits(), final=st.booleans())
def test_the_text_path_reads_every_file_as_the_line_path_does(
    gold_lines: list[str], edits: list[tuple[str, int, int]], final: bool
) -> None:
    text = _apply(gold_lines[:300], edits, final)
    fast, slow = parse_action_text(text), parse_action_lines(split_lines(text))
    assert (fast.rows, fast.problems, fast.n_lines) == (slow.rows, slow.problems, slow.n_lines)
    assert [(m.line, m.process_id, m.participant) for m in fast.mentions] == [
        (m.line, m.process_id, m.participant) for m in slow.mentions
    ]


def _outcome(path: Path, gold: GoldSet) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PredictionWarning)
        try:
            result: object = read_predictions(path, gold)
        except InvalidPredictions as exc:
            result = (str(exc), [(p.line, p.message, p.item_id) for p in exc.problems])
    return result, [str(w.message) for w in caught if issubclass(w.category, PredictionWarning)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=_edits(), final=st.booleans())
def test_the_column_checks_decide_as_the_rule_by_rule_checks(
    tmp_path_factory: pytest.TempPathFactory,
    gold: GoldSet,
    gold_lines: list[str],
    edits: list[tuple[str, int, int]],
    final: bool,
) -> None:
    """Same tracks, same warnings, same report (every problem, its line, its words) with the column
    checks as with the rule-by-rule checks alone (``_fit`` answering "don't know" every time)."""
    path = tmp_path_factory.mktemp("edited") / "predictions.tsv"
    path.write_text(_apply(gold_lines, edits, final), encoding="utf-8", newline="")
    fast = _outcome(path, gold)
    with mock.patch.object(leaderboard, "_fit", return_value=None):
        slow = _outcome(path, gold)
    assert fast == slow
