"""Stores of 100, 1 000 and 10 000 submissions across all tasks, in the store's own schema.

A template store gets one real submission per task through the intake path (validate, score,
store).  A benchmark store is then migrated by the store itself and filled with bulk
``INSERT ... SELECT`` statements that clone the template's rows: each synthetic submission is a
template submission of its task with its own id, team, model and time, and aggregates and per-item
values jittered by a seeded multiplicative noise.  Tasks, fingerprints and item labels are the
template's, so every site query sees a realistic store.  Rows are appended oldest submission first,
each submission's rows together, as intake writes them; a last writer cycle lets the store bring its
read paths (packed aggregates, item spans; migration 003) up to date, as after any other bulk load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from procbench.submissions import store

TEAMS = 60
CHUNK = 250  # submissions per bulk insert: each is sorted so that a submission's rows stay together


def one_row(row: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The row of a query that always returns one (an aggregate such as ``count(*)``)."""
    if row is None:
        raise ValueError("the query returned no row")
    return row


def build(template: Path, target: Path, n_submissions: int, *, seed: int = 0) -> Path:
    """A store at ``target`` with ``n_submissions`` submissions cloned from the template's."""
    for suffix in ("", ".wal", ".lock"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    with store.writer(target):
        pass  # the store's own migrations create the schema
    con = duckdb.connect(str(target))
    try:
        con.execute("ATTACH ? AS template (READ_ONLY)", [str(template)])
        con.execute("SELECT setseed(?)", [seed / 1000])
        con.execute("BEGIN TRANSACTION")
        con.execute("INSERT INTO tasks SELECT * FROM template.tasks")
        con.execute("INSERT INTO item_labels SELECT * FROM template.item_labels")
        con.execute(
            """
            CREATE TEMP TABLE origin AS
            SELECT row_number() OVER (ORDER BY task, split) - 1 AS k, * FROM template.submissions
            WHERE NOT is_reference
            """
        )
        (templates,) = one_row(con.execute("SELECT count(*) FROM origin").fetchone())
        if not templates:
            raise ValueError(f"template store {template} holds no submissions")
        con.execute(
            """
            CREATE TEMP TABLE plan AS
            SELECT i, printf('bench%07d', i) AS sid, i % ? AS k, 0.7 + 0.6 * random() AS factor
            FROM range(?) r(i)
            """,
            [templates, n_submissions],
        )
        columns = [r[0] for r in con.execute("DESCRIBE submissions").fetchall()]
        replaced = {
            "submission_id": "p.sid",
            "origin_id": "p.sid",
            "team": f"printf('team-%02d', p.i % {TEAMS})",
            "model": "printf('model-%05d', p.i)",
            "content_sha256": "sha256(p.sid)",
            "receipt_id": "p.sid",
            "created_at": "o.created_at - to_seconds(p.i * 37)",
        }
        select = ", ".join(replaced.get(c, f"o.{c}") for c in columns)
        con.execute(
            f"INSERT INTO submissions ({', '.join(columns)}) SELECT {select} FROM plan p JOIN origin o USING (k)"
        )
        for high in range(n_submissions, 0, -CHUNK):  # oldest first (created_at falls with i)
            bounds = [max(0, high - CHUNK), high]
            con.execute(
                """
                INSERT INTO aggregates
                SELECT p.sid, a.slice, a.slice_value, a.metric, a.value * p.factor, a.n_items
                FROM plan p JOIN origin o USING (k) JOIN template.aggregates a ON a.submission_id = o.submission_id
                WHERE p.i >= ? AND p.i < ? ORDER BY p.i DESC, a.rowid
                """,
                bounds,
            )
            con.execute(
                """
                INSERT INTO item_scores
                SELECT p.sid, s.item_id, s.metric, s.value * p.factor
                FROM plan p JOIN origin o USING (k) JOIN template.item_scores s ON s.submission_id = o.submission_id
                WHERE p.i >= ? AND p.i < ? ORDER BY p.i DESC, s.rowid
                """,
                bounds,
            )
        status_columns = [r[0] for r in con.execute("DESCRIBE status_history").fetchall()]
        values = {
            "submission_id": "p.sid",
            "status": "st.status",
            "reason": "''",
            "changed_at": "o.created_at - to_seconds(p.i * 37)",
            "actor": "''",
        }
        con.execute(
            f"INSERT INTO status_history ({', '.join(status_columns)}) "
            f"SELECT {', '.join(values.get(c, 'NULL') for c in status_columns)} "
            "FROM plan p JOIN origin o USING (k) CROSS JOIN (VALUES ('received'), ('validated'), ('scored')) st(status)"
        )
        con.execute("INSERT INTO submissions SELECT * FROM template.submissions WHERE is_reference")
        con.execute(
            "INSERT INTO aggregates SELECT a.* FROM template.aggregates a JOIN template.submissions s USING (submission_id) WHERE s.is_reference"
        )
        con.execute("COMMIT")
        con.execute("DETACH template")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    with store.writer(target):
        pass  # the store packs the bulk-loaded aggregates and records the item spans
    return target


def counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: one_row(con.execute(f"SELECT count(*) FROM {t}").fetchone())[0]
            for t in ("submissions", "aggregates", "item_scores")
        }
    finally:
        con.close()
