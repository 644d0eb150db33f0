"""Read-only queries the site runs against the store (the site never writes; uploads go through intake).

Everything the board shows comes from the store's views ``current_tasks`` and ``board`` (visible
submissions under the current fingerprint of each task and split); a submission's own page also
reads ``submissions``, ``aggregates``, ``item_scores``, ``item_labels`` and ``status_history``.
All SQL is parameterised.  Each function is one read cycle of the store (``procbench.submissions.store.reader``:
attach, query, detach), so the page that calls it never holds the file while a writer waits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import duckdb
import polars as pl

from procbench.leaderboard import cache, metadata
from procbench.runners.runtime._types import ItemScore
from procbench.submissions import (
    queries as rules,
)  # who may see what: one rule for the CLI and the site
from procbench.submissions import pending as pending_rows
from procbench.submissions import provenance, store
from procbench.submissions.store import reader


def has_migration(db: Path, version: int) -> bool:
    """Whether this process has seen the store at the latest schema version and that version includes migration
    ``version``: what it adds need not be looked up (issue #31: a lookup in a fresh reader costs ~0.01 s)."""
    return store.is_current(db) and store.latest_version() >= version


def _frame(con, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())  # type: ignore[return-value]


def tasks(db: Path) -> pl.DataFrame:
    """Every task and split under its current fingerprint, with its spec as JSON."""
    with reader(db) as con:
        return _frame(
            con,
            "SELECT task, split, title, benchmark, primary_metric, hidden, fingerprint, spec_json, registered_at FROM current_tasks ORDER BY benchmark, "
            "task, split",
        )


def task_row(db: Path, task: str, split: str) -> dict[str, Any] | None:
    with reader(db) as con:
        frame = _frame(
            con,
            "SELECT task, split, title, benchmark, primary_metric, hidden, fingerprint, spec_json, registered_at FROM current_tasks WHERE task = ? AND split "
            "= ?",
            [task, split],
        )
    return frame.row(0, named=True) if frame.height else None


def pending(
    db: Path, task: str | None = None, split: str | None = None
) -> list[pending_rows.Pending]:
    """Rows being computed (a model baseline started after the board was served), oldest first."""
    with reader(db) as con:
        return pending_rows.listed(con, task, split)


def home(db: Path) -> pl.DataFrame:
    """Per task and split: every visible row once, with its primary value (NULL where the row has none).

    Counts on Home come from here: a reported row that gives no primary value (a paper table of other
    metrics, or only slice values) still counts as a reported row.  The board view already leaves
    out reported rows that were not reported on the board's data (migration 004).
    """
    with reader(db) as con:
        return _frame(
            con,
            """
            SELECT b.task, b.split, b.submission_id, any_value(b.model) AS model, any_value(b.team) AS team,
                   any_value(b.is_reference) AS is_reference,
                   any_value(b.value) FILTER (WHERE b.slice = '' AND b.metric = t.primary_metric) AS value,
                   any_value(b.created_at) AS created_at, any_value(b.metadata_json) AS metadata_json
            FROM board b JOIN current_tasks t ON t.task = b.task AND t.split = b.split
            GROUP BY b.task, b.split, b.submission_id
            ORDER BY b.task, b.split, b.submission_id
            """,
        )


# Per current board, from board_summary (migration 010): the rows the board view lists for it (its split hidden or
# not), of them those submitted (not reported), and the newest one's created_at.  Reads current_tasks and the
# summary (a few rows per board), never a submission's rows: the same figures as grouping home() per board.
HOME_COUNTS = """
    SELECT t.task, t.split,
           coalesce(sum(CASE WHEN t.hidden THEN b.on_hidden ELSE b.on_board END), 0)::BIGINT AS listed,
           coalesce(sum(CASE WHEN t.hidden THEN b.on_hidden ELSE b.on_board END) FILTER (WHERE NOT b.is_reference), 0)::BIGINT AS submitted,
           max(CASE WHEN t.hidden THEN b.last_on_hidden ELSE b.last_on_board END) AS last_update
    FROM current_tasks t
    LEFT JOIN board_summary b
      ON b.task = t.task AND b.split = t.split AND b.fingerprint = t.fingerprint
     AND (NOT b.is_reference OR coalesce(t.data_kind, 'unknown') = 'unknown' OR (b.reported_on <> '' AND b.reported_on = t.data_digest))
    GROUP BY t.task, t.split
    ORDER BY t.task, t.split
"""


def home_counts(db: Path) -> pl.DataFrame:
    """Per current board: ``listed`` (its visible rows, a reported row without the primary metric included),
    ``submitted`` (of them, not reported) and ``last_update`` (the newest one's created_at; None without rows).

    What Home's boards table counts, read from the maintained ``board_summary`` (migration 010): the cost does not
    grow with the number of submissions, so Home's first view after a write stays cheap.
    """
    with reader(db) as con:
        try:
            return _frame(con, HOME_COUNTS)
        except (
            duckdb.CatalogException
        ):  # a store older than migration 010 that could not be upgraded (read-only)
            boards = _frame(con, "SELECT task, split FROM current_tasks ORDER BY task, split")
    counts = (
        home(db)
        .group_by("task", "split")
        .agg(
            pl.len().cast(pl.Int64).alias("listed"),
            (~pl.col("is_reference")).sum().cast(pl.Int64).alias("submitted"),
            pl.col("created_at").max().alias("last_update"),
        )
    )
    return (
        boards.join(counts, on=["task", "split"], how="left")
        .with_columns(pl.col("listed", "submitted").fill_null(0))
        .sort("task", "split")
    )


BOARD_VERSIONS = """
    SELECT t.task, t.split, t.fingerprint, t.hidden, t.registered_at, t.data_kind, t.data_digest,
           list((b.is_reference, b.reported_on, b.n_visible, b.id_hash, b.on_board, b.on_hidden)
                ORDER BY b.is_reference, b.reported_on) FILTER (WHERE b.task IS NOT NULL)
    FROM current_tasks t LEFT JOIN board_summary b
      ON b.task = t.task AND b.split = t.split AND b.fingerprint = t.fingerprint
    GROUP BY ALL
"""


def board_versions(db: Path) -> dict[tuple[str, str], tuple[Any, ...]] | None:
    """(task, split) -> what its current board's rows depend on in the store: the board's fingerprint, hidden flag and
    data provenance (current_tasks), and from ``board_summary`` (migration 010), per (is_reference, reported_on), the
    visible submissions' count and id hash and how many of them have board rows.

    Submissions and their aggregates are written once (only hidden / deleted change, and that changes the id hash),
    so an unchanged version is an unchanged set of board rows: what lets Home rebuild only the boards a write touched.
    None for a store older than migration 010 that could not be upgraded.
    """
    with reader(db) as con:
        try:
            rows = con.execute(BOARD_VERSIONS).fetchall()
        except (
            duckdb.CatalogException
        ):  # older than migration 010, read-only: None, no board has a version
            return None
    return {(r[0], r[1]): (*r[2:7], tuple(tuple(v) for v in r[7] or ())) for r in rows}


# -- provenance (migration 004) --------------------------------------------------------------------

DATA_LABELS = {
    provenance.REAL: "the real {split} split",
    provenance.SAMPLE: "the bundled sample data",
    provenance.UNVERIFIED: "unverified data (files that differ from the spec's data lock)",
    provenance.UNLOCKED: "the task's own data (the spec has no data lock for this split)",
    provenance.UNKNOWN: "data of unrecorded provenance (registered before provenance was kept)",
}


@dataclass(frozen=True)
class BoardProvenance:
    """What every row of one board was scored on, and by which scorer (the board's current fingerprint)."""

    task: str
    split: str
    fingerprint: str
    data_kind: str  # real | sample | unverified | unknown (procbench.submissions.provenance)
    gold_items: int | None
    data_digest: str  # the data lock's digest of the split when real
    scorer_digest: str

    @property
    def is_sample(self) -> bool:
        return self.data_kind == provenance.SAMPLE

    @property
    def label(self) -> str:
        """One line for a board's title, e.g. 'scored on the bundled sample data (8 items)'."""
        items = f" ({self.gold_items} items)" if self.gold_items is not None else ""
        return (
            "scored on "
            + DATA_LABELS.get(self.data_kind, DATA_LABELS[provenance.UNKNOWN]).format(
                split=self.split
            )
            + items
        )

    @property
    def caveat(self) -> str:
        """Why these figures are not the published benchmark's ('' for the real split)."""
        if self.data_kind == provenance.SAMPLE:
            return (
                "Sample data: a handful of items bundled for demonstration; these figures are not comparable with published results, "
                "and papers' rows are not shown."
            )
        if self.data_kind == provenance.UNVERIFIED:
            return "The gold files differ from the spec's data lock: figures are not comparable with the published split, and papers' rows are not shown."
        return ""


def board_provenance(db: Path, task: str, split: str) -> BoardProvenance | None:
    """The data kind, gold item count, lock digest and scorer digest of a board (None without the board)."""
    with reader(db) as con:
        # a store at a latest version that includes provenance (migration 004): no need to look it up (issue #31)
        columns = (
            {"data_kind"}
            if has_migration(db, 4)
            else {
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = 'tasks'"
                ).fetchall()
            }
        )
        if (
            "data_kind" not in columns
        ):  # a store older than migration 004 that could not be upgraded
            row = con.execute(
                "SELECT fingerprint, 'unknown', NULL, '', '' FROM current_tasks WHERE task = ? AND split = ?",
                [task, split],
            ).fetchone()
        else:
            row = con.execute(
                "SELECT fingerprint, data_kind, gold_items, data_digest, scorer_digest FROM current_tasks WHERE task = ? AND split = ?",
                [task, split],
            ).fetchone()
    if row is None:
        return None
    return BoardProvenance(task, split, row[0], row[1], row[2], row[3], row[4])


def all_provenance(db: Path) -> dict[tuple[str, str], BoardProvenance]:
    """(task, split) -> its board's provenance, for every current board (Home's titles and overview)."""
    with reader(db) as con:
        rows = con.execute(
            "SELECT task, split, fingerprint, data_kind, gold_items, data_digest, scorer_digest FROM current_tasks"
        ).fetchall()
    return {(r[0], r[1]): BoardProvenance(*r) for r in rows}


def source_of(metadata_json: str | None, is_reference: bool) -> str:
    """Where a reported row's numbers come from (paper, table, page or URL), as its spec states; '' for submissions."""
    if not is_reference:
        return ""
    source = metadata.parse(metadata_json).get("source")
    return str(source) if source else ""


CARD_COLUMNS = (
    "weights",
    "method_family",
    "size_class",
)  # model-card columns of newer stores (migration 002)


def board_columns(db: Path) -> set[str]:
    """The columns of the ``board`` view of this store (older stores lack the model card)."""
    with reader(db) as con:
        return _board_columns(con)


def _board_columns(con) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'board'"
        ).fetchall()
    }


def board(
    db: Path, task: str, split: str, slice_name: str = "", slice_value: str = ""
) -> pl.DataFrame:
    """One row per visible submission, one column per metric, for the whole split or one slice value.

    Model-card columns are included when the store has them, else they read as empty strings.  The
    metric columns come in the order the task's runner stored them (a scored submission's row; the
    same for every submission under one fingerprint), then any only reference rows have.
    """
    with reader(db) as con:
        # a store at the latest version has the model card (migration 002); only an older one that
        # could not be upgraded (read-only) needs its columns looked up
        present = set(CARD_COLUMNS) if store.is_current(db) else _board_columns(con)
        card = ", ".join(c if c in present else f"'' AS {c}" for c in CARD_COLUMNS)

        # issue #31: a whole-split board of a current store is read packed (migration 011: one row per submission
        # through the join and out of the store, not one per metric) and unpacked here; a slice keeps the board
        # view's per-metric rule
        def read(view: str) -> pl.DataFrame:
            return _frame(
                con,
                f"""
                SELECT submission_id, model, team, is_reference, metadata_json, {card}, created_at,
                       slice_n_items AS n_items, metric, value
                FROM {view} WHERE task = ? AND split = ? AND slice = ? AND slice_value = ?
                """,
                [task, split, slice_name, slice_value],
            )

        packed = not slice_name and _reads_packed(con, db)
        long = read("board_packed" if packed else "board")
        if long.is_empty():
            return long.explode(["n_items", "metric", "value"]) if packed else long
        # issue #31: where every row packs the same metrics, that list is the stored order (no query for it)
        shared = _shared_metrics(long) if packed else None
        if shared is None:
            scored = long.filter(~pl.col("is_reference"))
            stored = _stored_metrics(
                con,
                (scored if scored.height else long)["submission_id"][0],
                slice_name,
                slice_value,
            )
    # the source of a reported row's numbers, as a field (the UI links it; '' for submissions): once per distinct
    # metadata of the reported rows read
    reported = long.filter(pl.col("is_reference"))["metadata_json"].drop_nulls().unique()
    sources = {m: source_of(m, True) for m in reported.to_list()}
    long = long.with_columns(
        pl.when(pl.col("is_reference"))
        .then(
            pl.col("metadata_json")
            .replace_strict(sources, default="", return_dtype=pl.String)
            .fill_null(source_of(None, True))
        )
        .otherwise(pl.lit(""))
        .alias("source")
    )
    if shared is not None:
        return _unpacked(long, shared)
    if packed:
        long = long.explode(["n_items", "metric", "value"])
    index = [
        *BOARD_INDEX,
        *CARD_COLUMNS,
        "created_at",
        "n_items",
    ]
    wide = long.pivot(on="metric", index=index, values="value")
    metrics = wide.columns[len(index) :]
    rank = {m: i for i, m in enumerate(stored)}
    return wide.select(
        index + sorted(metrics, key=lambda m: (rank.get(m, len(rank)), metrics.index(m)))
    )


BOARD_INDEX = ("submission_id", "model", "team", "is_reference", "metadata_json", "source")


def _shared_metrics(packed: pl.DataFrame) -> list[str] | None:
    """The metric list every row of a packed read carries, where they all carry the same one (distinct names, each row's
    values and item counts as long, one item count per row); None otherwise (papers' rows reporting other metrics):
    such a read is unpacked by exploding and pivoting it."""
    if packed["metric"].n_unique() != 1:
        return None
    metrics = packed["metric"][0].to_list()
    if not metrics or len(set(metrics)) != len(metrics):
        return None
    shape = packed.select(
        # a missing list (NULL) is not the shape either
        (pl.col("value").list.len() == len(metrics)).fill_null(False).all().alias("values"),
        (pl.col("n_items").list.len() == len(metrics)).fill_null(False).all().alias("counts"),
        (pl.col("n_items").list.n_unique() == 1).fill_null(False).all().alias("one_count"),
    ).row(0)
    return metrics if all(shape) else None


def _unpacked(packed: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    """A packed read whose rows all carry ``metrics`` (:func:`_shared_metrics`) as the pivot of its exploded rows: one row
    per submission in the order read, one column per metric in the packed order (issue #31: the explode and pivot of
    an 11 000-row board cost ~0.06 s of the first view after a write)."""
    return packed.select(
        *BOARD_INDEX,
        *CARD_COLUMNS,
        "created_at",
        pl.col("n_items").list.first(),
        *[pl.col("value").list.get(i).alias(m) for i, m in enumerate(metrics)],
    )


def _reads_packed(con, db: Path) -> bool:
    """Whether the store has ``board_packed`` (migration 011): a store at a latest version that includes it has (no
    lookup: issue #31); an older one that could not be upgraded (read-only) is asked."""
    return has_migration(db, 11) or _has_view(con, "board_packed")


def _has_view(con, name: str) -> bool:
    return bool(
        con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name]).fetchall()[
            0
        ][0]
    )


def _stored_metrics(con, submission_id: str, slice_name: str, slice_value: str) -> list[str]:
    """The metrics of one submission's row of a slice value, in the order they were stored."""
    try:
        rows = con.execute(
            "SELECT metric FROM aggregates_packed WHERE submission_id = ? AND slice = ? AND slice_value = ?",
            [submission_id, slice_name, slice_value],
        ).fetchall()
    except duckdb.CatalogException:  # a store older than migration 003
        rows = con.execute(
            "SELECT list(metric ORDER BY rowid) FROM aggregates WHERE submission_id = ? AND slice = ? AND slice_value = ?",
            [submission_id, slice_name, slice_value],
        ).fetchall()
    return list(rows[0][0] or []) if rows else []


def slice_values(db: Path, task: str, split: str, slice_name: str) -> list[str]:
    with reader(db) as con:
        rows = con.execute(
            "SELECT DISTINCT slice_value FROM board WHERE task = ? AND split = ? AND slice = ? ORDER BY slice_value",
            [task, split, slice_name],
        ).fetchall()
    return [r[0] for r in rows]


def slice_table(
    db: Path, task: str, split: str, slice_name: str, submission_ids: Sequence[str] | None = None
) -> pl.DataFrame:
    """Visible submissions' values on every value of one slice (long: one row per metric); optionally only some ids."""
    only = " AND submission_id IN (SELECT unnest(?))" if submission_ids is not None else ""
    params: list[Any] = [task, split, slice_name] + (
        [list(submission_ids)] if submission_ids is not None else []
    )
    with reader(db) as con:
        return _frame(
            con,
            f"""
            SELECT submission_id, model, team, is_reference, slice_value, slice_n_items AS n_items, metric, value
            FROM board WHERE task = ? AND split = ? AND slice = ?{only}
            """,
            params,
        )


def figures(
    db: Path, task: str, split: str, submission_ids: Sequence[str], metric: str
) -> pl.DataFrame:
    """One metric of some visible submissions on the whole split and every slice value (procbench.submissions.queries.board_figures)."""
    return rules.board_figures(db, task, split, list(submission_ids), metric)


def submission(db: Path, submission_id: str) -> dict[str, Any] | None:
    """A submission that is neither hidden nor deleted, with whether it is under the current fingerprint."""
    with reader(db) as con:
        frame = _frame(
            con,
            """
            SELECT s.submission_id, s.task, s.split, s.fingerprint, s.team, s.model, s.metadata_json, s.is_reference,
                   s.n_items, s.created_at, (t.fingerprint IS NOT NULL) AS current, coalesce(t.hidden, k.hidden) AS hidden_split,
                   k.spec_json
            FROM submissions s
            JOIN tasks k ON k.task = s.task AND k.split = s.split AND k.fingerprint = s.fingerprint
            LEFT JOIN current_tasks t ON t.task = s.task AND t.split = s.split AND t.fingerprint = s.fingerprint
            WHERE s.submission_id = ? AND NOT s.hidden AND NOT s.deleted
            """,
            [submission_id],
        )
    return frame.row(0, named=True) if frame.height else None


def aggregates(db: Path, submission_id: str) -> pl.DataFrame:
    """A submission's aggregates as the public may see them (procbench.submissions.queries.public_aggregates: no small
    slices of hidden splits), the same rule as the board view's."""
    with reader(db) as con:
        rows = store.submission_rows(con, "aggregates", [submission_id])[
            submission_id
        ]  # reads where its rows lie, not the whole table
        hidden_split, is_reference = rules.hidden_flags(con, [submission_id]).get(
            submission_id, (False, False)
        )
    frame = cast(pl.DataFrame, pl.from_arrow(rows)).sort(
        ["slice", "slice_value", "metric"]
    )  # a table gives a frame
    return rules.public_aggregates(frame, hidden_split=hidden_split, is_reference=is_reference)


def status_history(db: Path, submission_id: str) -> pl.DataFrame:
    with reader(db) as con:
        return _frame(
            con,
            "SELECT status, reason, changed_at FROM status_history WHERE submission_id = ? ORDER BY changed_at, rowid",
            [submission_id],
        )


def item_scores(
    db: Path, submission_ids: Sequence[str], *, for_aggregates: bool = False
) -> dict[str, list[ItemScore]]:
    """Per-item statistics of each submission (reference rows have none), items in id order.

    PermissionError when a submission's split is hidden (procbench.submissions.queries.check_items_readable), unless
    ``for_aggregates``: the caller (procbench.leaderboard.analysis: bootstrap intervals, permutation tests) publishes only
    figures over at least ``MIN_HIDDEN_SLICE_ITEMS`` items, never the items themselves. One reader for the site and
    ``procbench compare`` (procbench.submissions.queries.item_score_lists).
    """
    return rules.item_score_lists(db, list(submission_ids), for_aggregates=for_aggregates)


def item_labels(
    db: Path, task: str, split: str, fingerprint: str, dimension: str
) -> dict[str, str]:
    """Item id -> label value of one slice dimension, under one fingerprint (procbench.submissions.queries.item_labels)."""
    return rules.item_labels(db, task, split, fingerprint, dimension)


def submissions_of(db: Path, task: str, split: str) -> pl.DataFrame:
    """The visible submissions of a task and split (for pickers), best primary value first."""
    with reader(db) as con:
        return _frame(
            con,
            """
            SELECT b.submission_id, b.model, b.team, b.is_reference, b.n_items, b.value AS primary_value
            FROM board b JOIN current_tasks t ON t.task = b.task AND t.split = b.split
            WHERE b.task = ? AND b.split = ? AND b.slice = '' AND b.metric = t.primary_metric
            """,
            [task, split],
        )


@cache.cached
def table_names(db: Path) -> frozenset[str]:
    """The store's tables, kept per store version: pages ask on every view (``evidence.raw_storage``), and an
    uncached ask attached the whole file for it (a few ms each on a 10 000-submission store)."""
    with reader(db) as con:
        return frozenset(
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        )


def spec_of(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["spec_json"])


# -- figures above 100 % ---------------------------------------------------------------------------

# Why an official scorer's fraction can exceed 1 (shown as the scorer reports it, never clipped).
ABOVE_ONE_NOTES = {
    "paged": (
        "Above 100 % as the official PAGED scorer reports it: a node's BLEU-1 soft score is added each time a not-yet-matched node is compared "
        "again while the node is counted once, so soft precision, recall and F1 are not bounded by 1. The corrected variant is the column "
        "beside it marked (bounded), e.g. Actor F1 (bounded), metric actor_bounded: each node counted once, at its best BLEU-1, within 100 %."
    ),
    "propara": (
        "Above 100 % as the official ProPara scorer reports it: its similarity of term groups is not clamped, so alternatives repeated across "
        "groups count more than once and precision or recall can exceed 1."
    ),
}
GENERIC_ABOVE_ONE = "Above 100 % as the official scorer reports it: this fraction is not bounded by 1 in the official scorer."


def above_one(task: str, percent: bool, value: float | None) -> str:
    """The one-line explanation for a fraction above 1 (a figure the UI shows above 100 %); '' otherwise."""
    if not percent or value is None or not value > 1.0 + 1e-12:  # NaN compares False: no flag
        return ""
    family = next((key for key in ABOVE_ONE_NOTES if task == key or task.startswith(key + "-")), "")
    return ABOVE_ONE_NOTES.get(family, GENERIC_ABOVE_ONE)


def bounded_variant(metric: str) -> str:
    """The name a spec gives the corrected variant of a metric (``actor`` -> ``actor_bounded``, ``actor_p`` -> ``actor_bounded_p``)."""
    for suffix in ("_p", "_r", "_f1"):
        if metric.endswith(suffix):
            return f"{metric.removesuffix(suffix)}_bounded{suffix}"
    return f"{metric}_bounded"


def flags_above_one(frame: pl.DataFrame, task: str, percent: dict[str, bool]) -> pl.DataFrame:
    """Every value of a wide board frame (``board``) above 1 in a percent metric: submission_id, metric, value, note."""
    rows = []
    for metric, is_percent in percent.items():
        if metric not in frame.columns:
            continue
        for sid, value in zip(frame["submission_id"], frame[metric]):
            note = above_one(task, is_percent, value)
            if (
                note and bounded_variant(metric) in percent
            ):  # the spec declares the corrected variant: name its column
                note += f" Here: {bounded_variant(metric)}."
            if note:
                rows.append((sid, metric, float(value), note))
    return pl.DataFrame(
        rows,
        schema={
            "submission_id": pl.String,
            "metric": pl.String,
            "value": pl.Float64,
            "note": pl.String,
        },
        orient="row",
    )
