-- procbench store, migration 006: a board changes only by an explicit, successful act (issue #29).
-- Until now the board of a task and split showed the fingerprint registered last, so registering one
-- (a re-scoring whose every job failed, a submission scored on other data) moved the board.  From here
-- registering a fingerprint (a `tasks` row) and showing it are apart:
--
-- * board_moves: every move of a board, in order (seq per task and split), never updated or deleted.
--   The latest move of a task and split names the fingerprint its board shows.  A board moves when it
--   is first registered ('first'), when a re-scoring has re-scored every stored submission that can be
--   re-scored ('rescore'), or by `procbench admin board point` ('point'), which can undo any move;
--   'migration' rows keep what each board showed before this migration.
-- * tasks.data_root: the data root a fingerprint was registered from ('' before this migration), so a
--   refusal can name it.
--
-- 001-005 are released and never edited.  current_tasks keeps its columns (those of tasks).

CREATE TABLE IF NOT EXISTS board_moves (
    task              VARCHAR NOT NULL,
    split             VARCHAR NOT NULL,
    seq               INTEGER NOT NULL,            -- 1, 2, ... per task and split: the latest move wins
    from_fingerprint  VARCHAR NOT NULL DEFAULT '', -- '' for a board's first move
    to_fingerprint    VARCHAR NOT NULL,
    how               VARCHAR NOT NULL,            -- first | rescore | point | migration
    reason            VARCHAR NOT NULL DEFAULT '',
    actor             VARCHAR NOT NULL DEFAULT '',
    moved_at          TIMESTAMP NOT NULL,
    PRIMARY KEY (task, split, seq)
);

-- What every board showed until now: the latest registration (boards with a move already keep their log).
INSERT INTO board_moves (task, split, seq, from_fingerprint, to_fingerprint, how, reason, actor, moved_at)
SELECT c.task, c.split, 1, '', c.fingerprint, 'migration', 'the board as it was before migration 006 (the latest registered fingerprint)', '', current_timestamp
FROM current_tasks c WHERE NOT EXISTS (SELECT 1 FROM board_moves b WHERE b.task = c.task AND b.split = c.split);

ALTER TABLE tasks ADD COLUMN IF NOT EXISTS data_root VARCHAR DEFAULT '';

-- The fingerprint each board shows: its latest move.  A task and split registered with no move at all
-- (rows written by other tools) falls back to the latest registration, as before.
CREATE OR REPLACE VIEW current_tasks AS
SELECT t.* FROM tasks t
JOIN (
    SELECT task, split, arg_max(to_fingerprint, seq) AS fingerprint FROM board_moves GROUP BY task, split
) m ON m.task = t.task AND m.split = t.split AND m.fingerprint = t.fingerprint
UNION ALL
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY task, split ORDER BY registered_at DESC) AS rn FROM tasks
) r
WHERE rn = 1 AND NOT EXISTS (SELECT 1 FROM board_moves b WHERE b.task = r.task AND b.split = r.split);
