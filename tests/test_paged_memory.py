"""PAGED at scale with bounded memory (issue #31): the gold file is read record by record, the derived
lines are scored a batch of documents at a time, and the fingerprint is hashed piece by piece.

No timing is asserted: the checks are on what is held (how many documents the scorer sees at once, how
much memory tracemalloc sees beyond what a run keeps) and on the values (the same as the whole at once).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.api import load_task
from procbench.bench.generate import PAGED_DIR, Workload, generate
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import GoldSet, ItemScore
from procbench.runners.library.generic import Derived
from procbench.runners.paged.gold import json_array_members
from procbench.runners.paged.reader import read_gold_file
from procbench.runners.runtime.runner import hash_json

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
LAYOUTS = st.sampled_from(
    [{}, {"indent": 1}, {"separators": (",", ":")}, {"indent": "\t", "ensure_ascii": False}]
)


@given(st.lists(JSON, max_size=6), LAYOUTS, st.integers(1, 24), st.text(" \t\r\n", max_size=3))
def test_array_members_are_json_loads_of_the_whole_text(
    members: list[Any], layout: dict[str, Any], chunk: int, around: str
) -> None:
    text = around + json.dumps(members, **layout) + around
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "gold.json")
        path.write_text(text, encoding="utf-8")
        assert list(json_array_members(path, chunk=chunk)) == json.loads(text)


@given(st.lists(JSON, min_size=1, max_size=4), st.integers(1, 16), st.data())
def test_text_json_loads_refuses_is_refused(
    members: list[Any], chunk: int, data: st.DataObject
) -> None:
    text = json.dumps(members)
    broken = data.draw(
        st.sampled_from(
            [
                text[: data.draw(st.integers(0, len(text) - 1))],  # cut short
                text + ",",
                text + " []",
                text.replace("[", "{", 1),
                text[:-1] + " 1]" if len(text) > 2 else "[1 2]",
            ]
        )
    )
    try:
        expected: Any = json.loads(broken)
    except ValueError:
        expected = ValueError
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "gold.json")
        path.write_text(broken, encoding="utf-8")
        if expected is ValueError or not isinstance(expected, list):
            with pytest.raises(ValueError, match="gold.json: invalid JSON at character"):
                list(json_array_members(path, chunk=chunk))
        else:
            assert list(json_array_members(path, chunk=chunk)) == expected


@given(JSON, st.integers(0, 4))
def test_the_fingerprint_hashed_piece_by_piece_is_the_whole_text_hashed(
    value: Any, depth: int
) -> None:
    whole = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
    pieces = hashlib.sha256()
    hash_json(pieces, value, depth=depth)
    assert pieces.hexdigest() == whole


# -- scoring a batch at a time ---------------------------------------------------------------------
_SAMPLE_DOCUMENTS = 5  # in the staged sample split the workloads copy (test.json)


def _workload(folder: Path, copies: int) -> Workload:
    """``copies`` copies of the staged sample documents, with predictions as an imperfect extractor writes them."""
    return generate("paged", SAMPLE_DATA_ROOT, folder / f"paged-{copies}x", copies)


def _split(runner: Any, workload: Workload) -> tuple[GoldSet, Mapping[str, Any]]:
    gold, _ = runner.gold(workload.data_root, workload.split)
    predictions, _ = runner.validate(workload.predictions, gold)
    return gold, predictions


def _derived(runner: Any) -> Derived:
    scorer = runner.make_scorer({})
    assert isinstance(scorer, Derived), type(scorer)  # paged.graph_lines(): the spec's deriver
    return scorer


def test_the_scorer_sees_one_batch_of_documents_at_a_time_with_the_same_values(
    tmp_path: Path,
) -> None:
    _, runner = load_task("paged")
    gold, predictions = _split(runner, _workload(tmp_path, 4))
    derived = _derived(runner)
    seen: list[int] = []

    def counting(
        inner: Callable[[GoldSet, Mapping[str, Any]], list[ItemScore]],
    ) -> Callable[[GoldSet, Mapping[str, Any]], list[ItemScore]]:
        def score(batch: GoldSet, records: Mapping[str, Any]) -> list[ItemScore]:
            seen.append(len(batch.items))
            return inner(batch, records)

        return score

    batched = derived.replace(batch=5, scorer=counting(derived.scorer))
    at_once = derived.replace(batch=len(gold.items))
    items = batched(gold, predictions)
    assert len(gold.items) > 5 and max(seen) == 5 and sum(seen) == len(gold.items), seen
    assert [(i.item_id, dict(i.values)) for i in items] == [
        (i.item_id, dict(i.values)) for i in at_once(gold, predictions)
    ]
    # the spec's metrics of the whole split, from the values a batch at a time
    assert runner.aggregate(items) == runner.aggregate(runner.score(gold, predictions))


def _transient(run: Callable[[], Any]) -> tuple[int, Any]:
    """Peak memory tracemalloc sees during ``run`` beyond what is still held after it, and its result."""
    tracemalloc.start()
    try:
        result = run()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - held, result


def test_scoring_four_times_the_documents_needs_no_more_working_memory(tmp_path: Path) -> None:
    """Beyond the values it returns (and the token caches it keeps), scoring holds one batch: 4x the
    documents may not need 4x the working memory (before issue #31 every document's lines were alive)."""
    _, runner = load_task("paged")
    derived = _derived(runner).replace(batch=12)
    working = {}
    for copies in (4, 16):
        gold, predictions = _split(runner, _workload(tmp_path, copies))
        derived(gold, predictions)  # the token caches filled, as they are after a first batch
        working[copies], items = _transient(lambda: derived(gold, predictions))
        assert len(items) == len(gold.items) == _SAMPLE_DOCUMENTS * copies
    assert working[16] < 1.5 * working[4] + 256 * 1024, working


def test_reading_four_times_the_gold_needs_no_more_working_memory(tmp_path: Path) -> None:
    """The gold file is read a record at a time: memory beyond the documents kept does not grow with the
    file (``json.loads`` of the whole text held the text and every record's objects at once)."""
    working, kept = {}, {}
    for copies in (4, 16):
        workload = _workload(tmp_path, copies)
        path = workload.data_root / PAGED_DIR / f"{workload.split}.json"
        tracemalloc.start()
        try:
            gold = read_gold_file(path)
            kept[copies], peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        working[copies] = peak - kept[copies]
        assert len(gold.items) == _SAMPLE_DOCUMENTS * copies
        assert all(not {"graph", "lines"} & set(vars(d)) for d in gold.items.values())
    assert kept[16] > 3 * kept[4]  # the documents themselves are kept: 4x the documents, ~4x kept
    assert working[16] < 1.5 * working[4] + 256 * 1024, working
