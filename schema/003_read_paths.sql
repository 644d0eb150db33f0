-- procbench store, migration 003: read paths that stay fast at 10 000 submissions.
-- Two tables derived from released ones (`aggregates` and `item_scores`, both append-only: rows
-- are written once, with their submission), kept up to date by the store's writers
-- (submissions/store.py: insert_submission, and sync_read_paths at the end of every write):
--
-- * aggregates_packed: the rows of `aggregates`, one row per submission and slice value, the
--   metrics packed into lists (in the order they were stored), with the task, split and
--   fingerprint of the submission; the `board` view reads it.  About 18 times fewer rows than
--   `aggregates`, kept clustered by (task, split, slice, slice_value) so that the board of one
--   task and slice reads little: new rows are appended unclustered and the writer re-clusters the
--   table once they are more than a few percent of it.
-- * row_spans: where each submission's rows lie in `item_scores` and in `aggregates` (the rowid
--   range they were appended in, and how many there are), so that reading one submission's rows
--   scans one row group instead of every one.  Rows past a table's last span (appended since the
--   last sync) are always scanned as well, and a reader that does not find as many rows as a span
--   counts (rows deleted or moved by some other tool) falls back to a full scan.
--
-- 001 and 002 are released and never edited; the board view keeps the columns of 002, in order.

CREATE TABLE IF NOT EXISTS aggregates_packed (
    submission_id  VARCHAR NOT NULL,
    task           VARCHAR NOT NULL,
    split          VARCHAR NOT NULL,
    fingerprint    VARCHAR NOT NULL,
    slice          VARCHAR NOT NULL,  -- '' for the whole split
    slice_value    VARCHAR NOT NULL,  -- '' for the whole split
    metric         VARCHAR[] NOT NULL,
    value          DOUBLE[] NOT NULL,
    n_items        INTEGER[] NOT NULL,
    clustered      BOOLEAN NOT NULL DEFAULT FALSE  -- in the clustered part (FALSE: appended since)
);

INSERT INTO aggregates_packed
SELECT a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value,
       list(a.metric ORDER BY a.rowid), list(a.value ORDER BY a.rowid), list(a.n_items ORDER BY a.rowid), TRUE
FROM aggregates a JOIN submissions s ON s.submission_id = a.submission_id
GROUP BY a.submission_id, s.task, s.split, s.fingerprint, a.slice, a.slice_value
ORDER BY s.task, s.split, a.slice, a.slice_value, min(a.rowid);

CREATE TABLE IF NOT EXISTS row_spans (
    table_name     VARCHAR NOT NULL,  -- item_scores | aggregates
    submission_id  VARCHAR NOT NULL,
    first_row      BIGINT NOT NULL,   -- rowid of its first row in that table
    last_row       BIGINT NOT NULL,   -- rowid of its last row
    n_rows         BIGINT NOT NULL,   -- its rows in that table (all within first_row .. last_row)
    PRIMARY KEY (table_name, submission_id)
);

INSERT INTO row_spans
SELECT 'item_scores', submission_id, min(rowid), max(rowid), count(*) FROM item_scores GROUP BY submission_id;
INSERT INTO row_spans
SELECT 'aggregates', submission_id, min(rowid), max(rowid), count(*) FROM aggregates GROUP BY submission_id;

-- The board of 002, reading the packed aggregates: same columns, same rows.
CREATE OR REPLACE VIEW board AS
SELECT s.submission_id, p.task, p.split, s.team, s.model, s.is_reference, s.metadata_json, s.created_at,
       s.n_items, p.slice, p.slice_value, p.metric, p.value, p.n_items AS slice_n_items,
       s.fingerprint, s.origin_id, s.size_class, s.weights, s.method_family, s.paper_url, s.code_url,
       s.description, t.hidden AS hidden_split
FROM (
    SELECT submission_id, task, split, fingerprint, slice, slice_value,
           unnest(metric) AS metric, unnest(value) AS value, unnest(n_items) AS n_items
    FROM aggregates_packed
) p
JOIN submissions s ON s.submission_id = p.submission_id
JOIN current_tasks t ON t.task = p.task AND t.split = p.split AND t.fingerprint = p.fingerprint
WHERE NOT s.hidden AND NOT s.deleted
  AND NOT (t.hidden AND NOT s.is_reference AND p.slice <> '' AND p.n_items < 5);
