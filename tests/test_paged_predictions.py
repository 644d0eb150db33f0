"""The prediction validator ``paged.graph_text``: every problem with its line number, warnings for tolerated oddities."""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import GoldSet, InvalidPredictions, PredictionWarning
from procbench.runners.paged.predictions import read_graph_text
from procbench.runners.paged.reader import read_graphs

GOLD: GoldSet = read_graphs(SAMPLE_DATA_ROOT, "dev")
IDS = list(GOLD.items)

# Each kind of line, and whether it is a problem. "valid" lines use each gold id at most once.
BAD_LINES = {
    "bad_json": '{"id": 1001, "graph": ',
    "not_object": '["1001", "A -> B"]',
    "missing_graph": '{"id": 1001}',
    "float_id": '{"id": 1001.0, "graph": "A -> B"}',
    "bool_id": '{"id": true, "graph": "A -> B"}',
    "list_graph": '{"id": 1001, "graph": ["A -> B"]}',
    "null_graph": '{"id": 1001, "graph": null}',
    "unknown_id": '{"id": 999999, "graph": "A -> B"}',
    "not_utf8": b'{"id": 1001, "graph": "\xff"}',
    "too_long": json.dumps(
        {"id": 1001, "graph": "A -> B\n" * 20_000}
    ),  # 140,000 characters: over the per-text limit
}


_SCRATCH = tempfile.TemporaryDirectory(
    prefix="paged-predictions-"
)  # removed when the test process ends


def _write(lines: list[str | bytes]) -> Path:
    path = Path(_SCRATCH.name) / "predictions.jsonl"
    path.write_bytes(
        b"".join(
            (line if isinstance(line, bytes) else line.encode("utf-8")) + b"\n" for line in lines
        )
    )
    return path


def test_valid_file_with_string_ids_and_extra_keys() -> None:
    lines = [
        json.dumps({"id": item_id, "graph": GOLD.items[item_id].text, "model": "x"})
        for item_id in IDS
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predictions = read_graph_text(_write(lines), GOLD)
    assert list(predictions) == IDS and predictions[IDS[0]] == GOLD.items[IDS[0]].text
    # accepted, and the key the format does not declare is named once, at its first line (issue #30: never ignored silently)
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and said[0].startswith(
        f"field 'model' (line 1 and {len(IDS) - 1} more records) is not part of"
    ), said


@given(
    st.lists(
        st.one_of(
            st.sampled_from(sorted(BAD_LINES)),
            st.just("valid"),
            st.just("duplicate"),
            st.just("blank"),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_every_problem_is_reported_with_its_line(kinds: list[str]) -> None:
    lines: list[str | bytes] = []
    expected: set[int] = set()
    used: list[str] = []
    for number, kind in enumerate(kinds, start=1):
        if kind == "valid" and len(used) < len(IDS):
            item_id = IDS[len(used)]
            used.append(item_id)
            lines.append(json.dumps({"id": int(item_id), "graph": "A -> B"}))
        elif kind == "duplicate" and used:
            lines.append(json.dumps({"id": used[0], "graph": ""}))
            expected.add(number)
        elif kind in BAD_LINES:
            lines.append(BAD_LINES[kind])
            expected.add(number)
        else:
            lines.append("   ")
    path = _write(lines)
    if not expected:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PredictionWarning)
            if used:
                assert list(read_graph_text(path, GOLD)) == [i for i in IDS if i in used]
                return
        with pytest.raises(InvalidPredictions) as empty:
            read_graph_text(path, GOLD)
        assert [p.line for p in empty.value.problems] == [None]
        return
    with pytest.raises(InvalidPredictions) as error:
        read_graph_text(path, GOLD)
    assert {problem.line for problem in error.value.problems} == expected
    assert len(error.value.problems) == len(expected)


def test_a_graph_over_the_per_text_limit_is_refused_with_its_length() -> None:
    longest_gold = max(len(document.text) for document in GOLD.items.values())
    assert longest_gold < 100_000  # the limit leaves room for any real output
    path = _write([json.dumps({"id": int(IDS[0]), "graph": "x -> y\n" * 15_000})])
    with pytest.raises(InvalidPredictions) as error:
        read_graph_text(path, GOLD)
    (problem,) = error.value.problems
    assert (
        problem.line == 1 and "105000 characters (the limit is 100000 per value)" in problem.message
    )


def test_missing_documents_are_warned_and_left_out() -> None:
    path = _write([json.dumps({"id": int(IDS[0]), "graph": GOLD.items[IDS[0]].text})])
    with pytest.warns(
        PredictionWarning, match=f"{len(IDS) - 1} of {len(IDS)} documents have no prediction"
    ):
        predictions = read_graph_text(path, GOLD)
    assert list(predictions) == [IDS[0]]


def test_odd_graph_lines_are_warned_with_their_place() -> None:
    path = _write(
        [json.dumps({"id": int(IDS[0]), "graph": "Start -> A -> B\nsome prose"})]
        + [json.dumps({"id": int(i), "graph": ""}) for i in IDS[1:]]
    )
    with pytest.warns(PredictionWarning) as caught:
        read_graph_text(path, GOLD)
    messages = [str(w.message) for w in caught]
    assert any(
        f"id {IDS[0]} (file line 1) graph line 1" in m and "more than one" in m for m in messages
    )
    assert any(f"id {IDS[0]} (file line 1) graph line 2" in m and "ignored" in m for m in messages)
