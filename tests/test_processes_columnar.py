"""The processes engine sends each result's item rows as columns (issue #31), and stores what the local engine stores.

A PAGED result has about 70,000 item rows on the real dev split: as tuples the coordinator unpickled a tuple per
row and the store converted each value from Python into DuckDB, while the coordinator shares the cores with
the workers.  A worker now sends them as :class:`ItemColumns` (an Arrow table), which pickles with a handful
of tuples whatever the row count, and the store inserts it with DuckDB's Arrow scan.  Counted here: the
pickle's tuple opcodes and the rows the store's input holds, never a time.  What is stored (each item row in
its insertion order, each aggregate, each board) is the local engine's, on the real PAGED scorer and the bundled
PAGED samples with a changed gold.
"""

from __future__ import annotations

import json
import math
import pickle
import pickletools
import shutil
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.api import load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.rescore import plan, rescore
from procbench.submissions import processes_engine
from procbench.submissions.engines import RescoreResult, run_job
from procbench.submissions.intake import SubmissionRequest, submit
from procbench.submissions.rows import ItemColumns, item_columns, item_frame
from tests.rescore_stores import copy_store

PAGED_GOLD = Path("paged") / "dataset" / "procedural_graph_extraction"
TUPLE_OPS = {"TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "EMPTY_TUPLE"}


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store of the PAGED sample submissions (test split), and the sample data with one gold flow fewer."""
    folder = tmp_path_factory.mktemp("columnar")
    db = folder / "store.duckdb"
    spec, runner = load_task("paged")
    for path in sorted((SAMPLE_SUBMISSIONS_DIR / "paged").glob("*.jsonl")):
        submit(
            SubmissionRequest(
                split="dev", predictions=path, model=path.stem, team=f"team-{path.stem}"
            ),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )
    changed = folder / "changed"
    shutil.copytree(SAMPLE_DATA_ROOT / "paged", changed / "paged")
    gold = changed / PAGED_GOLD / "dev.json"
    records = json.loads(gold.read_text(encoding="utf-8"))
    record = next(r for r in records if len(r["SequenceFlow"]) > 1)
    record["SequenceFlow"] = record["SequenceFlow"][:-1]  # a new fingerprint
    gold.write_text(json.dumps(records), encoding="utf-8")
    return db, changed


def _tuple_ops(payload: bytes) -> int:
    return sum(1 for op, _, _ in pickletools.genops(payload) if op.name in TUPLE_OPS)


def test_a_worker_sends_the_local_engines_item_rows_as_columns(paged: tuple[Path, Path]) -> None:
    db, changed = paged
    jobs, unplannable, _, _, _ = plan(db, Path("specs/paged.spec"), data_root=changed)
    assert len(jobs) == 3 and not unplannable
    local = {job.job_id: run_job(job) for job in jobs}
    sent = processes_engine.score_share(jobs)  # the worker's own function, here in this process
    assert sorted(r.job_id for r in sent) == sorted(local)
    for result in sent:
        here = local[result.job_id]
        assert here.ok and result.ok, (here.reason, result.reason)
        assert isinstance(here.items, tuple) and isinstance(result.items, ItemColumns)
        assert len(here.items) > 50
        payload = pickle.dumps(result)  # what travels from the worker to the coordinator
        arrived = pickle.loads(payload)
        assert isinstance(arrived.items, ItemColumns)
        # the same rows in the same order, and everything else the same
        assert tuple(arrived.items) == here.items
        assert (
            arrived.fingerprint,
            arrived.n_items,
            arrived.aggregates,
            arrived.warnings,
            arrived.n_answered,
        ) == (here.fingerprint, here.n_items, here.aggregates, here.warnings, here.n_answered)
        # as rows, the items add a tuple per row to the payload; as columns, a fixed few (Arrow's schema and buffers)
        bare = _tuple_ops(pickle.dumps(replace(here, items=())))
        assert _tuple_ops(pickle.dumps(here)) - bare >= len(here.items)
        columns_cost = _tuple_ops(payload) - bare
        assert columns_cost < len(here.items) // 2
        assert _tuple_ops(pickle.dumps(item_columns(here.items * 10))) == _tuple_ops(
            pickle.dumps(result.items)
        )  # ten times the rows, not one tuple more
        # the store is handed the table, not a tuple per row
        frame = item_frame("sid", arrived.items)
        assert frame.rows == () and frame.table is not None and frame.height == len(here.items)


def _items_in_insertion_order(db: Path) -> dict[str, list[tuple[object, ...]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT s.origin_id, i.item_id, i.metric, i.value FROM item_scores i JOIN submissions s USING (submission_id) "
            "WHERE s.origin_id <> s.submission_id ORDER BY s.origin_id, i.rowid"
        ).fetchall()
        aggregates = con.execute(
            "SELECT s.origin_id, s.fingerprint, a.slice, a.slice_value, a.metric, a.value, a.n_items FROM aggregates a "
            "JOIN submissions s USING (submission_id) WHERE s.origin_id <> s.submission_id ORDER BY s.origin_id, a.rowid"
        ).fetchall()
        boards = con.execute(
            "SELECT submission_id, fingerprint, metric, value FROM board WHERE task = 'paged' ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[object, ...]]] = {"aggregates": aggregates, "board": boards}
    for origin, *row in rows:
        out.setdefault(origin, []).append(tuple(row))
    return out


def test_processes_store_the_local_engines_paged_rows_in_order(
    paged: tuple[Path, Path], tmp_path: Path
) -> None:
    db, changed = paged
    stored = {}
    for engine in ("local", "processes"):
        copy = copy_store(db, tmp_path / f"{engine}.duckdb")
        report = rescore(
            copy,
            "paged",
            data_root=changed,
            engine=engine,
            workers=2 if engine == "processes" else None,
        )
        assert len(report.rescored) == 3 and not report.failed, report
        assert set(report.moved) == {"dev"}
        stored[engine] = _items_in_insertion_order(copy)
    assert stored["local"]["aggregates"] and len(stored["local"]) == 5  # three origins' items
    assert stored["processes"] == stored["local"]


ids = st.text(min_size=0, max_size=12)
values = st.floats(allow_nan=False, width=64)


@given(st.lists(st.tuples(ids, ids, values | st.integers(-(2**40), 2**40)), max_size=40))
def test_item_columns_are_the_rows_they_were_built_from(rows: list[tuple[str, str, float]]) -> None:
    columns = item_columns(rows)
    as_rows = tuple((i, m, float(v)) for i, m, v in rows)
    assert len(columns) == len(rows) and tuple(columns) == as_rows and columns == as_rows
    assert pickle.loads(pickle.dumps(columns)) == columns
    if rows:
        assert columns[0] == as_rows[0] and columns[-1] == as_rows[-1]
        assert columns[len(rows) // 2] == as_rows[len(rows) // 2] and columns[1:] == as_rows[1:]
    with pytest.raises(IndexError):
        columns[len(rows)]
    # the store takes both forms as the same columns
    assert item_frame("s", columns).columns(3) == item_frame("s", rows).columns(3)
    assert all(isinstance(v, float) and not math.isnan(v) for _, _, v in columns)


def test_item_columns_take_only_the_three_item_columns() -> None:
    import pyarrow as pa

    with pytest.raises(ValueError, match="item_id, metric, value"):
        ItemColumns(pa.table({"item_id": ["a"], "value": [1.0]}))
    assert len(item_columns([])) == 0 and item_frame("s", item_columns([])).height == 0


def test_a_row_arrow_cannot_type_travels_as_a_tuple_as_before() -> None:
    """The store takes both forms, so a result whose rows Arrow's string column refuses is sent unchanged."""
    odd = RescoreResult("j", True, "fp", items=((5, "accuracy", 1.0), ("b", "accuracy", 0.0)))  # type: ignore[arg-type]  # an id no runner of ours gives
    assert processes_engine.columnar(odd) is odd
    plain = RescoreResult("j", True, "fp", items=(("a", "accuracy", 1.0),))
    assert isinstance(processes_engine.columnar(plain).items, ItemColumns)
    failed = RescoreResult("j", False, reason="no longer valid")
    assert processes_engine.columnar(failed) is failed


def test_every_engine_sends_a_large_result_as_columns(
    paged: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_job (the local and Ray engines' job function too) gives a result of at least COLUMNAR_ROWS item rows as
    columns, the same rows as below the threshold, where it stays tuples (a small re-score does not import pyarrow
    for it)."""
    from procbench.submissions import rows

    db, changed = paged
    jobs, _, _, _, _ = plan(db, Path("specs/paged.spec"), data_root=changed)
    small = {job.job_id: run_job(job) for job in jobs}
    assert all(
        isinstance(r.items, tuple) and len(r.items) < rows.COLUMNAR_ROWS for r in small.values()
    )
    monkeypatch.setattr(rows, "COLUMNAR_ROWS", 1)
    for job in jobs:
        large = run_job(job)
        assert isinstance(large.items, ItemColumns)
        assert list(large.items) == list(small[job.job_id].items)
        assert replace(large, items=()) == replace(small[job.job_id], items=())
