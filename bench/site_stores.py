"""A large store for the site's load-time benchmark (a benchmark fixture, not a test).

``generate`` fills a store with N synthetic submissions spread over every task.  Each one is a
per-item mixture of the task's real sample submissions: for every item it takes the item scores
one of the scored samples got on that item (seeded choice, per-submission mixing weights), then
computes its figures with the task's own aggregator, slices included (answer-label slices from the
re-scored restricted gold of the same samples).  So every generated row is a set of per-item scores
the real scorer produced, and its aggregates are exactly what the aggregator makes of them.  Rows
are bulk-inserted into the store's tables (001 columns; later migrations add columns with defaults)
under the fingerprint the real intake registers, ``BATCH`` submissions (at most ``ITEM_ROWS`` item rows) at a time, each batch committed in
its own ``store.writer`` block (issue #31: one transaction for a whole run held 0.85 MB per submission, 9.2 GB
at 10 000; a batch at a time the peak is flat).  This is a benchmark fixture: the site itself only ever writes
through ``submissions.submit``.

``generate_from_store`` makes the realistic one: a copy of the real-data board (``procbench demo`` where the
data root has the real data) plus N submissions mixed from its stored rows, on the real splits.

Whole pages in a real browser are :mod:`procbench.bench.browserbench`; both run from
``python -m procbench.bench.site`` (``make bench-site``).
"""

from __future__ import annotations

import json
import random
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from procbench.api import all_spec_paths, load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime._types import GoldSet, InvalidPredictions, ItemScore
from procbench.runners.runtime.runner import TaskRunner
from procbench.submissions import store

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
    views: tuple[
        dict[str, dict[str, list[ItemScore]]], ...
    ]  # per sample: answer-label slice -> value -> re-scored items


def _pool(spec_path: Path, data_root: Path) -> TaskPool | None:
    spec, runner = load_task(spec_path)
    folder = SAMPLE_SUBMISSIONS_DIR / spec.name
    files = (
        sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json"))
        if folder.is_dir()
        else []
    )
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
                        value: runner.score(GoldSet(items=view, labels=gold.labels), predictions)
                        for value, view in gold.answer_views.get(sl.key, {}).items()
                    }
            views.append(per_slice)
        if samples:
            return TaskPool(
                spec.name, split, fingerprint, gold, runner, tuple(samples), tuple(views)
            )
    return None


def _mixed(pool: TaskPool, rng: random.Random) -> tuple[list[ItemScore], list[int]]:
    weights = [rng.random() ** 2 + 0.05 for _ in pool.samples]
    ids = list(pool.samples[0])
    choice = rng.choices(range(len(pool.samples)), weights=weights, k=len(ids))
    return [pool.samples[c][i] for c, i in zip(choice, ids)], choice


def _aggregates(
    pool: TaskPool, items: list[ItemScore], choice: list[int]
) -> list[tuple[str, str, str, float, int]]:
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
                groups[value] = [
                    per_sample[c][item_id]
                    for c, item_id in zip(choice, order)
                    if item_id in per_sample[c]
                ]
        for value, group in sorted(groups.items()):
            rows += [(sl.name, value, m, float(v), len(group)) for m, v in aggregate(group).items()]
    return rows


# the columns the generators write, per table (001's; later migrations' columns take their defaults)
SCHEMAS: dict[str, dict[str, Any]] = {
    "submissions": {
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
    "status_history": {
        "submission_id": pl.String,
        "status": pl.String,
        "reason": pl.String,
        "changed_at": pl.Datetime("us"),
    },
    "item_scores": {
        "submission_id": pl.String,
        "item_id": pl.String,
        "metric": pl.String,
        "value": pl.Float64,
    },
    "aggregates": {
        "submission_id": pl.String,
        "slice": pl.String,
        "slice_value": pl.String,
        "metric": pl.String,
        "value": pl.Float64,
        "n_items": pl.Int32,
    },
}
CARD_SCHEMA: dict[str, Any] = {
    "size_class": pl.String,
    "weights": pl.String,
    "method_family": pl.String,
}
BATCH = 500  # submissions per committed transaction: what one batch holds in memory, whatever the run's size
# ... and at most this many item rows (issue #31: 500 OpenPI-sized submissions are 4.7M item rows; as Python tuples,
# then a polars frame, then DuckDB's insert, a batch that size peaked at 1.5 GB on its own)
ITEM_ROWS = 500_000

# The batch's aggregates packed as insert_submission packs them (migration 003), from the batch itself, so the
# writer's sync finds every aggregate packed and never re-packs the whole table.
_PACK_BATCH = """
    INSERT INTO aggregates_packed (submission_id, task, split, fingerprint, slice, slice_value, metric, value, n_items)
    SELECT a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value,
           list(a.metric ORDER BY a.position), list(a.value ORDER BY a.position), list(a.n_items ORDER BY a.position)
    FROM generated_aggregates a JOIN generated_submissions s USING (submission_id)
    GROUP BY a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value
    ORDER BY min(a.position)
"""


def write_batch(
    db_path: Path,
    rows: dict[str, list[Any]],
    schemas: dict[str, dict[str, Any]],
    *,
    before: Callable[[Any], None] | None = None,
) -> None:
    """Store one batch of generated rows in one transaction of its own ``store.writer`` block; ``rows`` is emptied.

    Each batch commits and detaches (the writer's sync records the batch's row spans and the summary), so a run
    holds one batch in memory whatever its size (issue #31: one transaction for a whole run held 0.85 MB per
    submission).  ``before(con)`` runs first inside the transaction (registering the boards).
    """
    frames = {
        table: pl.DataFrame(rows[table], orient="row", schema=schema)
        for table, schema in schemas.items()
    }
    # the tuples are in the frames now: free them before DuckDB's insert needs its memory
    for table in rows:
        rows[table].clear()
    frames["aggregates"] = frames["aggregates"].with_row_index("position")
    with store.writer(db_path) as con, store.transaction(con):
        if before is not None:
            before(con)
        for table, frame in frames.items():
            con.register(f"generated_{table}", frame.to_arrow())
        for table, schema in schemas.items():
            columns = ", ".join(schema)
            con.execute(
                f"INSERT INTO {table} ({columns}) SELECT {columns} FROM generated_{table}"
            )  # table names are constants above
        con.execute(_PACK_BATCH)
        for table in frames:
            con.unregister(f"generated_{table}")


GOAL_PEAK_RSS_MB = 2048  # issue #31: the generator's peak RSS for any number of submissions


def cost_path(db_path: Path) -> Path:
    """Where ``python -m procbench.bench.site generate`` leaves what making ``db_path`` cost."""
    return Path(str(db_path) + ".generated.json")


@dataclass(frozen=True)
class Cost:
    """What one generator run cost: wall and CPU seconds, and the process's peak RSS (its whole life, imports included)."""

    submissions: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float

    @classmethod
    def start(cls) -> Cost:
        return cls(0, time.perf_counter(), time.process_time(), 0.0)

    def stop(self, submissions: int) -> Cost:
        # ru_maxrss is in KiB on Linux: the high-water mark of the process, as /usr/bin/time reports it
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return Cost(
            submissions, time.perf_counter() - self.wall_s, time.process_time() - self.cpu_s, peak
        )

    def write(self, db_path: Path) -> None:
        cost_path(db_path).write_text(json.dumps(self.__dict__, indent=1))

    @classmethod
    def read(cls, db_path: Path) -> Cost | None:
        """The cost recorded beside ``db_path``, or None (a store made otherwise, or a record unreadable)."""
        try:
            found = json.loads(cost_path(db_path).read_text())
            return cls(
                int(found["submissions"]),
                float(found["wall_s"]),
                float(found["cpu_s"]),
                float(found["peak_rss_mb"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @property
    def met(self) -> bool:
        return self.peak_rss_mb <= GOAL_PEAK_RSS_MB

    def line(self) -> str:
        return (
            f"made by `python -m procbench.bench.site generate` ({self.submissions:,} submissions) in {self.wall_s:.0f} s wall, "
            f"{self.cpu_s:.0f} s CPU, peak RSS {self.peak_rss_mb:,.0f} MB (issue #31: ≤ {GOAL_PEAK_RSS_MB:,} MB for any size: "
            f"{'met' if self.met else '**not met**'})"
        )


def _full(rows: dict[str, list[Any]], made: int, batch: int) -> bool:
    """Whether the batch being built is due for its transaction: ``batch`` submissions, or :data:`ITEM_ROWS` item rows."""
    return made % batch == 0 or len(rows["item_scores"]) >= ITEM_ROWS


def generate(
    db_path: Path,
    n_submissions: int,
    *,
    seed: int = 0,
    data_root: Path = SAMPLE_DATA_ROOT,
    log: Callable[[str], None] = print,
    batch: int = BATCH,
) -> int:
    """Add ``n_submissions`` generated submissions, spread evenly over every task with sample submissions.

    Committed ``batch`` submissions at a time (each batch its own transaction): memory stays flat at any size.
    """
    pools = [p for p in (_pool(path, data_root) for path in all_spec_paths()) if p is not None]
    rng = random.Random(seed)
    start = datetime(2025, 1, 1)
    rows: dict[str, list[Any]] = {table: [] for table in SCHEMAS}

    def register(con: Any) -> None:
        for pool in pools:
            spec, _ = load_task(pool.task)
            store.register_task(
                con,
                task=spec.name,
                split=pool.split,
                fingerprint=pool.fingerprint,
                title=spec.title,
                benchmark=spec.benchmark or spec.name,
                version=spec.version,
                primary_metric=spec.primary,
                hidden=pool.split in spec.data.hidden,
                spec_json=json.dumps(spec.to_dict(), default=str),
                labels=pool.gold.labels,
            )

    registered = False
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
        rows["submissions"].append(
            (
                sid,
                pool.task,
                pool.split,
                pool.fingerprint,
                team,
                f"model-{n:05d}",
                f"{seed}:{n}",
                json.dumps(metadata),
                False,
                len(items),
                created,
            )
        )
        rows["status_history"] += [
            (sid, status, "", created) for status in ("received", "validated", "scored")
        ]
        rows["item_scores"] += [
            (sid, i.item_id, m, float(v)) for i in items for m, v in i.values.items()
        ]
        rows["aggregates"] += [(sid, *row) for row in _aggregates(pool, items, choice)]
        if _full(rows, n + 1, batch) or n + 1 == n_submissions:
            write_batch(db_path, rows, SCHEMAS, before=None if registered else register)
            registered = True
            if (n + 1) % (batch * 10) == 0:
                log(f"  {n + 1} generated")
    if not registered:  # no submissions asked for: the boards alone
        write_batch(db_path, rows, SCHEMAS, before=register)
    log(
        f"{n_submissions} generated submissions over {len(pools)} tasks: {', '.join(p.task for p in pools)}"
    )
    return n_submissions


def _store_pools(
    source: Path, rng: random.Random
) -> list[tuple[str, str, str, TaskRunner, list[dict[str, ItemScore]], dict[str, dict[str, str]]]]:
    """Per current board of ``source``: (task, split, fingerprint, runner, per-submission item scores, labels by dimension).

    Boards with fewer than two stored submissions get seeded item permutations of the one they have as extra
    sources (each item keeps a real item's statistics), so mixtures differ.
    """
    out = []
    with store.reader(source) as con:
        boards = con.execute(
            "SELECT task, split, fingerprint FROM current_tasks ORDER BY task"
        ).fetchall()
        for task, split, fingerprint in boards:
            try:
                _, runner = load_task(task)
            except Exception:  # noqa: BLE001 - a spec this checkout cannot load is left out of the fixture
                continue
            ids = [
                r[0]
                for r in con.execute(
                    "SELECT submission_id FROM submissions WHERE task = ? AND split = ? AND fingerprint = ? AND NOT is_reference AND n_items > 0 "
                    "ORDER BY submission_id",
                    [task, split, fingerprint],
                ).fetchall()
            ]
            sources: list[dict[str, ItemScore]] = []
            for sid in ids:
                values: dict[str, dict[str, float]] = {}
                for item_id, metric, value in con.execute(
                    "SELECT item_id, metric, value FROM item_scores WHERE submission_id = ?", [sid]
                ).fetchall():
                    values.setdefault(item_id, {})[metric] = value
                if values:
                    sources.append({i: ItemScore(i, v) for i, v in sorted(values.items())})
            if not sources:
                continue
            while len(sources) < 4:
                first = sources[0]
                order = list(first)
                shuffled = order[:]
                rng.shuffle(shuffled)
                sources.append({i: ItemScore(i, first[j].values) for i, j in zip(order, shuffled)})
            labels: dict[str, dict[str, str]] = {}
            for item_id, dimension, value in con.execute(
                "SELECT item_id, dimension, value FROM item_labels WHERE task = ? AND split = ? AND fingerprint = ?",
                [task, split, fingerprint],
            ).fetchall():
                labels.setdefault(dimension, {})[item_id] = value
            out.append((task, split, fingerprint, runner, sources, labels))
    return out


def generate_from_store(
    source: Path,
    db_path: Path,
    n_submissions: int,
    *,
    seed: int = 0,
    log: Callable[[str], None] = print,
    batch: int = BATCH,
) -> int:
    """A copy of the real store ``source`` (``procbench demo`` on real data) plus ``n_submissions`` generated rows.

    Each generated submission is a per-item mixture of the stored submissions of one current board (seeded
    choice per item, per-submission mixing weights), so its item scores are what the real scorer produced on the
    real split (hundreds of items: bootstraps and item pages cost what they cost on a real board); its figures
    are the task's aggregator over those items, whole split and every item-label slice.  Answer-label slices
    (they re-score restricted gold) have no generated rows.  Model cards are filled at random from the intake's
    own classes, so every filter has something to filter.
    """
    import shutil

    from procbench.submissions.details import METHOD_FAMILIES, SIZE_CLASSES, WEIGHTS

    for suffix in ("", ".wal", ".lock"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    shutil.rmtree(Path(str(db_path) + ".cache"), ignore_errors=True)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with store.reader(source):
        shutil.copyfile(
            source, db_path
        )  # the reader's shared lock: no writer mid-copy; its WAL is checkpointed on detach
    for beside in (
        ".raw",
        ".inputs",
    ):  # the stored prediction files of the real rows (Compare and Items read them back)
        if Path(str(source) + beside).is_dir():
            shutil.rmtree(Path(str(db_path) + beside), ignore_errors=True)
            shutil.copytree(Path(str(source) + beside), Path(str(db_path) + beside))
    rng = random.Random(seed)
    pools = _store_pools(source, rng)
    start = datetime(2025, 1, 1)
    schemas = {**SCHEMAS, "submissions": {**SCHEMAS["submissions"], **CARD_SCHEMA}}
    rows: dict[str, list[Any]] = {table: [] for table in schemas}

    for n in range(n_submissions):
        task, split, fingerprint, runner, sources, labels = pools[n % len(pools)]
        weights = [rng.random() ** 2 + 0.05 for _ in sources]
        ids = list(sources[0])
        choice = rng.choices(range(len(sources)), weights=weights, k=len(ids))
        items = [sources[c][i] for c, i in zip(choice, ids) if i in sources[c]]
        sid = store.submission_id(task, split, "bench", f"{seed}:{n}", fingerprint)
        created = start + timedelta(minutes=n)
        card = (
            rng.choice(SIZE_CLASSES[1:]),
            rng.choice(WEIGHTS),
            rng.choice(METHOD_FAMILIES[1:]),
        )
        metadata = json.dumps({"source": "generated (python -m procbench.bench.site generate)"})
        rows["submissions"].append(
            (
                sid,
                task,
                split,
                fingerprint,
                rng.choice(TEAMS),
                f"model-{n:05d}",
                f"{seed}:{n}",
                metadata,
                False,
                len(items),
                created,
                *card,
            )
        )
        rows["status_history"] += [
            (sid, status, "", created) for status in ("received", "validated", "scored")
        ]
        rows["item_scores"] += [
            (sid, i.item_id, m, float(v)) for i in items for m, v in i.values.items()
        ]
        rows["aggregates"] += [
            (sid, "", "", m, float(v), len(items)) for m, v in runner.aggregate(items).items()
        ]
        for sl in runner.slices:
            if sl.kind != "label" or sl.key not in labels:
                continue
            groups: dict[str, list[ItemScore]] = {}
            for item in items:
                if item.item_id in labels[sl.key]:
                    groups.setdefault(labels[sl.key][item.item_id], []).append(item)
            for value, group in sorted(groups.items()):
                rows["aggregates"] += [
                    (sid, sl.name, value, m, float(v), len(group))
                    for m, v in runner.aggregate(group).items()
                ]
        if _full(rows, n + 1, batch) or n + 1 == n_submissions:
            write_batch(db_path, rows, schemas)
        if (n + 1) % 1000 == 0:
            log(f"  {n + 1} generated")
    log(
        f"{n_submissions} generated submissions over {len(pools)} real boards of {source}: {', '.join(p[0] for p in pools)}"
    )
    return n_submissions
