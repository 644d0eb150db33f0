-- procbench store, migration 008: a split the newest spec hides is hidden on its board at once (issue #29).
-- Before 006 the board showed the latest registered fingerprint, so registering a spec that hides a
-- split hid it everywhere.  Since 006 a board keeps its fingerprint until a re-scoring or `admin board
-- point` moves it; hiding must not wait for that.  current_tasks (006) keeps its columns and rows, with
-- `hidden` true when the board's own fingerprint or the latest registered one hides the split; the
-- board and public_item_scores views, and every query, read it from there.
--
-- 001-007 are released and never edited.

CREATE OR REPLACE VIEW current_tasks AS
SELECT b.* REPLACE (b.hidden OR coalesce(l.hidden, false) AS hidden) FROM (
    SELECT t.* FROM tasks t
    JOIN (
        SELECT task, split, arg_max(to_fingerprint, seq) AS fingerprint FROM board_moves GROUP BY task, split
    ) m ON m.task = t.task AND m.split = t.split AND m.fingerprint = t.fingerprint
    UNION ALL
    SELECT * EXCLUDE (rn) FROM (
        SELECT *, row_number() OVER (PARTITION BY task, split ORDER BY registered_at DESC) AS rn FROM tasks
    ) r
    WHERE rn = 1 AND NOT EXISTS (SELECT 1 FROM board_moves x WHERE x.task = r.task AND x.split = r.split)
) b
LEFT JOIN (SELECT task, split, arg_max(hidden, registered_at) AS hidden FROM tasks GROUP BY task, split) l ON l.task = b.task AND l.split = b.split;
