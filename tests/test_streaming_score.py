"""The streamed score (runners/runtime/streaming.py, issue #31): the same Evaluation as the in-memory path, in bounded memory.

Real components and real data: the OpenPI test split from the data root, scaled by the bench's own
generator (procbench.bench.generate), scored through the spec's runner both ways.  Memory is measured on
whole ``procbench score`` processes (their peak RSS), never their time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procbench.bench.generate import generate
from procbench.dsl.tasks import load_runner
from procbench.runners.runtime import streaming
from procbench.runners.runtime._types import GoldDataError, InvalidPredictions

GOLD = Path("openpi") / "data" / "gold" / "test"
FILES = ("id_answers.jsonl", "id_question_metadata.jsonl", "id_answers_metadata.jsonl")


def _same(task: str, root: Path, predictions: Path, chunk: int) -> None:
    """Both paths score ``predictions`` to the same JSON, fingerprint, warnings, items and item labels."""
    whole = load_runner(task).evaluate(root, "test", predictions)
    streamed = streaming.evaluate(load_runner(task), root, "test", predictions, chunk=chunk)
    assert streamed.to_json() == whole.to_json()
    assert streamed.fingerprint == whole.fingerprint
    assert streamed.warnings == whole.warnings
    assert streamed.answered == whole.answered
    assert list(streamed.items) == list(whole.items)
    assert {k: dict(v) for k, v in streamed.item_labels.items()} == {
        k: dict(v) for k, v in whole.item_labels.items()
    }


@pytest.fixture(scope="module")
def scaled(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not (data_root / GOLD / FILES[0]).is_file():
        pytest.skip(f"no OpenPI test split under {data_root}")
    return generate("openpi", data_root, tmp_path_factory.mktemp("openpi-x36"), 36)


def test_streamed_equals_in_memory_on_20k_items(scaled: Any) -> None:
    assert scaled.n_items > 20_000
    assert streaming.applies(load_runner("openpi"), "test")
    _same("openpi", scaled.data_root, scaled.predictions, chunk=1500)  # 14 chunks, the last short


def test_streamed_equals_in_memory_deduplicated(data_root: Path, tmp_path: Path) -> None:
    if not (data_root / GOLD / FILES[0]).is_file():
        pytest.skip(f"no OpenPI test split under {data_root}")
    workload = generate("openpi", data_root, tmp_path, 3)
    _same("openpi-head", workload.data_root, workload.predictions, chunk=500)


def test_only_item_wise_tasks_stream() -> None:
    assert streaming.applies(load_runner("openpi-head"), "test")
    for task in ("propara", "paged", "pm-llm-benchmark"):  # TSV predictions, whole-file gold, ...
        assert not streaming.applies(load_runner(task), load_runner(task).splits[0])


# -- problems: the same, in the same order, from both paths ----------------------------------------------
def _small_root(data_root: Path, out: Path, count: int) -> tuple[Path, list[str]]:
    """A data root holding the first ``count`` OpenPI test items (the three files the spec reads)."""
    if not (data_root / GOLD / FILES[0]).is_file():
        pytest.skip(f"no OpenPI test split under {data_root}")
    ids = [
        json.loads(line)["id"]
        for line in (data_root / GOLD / FILES[0]).read_text(encoding="utf-8").splitlines()[:count]
    ]
    wanted = set(ids)
    (out / GOLD).mkdir(parents=True, exist_ok=True)
    for name in FILES:
        lines = (data_root / GOLD / name).read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if json.loads(line)["id"] in wanted]
        (out / GOLD / name).write_text("\n".join(kept) + "\n", encoding="utf-8")
    return out, ids


def _outcome(evaluate: Any) -> Any:
    try:
        evaluation = evaluate()
    except InvalidPredictions as exc:
        return ("invalid", exc.problems, exc.count, str(exc))
    except GoldDataError as exc:
        return ("gold", str(exc))
    return (
        "scored",
        evaluation.to_json(),
        evaluation.warnings,
        list(evaluation.items),
        evaluation.answered,
    )


@pytest.fixture(scope="module")
def small(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    return _small_root(data_root, tmp_path_factory.mktemp("openpi-30"), 30)


def _lines(ids: list[str]) -> st.SearchStrategy[str]:
    known = st.sampled_from(ids)
    text = st.text(alphabet="abc xyz,.", max_size=12)
    answers = st.lists(text, max_size=4)
    return st.one_of(
        st.builds(lambda i, a: json.dumps({"id": i, "answers": a}), known, answers),
        st.builds(
            lambda i, a: json.dumps({"id": "unknown-" + i, "answers": a}),
            st.text(max_size=4),
            answers,
        ),
        st.builds(lambda i, n: json.dumps({"id": i, "answers": n}), known, st.integers()),
        st.builds(lambda i: json.dumps({"id": i}), known),
        st.builds(lambda i, a: json.dumps({"id": i, "answers": a, "note": 1}), known, answers),
        st.sampled_from(["", "{", "not json", "[1, 2]", "3", '{"answers": []}']),
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_prediction_problems_and_scores_match(
    data: st.DataObject, small: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, ids = small
    lines = data.draw(st.lists(_lines(ids), max_size=40))
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    runner = load_runner("openpi")
    chunk = data.draw(st.integers(1, 40))
    whole = _outcome(lambda: runner.evaluate(root, "test", path))
    streamed = _outcome(
        lambda: streaming.evaluate(load_runner("openpi"), root, "test", path, chunk=chunk)
    )
    assert streamed == whole


def test_gold_problems_match(data_root: Path, tmp_path: Path) -> None:
    """Gold problems of every kind a streamed read meets are reported as the in-memory read reports them."""
    root, ids = _small_root(data_root, tmp_path / "root", 20)
    answers = (root / GOLD / FILES[0]).read_text(encoding="utf-8").splitlines()
    answers.insert(3, json.dumps({"answers": ["no id here"]}))
    answers.append(
        answers[5]
    )  # the same id again: a later record replaces the earlier, in its place
    (root / GOLD / FILES[0]).write_text("\n".join(answers) + "\n", encoding="utf-8")
    meta = (root / GOLD / FILES[1]).read_text(encoding="utf-8").splitlines()
    del meta[7]  # an item without its metadata row
    meta.insert(2, json.dumps({"question_metadata": {"topic": "Health"}}))  # a row without its key
    (root / GOLD / FILES[1]).write_text("\n".join(meta) + "\n", encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": i, "answers": ["x"]}) + "\n" for i in ids), encoding="utf-8"
    )
    whole = _outcome(lambda: load_runner("openpi").evaluate(root, "test", predictions))
    assert whole[0] == "gold"
    streamed = _outcome(
        lambda: streaming.evaluate(load_runner("openpi"), root, "test", predictions, chunk=6)
    )
    assert streamed == whole


def test_repeated_gold_ids_score_alike(data_root: Path, tmp_path: Path) -> None:
    root, ids = _small_root(data_root, tmp_path / "root", 25)
    answers = (root / GOLD / FILES[0]).read_text(encoding="utf-8").splitlines()
    changed = json.loads(answers[4])
    changed["answers"] = ["a later record of the same step"]
    answers.append(json.dumps(changed))
    (root / GOLD / FILES[0]).write_text("\n".join(answers) + "\n", encoding="utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": i, "answers": ["a later record"]}) + "\n" for i in ids[::2]),
        encoding="utf-8",
    )
    _same("openpi", root, predictions, chunk=4)


# -- memory: whole processes, as users run them -----------------------------------------------------------
# The child's own high-water mark (VmHWM, KB) from /proc: getrusage's ru_maxrss is not, because Linux carries
# the forking process's peak across exec, so every child of a large pytest worker would report the worker's.
CHILD = """
import sys
from procbench.console import main
out = sys.argv.pop(1)
try:
    status = main()
finally:
    with open("/proc/self/status") as status_file:
        peak = next(line.split()[1] for line in status_file if line.startswith("VmHWM:"))
    with open(out, "w") as handle:
        handle.write(peak)
sys.exit(status)
"""


def _score_process(workload: Any, stream_bytes: int, tmp_path: Path) -> tuple[dict[str, Any], int]:
    """``procbench score openpi --json`` in a fresh process: its output and its peak RSS in KB."""
    rss = tmp_path / f"rss-{workload.n_items}-{stream_bytes}"
    env = {**os.environ, "PROCBENCH_STREAM_BYTES": str(stream_bytes)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(rss),
            "score",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(workload.predictions),
            "--data-dir",
            str(workload.data_root),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), int(rss.read_text())


def _repeated(workload: Any, times: int, out: Path) -> Any:
    """``workload``'s files ``times`` over, each copy under fresh ids: more items, and no text the scorer's caches
    (normalised strings, pair values: bounded by their own caps) have not seen in the first copy."""
    from dataclasses import replace

    (out / GOLD).mkdir(parents=True, exist_ok=True)
    sources = [(workload.data_root / GOLD / name, out / GOLD / name) for name in FILES]
    sources.append((workload.predictions, out / "predictions.jsonl"))
    for source, target in sources:
        lines = source.read_text(encoding="utf-8").splitlines()
        with target.open("w", encoding="utf-8") as handle:
            for copy in range(times):
                for line in lines:
                    record = json.loads(line)
                    record["id"] = f"{record['id']}~{copy}"
                    handle.write(json.dumps(record) + "\n")
    return replace(
        workload,
        data_root=out,
        predictions=out / "predictions.jsonl",
        n_items=workload.n_items * times,
        scale=workload.scale * times,
    )


def test_streamed_process_memory_grows_little(data_root: Path, tmp_path: Path) -> None:
    """4x the items (over the chunk size): the streamed process's peak RSS stays within 1.5x, and grows by under a
    quarter of what the in-memory process's grows by; both print the same result."""
    if not (data_root / GOLD / FILES[0]).is_file():
        pytest.skip(f"no OpenPI test split under {data_root}")
    generated = generate("openpi", data_root, tmp_path / "x8", 8)
    assert generated.n_items > streaming.CHUNK_ITEMS
    small = _repeated(generated, 1, tmp_path / "once")
    large = _repeated(generated, 4, tmp_path / "four")
    always, never = 0, 1 << 60
    streamed_small, streamed_small_rss = _score_process(small, always, tmp_path)
    streamed_large, streamed_large_rss = _score_process(large, always, tmp_path)
    whole_small, whole_small_rss = _score_process(small, never, tmp_path)
    whole_large, whole_large_rss = _score_process(large, never, tmp_path)
    assert streamed_small == whole_small and streamed_large == whole_large
    assert streamed_large["n_items"] == 4 * streamed_small["n_items"]
    assert streamed_large_rss <= 1.5 * streamed_small_rss
    assert streamed_large_rss - streamed_small_rss < (whole_large_rss - whole_small_rss) / 4


# -- aggregation over the streamed values: from their columns, no item rebuilt per pass (issue #31) --------------
def test_streamed_score_rebuilds_no_item_to_aggregate(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenPI's ``mean`` reads the streamed values from ScoreRows' columns: no ItemScore is rebuilt while scoring.

    Through ``__iter__``, ``mean`` made one pass per value name and one for the names, each rebuilding every item,
    for the whole split and again for every slice: 50 rebuilds per item, a streamed ``procbench score`` of 56,000
    OpenPI items took 35 s of CPU against 18.5 s in memory.  Counted here, not timed.
    """
    if not (data_root / GOLD / FILES[0]).is_file():
        pytest.skip(f"no OpenPI test split under {data_root}")
    workload = generate("openpi", data_root, tmp_path, 3)
    rebuilt = 0
    row = streaming.ScoreRows.row

    def counted(self: streaming.ScoreRows, index: int) -> Any:
        nonlocal rebuilt
        rebuilt += 1
        return row(self, index)

    monkeypatch.setattr(streaming.ScoreRows, "row", counted)
    streamed = streaming.evaluate(
        load_runner("openpi"), workload.data_root, "test", workload.predictions, chunk=500
    )
    assert rebuilt == 0, f"{rebuilt} items rebuilt for {workload.n_items} scored"
    monkeypatch.undo()
    whole = load_runner("openpi").evaluate(workload.data_root, "test", workload.predictions)
    assert streamed.to_json() == whole.to_json()


_VALUE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.text(max_size=2),
)
_NAMES = st.lists(st.sampled_from(["exact_f1", "bleu_p", "rouge_r", "n"]), max_size=4, unique=True)


@given(
    shapes=st.lists(_NAMES, min_size=1, max_size=3),
    data=st.data(),
    floats_only=st.booleans(),
)
def test_aggregates_of_score_rows_equal_those_of_the_items(
    shapes: list[list[str]], data: st.DataObject, floats_only: bool
) -> None:
    """``mean`` and ``sum`` over a ScoreRows (and a subset of its rows) give exactly (repr: NaN, -0.0) what they
    give over the list of the same ItemScores: the in-memory path is the oracle.  Float-only rows of one shape
    take the column sums; other rows (several shapes, ints, bools, other values, unknown ids) the item-by-item sums."""
    from procbench.runners.library.generic import mean, total
    from procbench.runners.runtime._types import ItemScore

    value = st.floats() if floats_only else _VALUE
    count = data.draw(st.integers(0, 30))
    ids = [f"item-{n}" for n in range(count)]
    items = []
    for item_id in ids:
        names = data.draw(st.sampled_from(shapes))
        values: dict[str, Any] = {name: data.draw(value) for name in names}
        items.append(ItemScore(item_id if data.draw(st.integers(0, 9)) else "other", values))
    rows = streaming.ScoreRows(ids)
    for pos, item in enumerate(items):
        rows.append(item, pos)
    assert repr(list(rows)) == repr(items)  # repr: NaN equal to NaN
    picked = data.draw(st.lists(st.integers(0, max(count - 1, 0)), max_size=count)) if count else []
    subset = streaming.RowsSubset(rows, array("q", picked))
    for aggregate in (mean, total):
        assert _outcome_of(aggregate, rows) == _outcome_of(aggregate, items)
        assert _outcome_of(aggregate, subset) == _outcome_of(aggregate, [items[r] for r in picked])
    if floats_only and len(shapes) == 1 and all(item.item_id != "other" for item in items):
        assert rows.value_sums() is not None  # the column sums were the ones compared


def _outcome_of(aggregate: Any, items: Any) -> str:
    try:
        return repr(aggregate(items))
    except TypeError as exc:  # a text value: both paths sum item by item and fail alike
        return f"TypeError: {exc}"
