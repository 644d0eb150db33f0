"""A board's facets and its packed read, made column-wise (issue #31), against row-by-row oracles written here.

* ``boardview._with_facets`` makes each card and each metadata's judging facts once per distinct input and sets them
  on the rows; the oracle reads every row as before: the board row's card columns, overridden by its stored
  submission's where the store has one, one ``metadata.card`` per row, the judging facts of the row's own metadata
  and its coverage.
* ``queries._unpacked`` turns a packed read whose rows carry the same metrics into the wide board; the oracle
  explodes it and pivots, as the board did for every read.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from procbench.leaderboard import boardview, metadata, queries
from procbench.submissions.external import is_external
from procbench.submissions.judging import judged_by

METADATA = st.sampled_from(
    [
        None,
        "",
        "{}",
        "not json",
        json.dumps({"open": True, "family": "LLM"}),
        json.dumps({"access": "closed", "size": "small (<=8 GB)", "parameters": "7B"}),
        json.dumps({"judge": "self", "verdicts_by": "gpt-x"}),
        json.dumps({"judge": "gpt-4o"}),
        json.dumps({"external": "every-eval-ever", "source": "a paper"}),
        json.dumps({"paper": "https://example.org/p", "code": "javascript:alert(1)"}),
    ]
)
TEXT = st.sampled_from([None, "", "unknown", "open", "closed", "llm", "small (<=8 gb)", "x"])
CONTAMINATION = st.sampled_from([None, "", "unknown", "none", "suspected", "confirmed"])
RUN_BY = st.sampled_from([None, "", "unknown", "submitter", "operator"])
BOARD_CARD = (
    "weights",
    "method_family",
    "size_class",
)  # what a board read carries (queries.CARD_COLUMNS)
STORED_ROW = st.fixed_dictionaries(
    {
        "metadata_json": METADATA,
        "is_reference": st.booleans(),
        "weights": TEXT,
        "method_family": TEXT,
        "size_class": TEXT,
        "paper_url": st.sampled_from([None, "", "https://example.org/a", "ftp://x"]),
        "code_url": st.sampled_from([None, "", "https://example.org/c"]),
        "description": st.sampled_from([None, "", "a model"]),
        "filename": st.sampled_from(["", "p.jsonl"]),
        "contamination": CONTAMINATION,
        "contamination_source": st.sampled_from([None, "", "https://example.org/leak"]),
        "run_by": RUN_BY,
        "judge_prompt_digest": st.sampled_from([None, "", "abc123"]),
        "n_answered": st.one_of(st.none(), st.integers(0, 9)),
        "n_items": st.integers(1, 9),
    }
)
BOARD_ROW = st.fixed_dictionaries(
    {
        "metadata_json": METADATA,
        "is_reference": st.booleans(),
        "weights": TEXT,
        "method_family": TEXT,
        "size_class": TEXT,
    }
)


def _oracle(
    board: list[dict[str, Any]], stored: dict[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], set[tuple[Any, ...]]]:
    """Every row's facets, one row at a time; and the distinct card inputs."""
    out = []
    distinct = set()
    for row in board:
        inputs = {c: row.get(c) for c in boardview.CARD_INPUTS}
        if row["submission_id"] in stored:
            inputs.update({c: stored[row["submission_id"]][c] for c in boardview.CARD_INPUTS})
        distinct.add(tuple(inputs[c] for c in boardview.CARD_INPUTS))
        card = metadata.card(inputs)
        parsed = metadata.parse(row["metadata_json"])
        mine = stored.get(row["submission_id"], {})
        judge = judged_by(parsed)
        out.append(
            {
                "kind": card.kind,
                "access": card.access,
                "family": card.family,
                "size": card.size_class,
                "parameters": card.parameters,
                "paper": card.paper_url,
                "code": card.code_url,
                "judge": judge,
                "contamination": metadata.CONTAMINATION_WORDS.get(
                    card.contamination, card.contamination
                ),
                "contamination_mark": card.contamination_mark,
                "run_by": metadata.RUN_BY_WORDS.get(card.run_by, card.run_by),
                "judge_prompt_digest": str(mine.get("judge_prompt_digest") or ""),
                "judged": boardview.JUDGED_WORDS[judge]
                if judge in ("", "self")
                else boardview.JUDGED_WORDS["board"],
                "_grader": boardview.grader(parsed),
                "_external": is_external(True, parsed),
                "_answered": mine.get("n_answered"),
                "_split_items": mine.get("n_items", 0),
            }
        )
    return out, distinct


@settings(max_examples=150, deadline=None)
@given(
    st.lists(BOARD_ROW, min_size=1, max_size=25),
    st.lists(STORED_ROW, min_size=0, max_size=25),
    st.lists(st.booleans(), min_size=25, max_size=25),
    st.sets(st.sampled_from(BOARD_CARD)),
)
def test_facets_made_per_distinct_input_are_the_row_by_row_ones(
    board_rows: list[dict[str, Any]],
    stored_rows: list[dict[str, Any]],
    known: list[bool],
    board_card: set[str],
) -> None:
    board = [
        {
            "submission_id": f"s{i}",
            "model": f"m{i}",
            **{k: v for k, v in row.items() if k not in BOARD_CARD or k in board_card},
        }
        for i, row in enumerate(board_rows)
    ]
    # some board rows have a stored submission, some not (as a store without a row's submission would read)
    ids = [r["submission_id"] for r, k in zip(board, known) if k]
    stored = {sid: row for sid, row in zip(ids, stored_rows)}
    columns = ["submission_id", "model", "metadata_json", "is_reference", *sorted(board_card)]
    frame = pl.DataFrame(
        [{c: r.get(c) for c in columns} for r in board],
        schema={c: pl.Boolean if c == "is_reference" else pl.String for c in columns},
    )
    stored_frame = pl.DataFrame(
        [{"submission_id": sid, **row} for sid, row in stored.items()],
        schema={
            "submission_id": pl.String,
            "metadata_json": pl.String,
            "is_reference": pl.Boolean,
            **dict.fromkeys(
                (
                    "weights",
                    "method_family",
                    "size_class",
                    "paper_url",
                    "code_url",
                    "description",
                    "filename",
                    "contamination",
                    "contamination_source",
                    "run_by",
                    "judge_prompt_digest",
                ),
                pl.String,
            ),
            "n_answered": pl.Int32,
            "n_items": pl.Int32,
        },
    )
    boardview._card.cache_clear()
    got = boardview._with_facets(frame, stored_frame)
    want, distinct = _oracle(board, stored)
    assert got.columns[: len(columns)] == columns  # the board's own columns first, unchanged
    assert_frame_equal(got.select(columns), frame)
    assert got.select(list(want[0])).to_dicts() == want
    assert boardview._card.cache_info().misses == len(distinct)  # one card per distinct input


def _pivot_oracle(packed: pl.DataFrame) -> pl.DataFrame:
    """The wide board as the explode and pivot made it: one row per submission, one column per metric."""
    long = packed.explode(["n_items", "metric", "value"])
    index = [c for c in packed.columns if c not in ("n_items", "metric", "value")] + ["n_items"]
    wide = long.pivot(on="metric", index=index, values="value")
    return wide.select(
        [c for c in packed.columns if c not in ("n_items", "metric", "value")]
        + ["n_items"]
        + wide.columns[len(index) :]
    )


PACKED_ROWS = st.lists(
    st.tuples(
        st.booleans(),
        st.one_of(st.none(), st.integers(0, 40)),
        st.lists(
            st.one_of(st.none(), st.floats(allow_nan=False, width=32)), min_size=3, max_size=3
        ),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(PACKED_ROWS, st.permutations(["rouge", "bleu", "f1"]))
def test_a_packed_read_with_one_metric_list_unpacks_as_its_pivot(
    rows: list[tuple[bool, int | None, list[float | None]]], metrics: list[str]
) -> None:
    packed = pl.DataFrame(
        {
            "submission_id": [f"s{i}" for i in range(len(rows))],
            "model": [f"m{i % 3}" for i in range(len(rows))],
            "team": ["t"] * len(rows),
            "is_reference": [r[0] for r in rows],
            "metadata_json": ["{}"] * len(rows),
            "source": [""] * len(rows),
            "weights": ["unknown"] * len(rows),
            "method_family": ["unknown"] * len(rows),
            "size_class": ["unknown"] * len(rows),
            "created_at": pl.Series([None] * len(rows), dtype=pl.Datetime("us")),
            "n_items": [[r[1]] * len(metrics) for r in rows],
            "metric": [metrics] * len(rows),
            "value": [r[2] for r in rows],
        },
        schema_overrides={
            "n_items": pl.List(pl.Int32),
            "metric": pl.List(pl.String),
            "value": pl.List(pl.Float64),
        },
    )
    assert queries._shared_metrics(packed) == metrics
    assert_frame_equal(queries._unpacked(packed, metrics), _pivot_oracle(packed), check_exact=True)


def test_reads_whose_rows_differ_are_left_to_the_pivot() -> None:
    base = {
        "n_items": [[5, 5], [5, 5]],
        "metric": [["a", "b"], ["a", "b"]],
        "value": [[0.1, 0.2], [0.3, 0.4]],
    }
    assert queries._shared_metrics(pl.DataFrame(base)) == ["a", "b"]
    changes: tuple[dict[str, list[Any]], ...] = (
        {"metric": [["a", "b"], ["b", "a"]]},  # another order
        {"metric": [["a", "b"], ["a"]], "value": [[0.1, 0.2], [0.3]], "n_items": [[5, 5], [5]]},
        {"metric": [["a", "a"], ["a", "a"]]},  # a metric twice
        {"n_items": [[5, 4], [5, 5]]},  # two item counts in one row
        {"value": [[0.1, 0.2], [0.3]]},  # values short of the metrics
        {"metric": [[], []], "value": [[], []], "n_items": [[], []]},
        {"value": [[0.1, 0.2], None]},  # a row without its values
        {"n_items": [None, [5, 5]]},  # a row without its item counts
    )
    for changed in changes:
        assert queries._shared_metrics(pl.DataFrame({**base, **changed})) is None, changed
