-- procbench store, migration 010: what Home counts, kept as it changes (issue #31).
-- Home showed per board its rows, submitted rows and last update by grouping the whole `board` view (every
-- visible submission's every packed aggregate): ~0.4 s at 10 000 submissions, ~4 s at 100 000, paid on the
-- first view after any write.  board_summary keeps those counts per (task, split, fingerprint, is_reference,
-- reported_on), so Home reads a few dozen rows joined with current_tasks, however many submissions there are.
--
-- Per key, over the visible submissions (NOT hidden AND NOT deleted):
-- * n_visible, id_hash: how many, and bit_xor(hash(submission_id)) of them: what the writer's sync compares
--   with `submissions` to find keys something changed (submissions.store.sync_board_summary);
-- * on_board / last_on_board: of them, those with at least one packed aggregate (a row of the board view on a
--   public split), and the newest one's created_at;
-- * on_hidden / last_on_hidden: the same on a hidden split, where the board view leaves out a submitted row's
--   slices under 5 items (a reported row, a whole-split aggregate or a slice of 5 or more items keeps it).
-- Which fingerprint a board shows, whether its split is hidden and which data reported rows count on are read
-- from current_tasks at read time (they change without touching this table).
--
-- Kept by the store's writers: insert_submission adds its row in its own transaction; admin's hide, unhide,
-- delete and restore recompute their keys in theirs; the sync at the end of every writer block recomputes any
-- key whose visible submissions or packed aggregates changed some other way (bulk loads, other tools).
--
-- 001-009 are released and never edited.

CREATE TABLE IF NOT EXISTS board_summary (
    task            VARCHAR NOT NULL,
    split           VARCHAR NOT NULL,
    fingerprint     VARCHAR NOT NULL,
    is_reference    BOOLEAN NOT NULL,
    reported_on     VARCHAR NOT NULL,
    n_visible       BIGINT NOT NULL,
    id_hash         UBIGINT NOT NULL,
    on_board        BIGINT NOT NULL,
    on_hidden       BIGINT NOT NULL,
    last_on_board   TIMESTAMP,
    last_on_hidden  TIMESTAMP,
    PRIMARY KEY (task, split, fingerprint, is_reference, reported_on)
);

DELETE FROM board_summary;  -- a store rolled back to an older version by hand may still have the table
INSERT INTO board_summary
SELECT v.task, v.split, v.fingerprint, v.is_reference, v.reported_on,
       count(*), bit_xor(hash(v.submission_id)),
       count(*) FILTER (WHERE p.on_board),
       count(*) FILTER (WHERE p.on_board AND (v.is_reference OR p.on_hidden)),
       max(v.created_at) FILTER (WHERE p.on_board),
       max(v.created_at) FILTER (WHERE p.on_board AND (v.is_reference OR p.on_hidden))
FROM (
    SELECT submission_id, task, split, fingerprint, is_reference, coalesce(reported_on, '') AS reported_on, created_at
    FROM submissions WHERE NOT hidden AND NOT deleted
) v
LEFT JOIN (
    SELECT submission_id, bool_or(len(n_items) > 0) AS on_board,
           bool_or(len(n_items) > 0 AND (slice = '' OR list_max(n_items) >= 5)) AS on_hidden
    FROM aggregates_packed GROUP BY submission_id
) p USING (submission_id)
GROUP BY v.task, v.split, v.fingerprint, v.is_reference, v.reported_on;
