"""One measurement in a fresh process: ``python -m procbench.bench.worker '<json request>'`` prints one JSON line.

Running each measurement in its own process gives an honest peak RSS (``ru_maxrss``) and cold
caches.  These are the in-process stage timings (imports done before the clock starts, reported
apart as ``import_s``); what a user waits for, the whole process, is measured by bench/process.py.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def rss_mb() -> float:
    """Peak resident set size of this process so far, in MB.

    ``VmHWM`` is this program's own high-water mark; ``ru_maxrss`` on Linux also counts the parent's
    memory before ``exec`` (the bench runner's), so it is only the fallback.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _warm(task: str) -> float:
    """Import what scoring ``task`` imports lazily; returns the seconds it took."""
    start = time.perf_counter()
    from procbench.api import load_task

    load_task(task)
    if task == "paged":
        from procbench.runners.paged.tokens import tokens

        tokens("warm up")
    if task.startswith("paradise"):
        import sklearn.metrics  # noqa: F401
    return time.perf_counter() - start


def score(request: dict[str, Any]) -> dict[str, Any]:
    """Every stage of ``runner.evaluate`` on one workload, timed: gold (+ fingerprint), validate, score, slices."""
    from procbench.api import load_task

    import_s = _warm(request["task"])
    _, runner = load_task(request["task"])
    root, split, predictions = (
        Path(request["data_root"]),
        request["split"],
        Path(request["predictions"]),
    )
    read_gold_s = None
    if request.get("gold_read"):  # the reader alone (the gold stage below adds the fingerprint)
        start = time.process_time()
        runner.read_gold(root, split)
        read_gold_s = time.process_time() - start
    before = rss_mb()
    clock, cpu = time.perf_counter(), time.process_time()
    marks = {}
    gold, fingerprint = runner.gold(root, split)
    marks["gold"] = time.perf_counter()
    records, notes = runner.validate(predictions, gold)
    marks["validate"] = time.perf_counter()
    items = runner.score(gold, records, {})
    metrics = runner.aggregate(items)
    marks["score"] = time.perf_counter()
    runner.slice_results(gold, records, items, {})
    marks["slices"] = time.perf_counter()
    wall, cpu = time.perf_counter() - clock, time.process_time() - cpu
    phases, last = {}, clock
    for name, at in marks.items():
        phases[name] = at - last
        last = at
    return {
        "items": len(items),
        "wall_s": wall,
        "cpu_s": cpu,
        "phases": phases,
        "import_s": import_s,
        "read_gold_cpu_s": read_gold_s,
        "rss_before_mb": before,
        "peak_rss_mb": rss_mb(),
        "primary": metrics.get(request.get("primary", ""), None),
        "bytes": predictions.stat().st_size if predictions.is_file() else 0,
    }


def intake(request: dict[str, Any]) -> dict[str, Any]:
    """Validation alone (reading the file) and the whole intake (validate, score, store one transaction)."""
    from procbench.api import load_task
    from procbench.submissions.intake import SubmissionRequest, submit

    import_s = _warm(request["task"])
    spec, runner = load_task(request["task"])
    root, split, predictions = (
        Path(request["data_root"]),
        request["split"],
        Path(request["predictions"]),
    )
    gold, _ = runner.gold(root, split)
    before = rss_mb()
    start = time.perf_counter()
    records, _ = runner.validate(predictions, gold)
    validate_s = time.perf_counter() - start
    validate_rss = rss_mb()
    n_items = len(records)
    del records
    size = predictions.stat().st_size
    result = {
        "bytes": size,
        "items": n_items,
        "validate_s": validate_s,
        "validate_mb_s": size / 1e6 / validate_s,
        "import_s": import_s,
        "rss_before_mb": before,
        "validate_peak_rss_mb": validate_rss,
    }
    if request.get("whole", True):
        start = time.perf_counter()
        submit(
            SubmissionRequest(split=split, predictions=predictions, model="bench", team="bench"),
            spec,
            runner,
            data_root=root,
            db_path=Path(request["db"]),
        )
        result["submit_s"] = time.perf_counter() - start
        result["submit_mb_s"] = size / 1e6 / result["submit_s"]
    result["peak_rss_mb"] = rss_mb()
    return result


def queries(request: dict[str, Any]) -> dict[str, Any]:
    """p50/p95 of the site's read queries (``procbench.leaderboard.queries``), each opening the store read-only as the site does."""
    from procbench.leaderboard import queries as q

    db, reps = Path(request["db"]), int(request["reps"])
    task, split = request["task"], request["split"]
    slice_name, slice_value = request["slice"], request["slice_value"]
    first, second = request["compare"]
    cases = {
        "task board": lambda: q.board(db, task, split),
        "one slice": lambda: q.board(db, task, split, slice_name, slice_value),
        "compare two submissions": lambda: (
            q.item_scores(db, [first, second]),
            q.aggregates(db, first),
            q.aggregates(db, second),
        ),
        "task list": lambda: q.tasks(db),
    }
    out: dict[str, Any] = {"site": _percentiles(cases, reps)}
    # the same SQL on one connection kept open: what the queries cost without opening the store
    import duckdb

    from procbench.submissions.store import CONNECT_CONFIG, submission_rows

    con = duckdb.connect(str(db), read_only=True, config=CONNECT_CONFIG)
    board_sql = (
        "SELECT submission_id, model, team, is_reference, created_at, slice_n_items AS n_items, metric, value"
        " FROM board WHERE task = ? AND split = ? AND slice = ? AND slice_value = ?"
    )
    sql_cases = {
        "task board": lambda: con.execute(board_sql, [task, split, "", ""]).fetchall(),
        "one slice": lambda: con.execute(
            board_sql, [task, split, slice_name, slice_value]
        ).fetchall(),
        "compare two submissions": lambda: (  # the site's reads (procbench.leaderboard.queries.item_scores, aggregates) on the open connection
            {
                sid: table.to_pylist()
                for sid, table in submission_rows(con, "item_scores", [first, second]).items()
            },
            *(
                submission_rows(con, "aggregates", [sid])[sid]
                .sort_by([(c, "ascending") for c in ("slice", "slice_value", "metric")])
                .to_pylist()
                for sid in (first, second)
            ),
        ),
        "task list": lambda: con.execute(
            "SELECT task, split, title, benchmark, primary_metric, hidden, fingerprint, spec_json FROM current_tasks ORDER BY benchmark, task, split"
        ).fetchall(),
    }
    try:
        out["sql"] = _percentiles(sql_cases, reps)
    finally:
        con.close()
    return out


def _percentiles(cases: dict[str, Any], reps: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, run in cases.items():
        try:
            run()  # first call: connection, catalog and page cache
            times = []
            for _ in range(reps):
                start = time.perf_counter()
                run()
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            out[name] = {
                "p50_ms": statistics.median(times),
                "p95_ms": times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))],
            }
        except Exception as exc:  # noqa: BLE001 - a broken query is reported, not fatal
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return out


def render(request: dict[str, Any]) -> dict[str, Any]:
    """Seconds to render the task board page with Streamlit's AppTest (the real app, the given store)."""
    import os

    from streamlit.testing.v1 import AppTest

    from procbench.paths import PROJECT_ROOT

    os.environ["PROCBENCH_DB"] = str(request["db"])
    times, problems = [], []
    for _ in range(int(request["reps"])):
        start = time.perf_counter()
        at = AppTest.from_file(
            str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=120
        ).run()
        page = request.get("page")
        if page:
            at = at.switch_page(page).run()
        times.append(time.perf_counter() - start)
        if at.exception:
            problems.append(str(at.exception[0].value)[:200])
    times.sort()
    return {"median_s": statistics.median(times), "max_s": times[-1], "errors": problems[:1]}


def compare(request: dict[str, Any]) -> dict[str, Any]:
    from procbench.bench import compare as comparisons
    from procbench.bench.generate import Workload

    workload = Workload(
        **{
            **request["workload"],
            "data_root": Path(request["workload"]["data_root"]),
            "predictions": Path(request["workload"]["predictions"]),
        }
    )
    _warm(workload.task if request["name"] != "openpi-dedup" else "openpi-head")
    if request["name"] == "paged":
        from procbench.bench.reference import paged as reference

        reference.tokens("warm up")
        import nltk.translate.bleu_score  # noqa: F401
    run = {
        "openpi": lambda: comparisons.openpi(workload, limit=request["limit"]),
        "openpi-dedup": lambda: comparisons.openpi(workload, limit=request["limit"], dedup=True),
        "paradise": lambda: comparisons.paradise(workload),
        "pmllm": lambda: comparisons.pmllm(workload),
        "paged": lambda: comparisons.paged(workload, limit=request["limit"]),
    }[request["name"]]
    result = run()
    return {
        "metric": result.metric,
        "items": result.items,
        "procbench_s": result.procbench_s,
        "reference_s": result.reference_s,
        "ratio": result.ratio,
        "max_abs_difference": result.max_abs_difference,
    }


def _cpu_with_children() -> float:
    import resource

    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def rescore(request: dict[str, Any]) -> dict[str, Any]:
    """``procbench rescore`` of one task with one engine, timed; returns the new rows' aggregates for comparison."""
    import duckdb

    from procbench.rescore import rescore as do_rescore

    if request["engine"] == "ray":
        import procbench.submissions.ray_engine  # noqa: F401  (registers the engine; Ray imports here, not on the clock)
    _warm(request["task"])
    start, cpu = time.perf_counter(), _cpu_with_children()
    report = do_rescore(
        Path(request["db"]),
        request["task"],
        data_root=Path(request["data_root"]),
        engine=request["engine"],
    )
    seconds = time.perf_counter() - start
    cpu_s = (
        _cpu_with_children() - cpu
    )  # this process and its ended children (the processes engine's workers)
    con = duckdb.connect(request["db"], read_only=True)
    try:
        rows = con.execute(
            "SELECT s.origin_id, a.slice, a.slice_value, a.metric, a.value FROM aggregates a JOIN submissions s USING (submission_id) "
            "WHERE s.origin_id <> s.submission_id ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    return {
        "seconds": seconds,
        "cpu_s": cpu_s,
        "rescored": len(report.rescored),
        "failed": [list(f) for f in report.failed][:3],
        "aggregate_rows": [list(r) for r in rows],
    }


def start_up(request: dict[str, Any]) -> dict[str, Any]:
    """Where loading a task's runner from its cached plan goes: CPU seconds in all, and in Python's ``@dataclass``.

    The decorator writes and compiles each class's methods when the class is defined, which is most of
    what importing a module of typed dataclasses costs; this counts the classes and times them.
    """
    import dataclasses

    spent = [0.0, 0]
    process_class = dataclasses._process_class  # type: ignore[attr-defined]

    def timed(cls: type, *args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return process_class(cls, *args, **kwargs)
        finally:
            spent[0] += time.process_time() - started
            spent[1] += 1

    dataclasses._process_class = timed  # type: ignore[attr-defined]
    before = set(sys.modules)
    started = time.process_time()
    try:
        from procbench.console_commands import load_runner

        load_runner(request["task"])
    finally:
        dataclasses._process_class = process_class  # type: ignore[attr-defined]
    total = time.process_time() - started
    own = sorted(
        m
        for m in set(sys.modules) - before
        if m.partition(".")[0] == "procbench"  # one import name: dsl, runners, ... are procbench.*
    )
    return {
        "task": request["task"],
        "cpu_s": total,
        "dataclass_cpu_s": spent[0],
        "dataclasses": spent[1],
        "own_modules": len(own),
        "modules": len(set(sys.modules) - before),
    }


KINDS = {
    "start_up": start_up,
    "score": score,
    "intake": intake,
    "queries": queries,
    "render": render,
    "compare": compare,
    "rescore": rescore,
}


def main() -> None:
    request = json.loads(sys.argv[1])
    result = KINDS[request["kind"]](request)
    print("BENCH-RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
