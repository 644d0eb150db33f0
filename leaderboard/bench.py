"""A large store for the site's load-time benchmark, and the benchmark itself (not a test).

``generate`` fills a store with N synthetic submissions spread over every task.  Each one is a
per-item mixture of the task's real sample submissions: for every item it takes the item scores
one of the scored samples got on that item (seeded choice, per-submission mixing weights), then
computes its figures with the task's own aggregator, slices included (answer-label slices from the
re-scored restricted gold of the same samples).  So every generated row is a set of per-item scores
the real scorer produced, and its aggregates are exactly what the aggregator makes of them.  Rows
are bulk-inserted into the store's tables (001 columns; later migrations add columns with defaults)
under the fingerprint the real intake registers.  This is a benchmark fixture: the site itself only
ever writes through ``submissions.submit``.

``measure`` renders each page with Streamlit's AppTest (the server-side script run, which is what
a visitor waits for before the browser draws) and reports cold (first) and warm (cached) seconds.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from procbench.api import all_spec_paths, load_task
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from runners._types import GoldSet, InvalidPredictions, ItemScore
from runners.runner import TaskRunner
from submissions import store

FAMILIES = ("heuristic", "neural", "llm")
TEAMS = tuple(f"team-{n:02d}" for n in range(40))


@dataclass(frozen=True)
class TaskPool:
    """What a task's generated submissions are mixed from."""

    task: str
    split: str
    fingerprint: str
    gold: GoldSet
    runner: TaskRunner
    samples: tuple[dict[str, ItemScore], ...]  # per sample: item id -> its item scores
    views: tuple[dict[str, dict[str, list[ItemScore]]], ...]  # per sample: answer-label slice -> value -> re-scored items


def _pool(spec_path: Path, data_root: Path) -> TaskPool | None:
    spec, runner = load_task(spec_path)
    folder = SAMPLE_SUBMISSIONS_DIR / spec.name
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json")) if folder.is_dir() else []
    for split in sorted(spec.data.splits, key=lambda s: (s != "test", s != "dev")):
        try:
            gold, fingerprint = runner.gold(data_root, split)
        except (FileNotFoundError, ValueError):
            continue
        samples, views = [], []
        for path in files:
            try:
                predictions, _ = runner.validate(path, gold)
            except InvalidPredictions:
                continue
            items = runner.score(gold, predictions)
            samples.append({i.item_id: i for i in items})
            per_slice: dict[str, dict[str, list[ItemScore]]] = {}
            for sl in runner.slices:
                if sl.kind != "label":
                    per_slice[sl.name] = {
                        value: runner.score(GoldSet(items=view, labels=gold.labels), predictions) for value, view in gold.answer_views.get(sl.key, {}).items()
                    }
            views.append(per_slice)
        if samples:
            return TaskPool(spec.name, split, fingerprint, gold, runner, tuple(samples), tuple(views))
    return None


def _mixed(pool: TaskPool, rng: random.Random) -> tuple[list[ItemScore], list[int]]:
    weights = [rng.random() ** 2 + 0.05 for _ in pool.samples]
    ids = list(pool.samples[0])
    choice = rng.choices(range(len(pool.samples)), weights=weights, k=len(ids))
    return [pool.samples[c][i] for c, i in zip(choice, ids)], choice


def _aggregates(pool: TaskPool, items: list[ItemScore], choice: list[int]) -> list[tuple[str, str, str, float, int]]:
    aggregate = pool.runner.aggregate
    rows = [("", "", m, float(v), len(items)) for m, v in aggregate(items).items()]
    by_id = {i.item_id: i for i in items}
    for sl in pool.runner.slices:
        if sl.kind == "label":
            groups: dict[str, list[ItemScore]] = {}
            for item_id, labels in pool.gold.labels.items():
                if sl.key in labels and item_id in by_id:
                    groups.setdefault(labels[sl.key], []).append(by_id[item_id])
        else:
            order = list(pool.samples[0])
            groups = {}
            for value in pool.views[0].get(sl.name, {}):
                per_sample = [{i.item_id: i for i in v[sl.name][value]} for v in pool.views]
                groups[value] = [per_sample[c][item_id] for c, item_id in zip(choice, order) if item_id in per_sample[c]]
        for value, group in sorted(groups.items()):
            rows += [(sl.name, value, m, float(v), len(group)) for m, v in aggregate(group).items()]
    return rows


def generate(db_path: Path, n_submissions: int, *, seed: int = 0, data_root: Path = SAMPLE_DATA_ROOT, log: Callable[[str], None] = print) -> int:
    """Add ``n_submissions`` generated submissions, spread evenly over every task with sample submissions."""
    pools = [p for p in (_pool(path, data_root) for path in all_spec_paths()) if p is not None]
    rng = random.Random(seed)
    start = datetime(2025, 1, 1)
    subs, history, item_rows, aggregate_rows = [], [], [], []
    for n in range(n_submissions):
        pool = pools[n % len(pools)]
        items, choice = _mixed(pool, rng)
        sid = store.submission_id(pool.task, pool.split, "bench", f"{seed}:{n}", pool.fingerprint)
        team = rng.choice(TEAMS)
        metadata: dict[str, Any] = {"source": "generated"}
        if rng.random() < 0.8:
            metadata["open"] = rng.random() < 0.5
        if rng.random() < 0.8:
            metadata["family"] = rng.choice(FAMILIES)
        created = start + timedelta(minutes=n)
        subs.append((sid, pool.task, pool.split, pool.fingerprint, team, f"model-{n:05d}", f"{seed}:{n}", json.dumps(metadata), False, len(items), created))
        history += [(sid, status, "", created) for status in ("received", "validated", "scored")]
        item_rows += [(sid, i.item_id, m, float(v)) for i in items for m, v in i.values.items()]
        aggregate_rows += [(sid, *row) for row in _aggregates(pool, items, choice)]
    frames = {
        "submissions": pl.DataFrame(
            subs,
            orient="row",
            schema={
                "submission_id": pl.String,
                "task": pl.String,
                "split": pl.String,
                "fingerprint": pl.String,
                "team": pl.String,
                "model": pl.String,
                "content_sha256": pl.String,
                "metadata_json": pl.String,
                "is_reference": pl.Boolean,
                "n_items": pl.Int32,
                "created_at": pl.Datetime("us"),
            },
        ),
        "status_history": pl.DataFrame(
            history, orient="row", schema={"submission_id": pl.String, "status": pl.String, "reason": pl.String, "changed_at": pl.Datetime("us")}
        ),
        "item_scores": pl.DataFrame(
            item_rows, orient="row", schema={"submission_id": pl.String, "item_id": pl.String, "metric": pl.String, "value": pl.Float64}
        ),
        "aggregates": pl.DataFrame(
            aggregate_rows,
            orient="row",
            schema={"submission_id": pl.String, "slice": pl.String, "slice_value": pl.String, "metric": pl.String, "value": pl.Float64, "n_items": pl.Int32},
        ),
    }
    with store.writer(db_path) as con:
        con.execute("BEGIN TRANSACTION")
        for pool in pools:
            spec, _ = load_task(pool.task)
            store.register_task(
                con, task=spec.name, split=pool.split, fingerprint=pool.fingerprint, title=spec.title, benchmark=spec.benchmark or spec.name,
                version=spec.version, primary_metric=spec.primary, hidden=pool.split in spec.data.hidden,
                spec_json=json.dumps(spec.to_dict(), default=str), labels=pool.gold.labels,
            )
        for table, frame in frames.items():
            con.register("generated", frame.to_arrow())
            columns = ", ".join(frame.columns)
            con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM generated")  # table names are constants above
            con.unregister("generated")
        con.execute("COMMIT")
    log(f"{n_submissions} generated submissions over {len(pools)} tasks: {', '.join(p.task for p in pools)}")
    return n_submissions


PAGES = ("home", "board", "charts", "compare", "submission", "model", "items", "task", "downloads", "upload")


@dataclass(frozen=True)
class Timing:
    page: str
    task: str
    cold_s: float
    warm_s: float
    rows: int


def _first_submission(db: Path, task: str) -> str:
    with store.reader(db) as con:
        row = con.execute("SELECT submission_id FROM board WHERE task = ? AND slice = '' AND NOT is_reference ORDER BY value DESC LIMIT 1", [task]).fetchone()
    return row[0] if row else ""


def _first_model(db: Path, task: str) -> str:
    with store.reader(db) as con:
        row = con.execute("SELECT model FROM board WHERE task = ? AND slice = '' AND NOT is_reference ORDER BY value DESC LIMIT 1", [task]).fetchone()
    return row[0] if row else ""


def _render(db: Path, page: str, params: dict[str, str]) -> float:
    from streamlit.testing.v1 import AppTest

    os.environ["PROCBENCH_DB"] = str(db)
    at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "app.py"), default_timeout=900)
    for key, value in params.items():
        at.query_params[key] = value
    started = time.perf_counter()
    at.run()  # the entry page (Home)
    if page != "home":
        started = time.perf_counter()
        at.switch_page(f"site_pages/{page}.py").run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].value}")
    return elapsed


def measure(db: Path, tasks: Sequence[str], pages: Sequence[str] = PAGES, log: Callable[[str], None] = print) -> list[Timing]:
    """Cold then warm seconds per page and task (one process: caches warm up as a server's would)."""
    with store.reader(db) as con:
        counts = dict(con.execute("SELECT task, count(*) FROM submissions GROUP BY task").fetchall())
    out = []
    for task in tasks:
        split_row = None
        with store.reader(db) as con:
            split_row = con.execute(
                "SELECT split FROM current_tasks t WHERE task = ? ORDER BY (SELECT count(*) FROM submissions s WHERE s.task = t.task AND s.split = t.split) "
                "DESC LIMIT 1",
                [task],
            ).fetchone()
        params = {"task": task, "split": split_row[0] if split_row else ""}
        for page in pages:
            extra = {"id": _first_submission(db, task)} if page in ("submission", "items") else {}
            extra = {"model": _first_model(db, task)} if page == "model" else extra
            if page in ("home",) and task != tasks[0]:
                continue
            cold = _render(db, page, {**params, **extra})
            warm = _render(db, page, {**params, **extra})
            timing = Timing(page, task, cold, warm, counts.get(task, 0))
            log(f"{page:<11} {task:<26} cold {cold:7.2f} s   warm {warm:6.2f} s   ({timing.rows} submissions of this task)")
            out.append(timing)
    return out
