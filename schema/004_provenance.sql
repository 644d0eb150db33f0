-- procbench store, migration 004: what every row was scored on, and by which scorer.
-- A fingerprint already hashes spec + gold; these columns say, per task, split and fingerprint,
-- what that gold *is*, so a board can say so and never rank rows scored on different data together:
--
-- * data_kind: 'real' (every file the spec's lock lists for the split is present with the lock's
--   sha256), 'sample' (the bundled sample data), 'unverified' (another data root whose files do not
--   all match the lock), 'unknown' (registered before this migration);
-- * gold_items: the number of gold items of the split;
-- * data_digest: sha256 over the lock's "<path> <sha256>" lines of the split's files ('' unless real);
-- * scorer_digest: the runner's digest of the canonical spec and component versions.
--
-- A reported (paper) row declares the data it was reported on: ``reported_on`` is the data digest
-- of the real split (computed from the spec's lock, so known without the data).  The board shows
-- it only over that data.  001-003 are released and never edited.

ALTER TABLE tasks ADD COLUMN IF NOT EXISTS data_kind VARCHAR DEFAULT 'unknown';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS gold_items INTEGER;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS data_digest VARCHAR DEFAULT '';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS scorer_digest VARCHAR DEFAULT '';

ALTER TABLE submissions ADD COLUMN IF NOT EXISTS reported_on VARCHAR DEFAULT '';

-- current_tasks is SELECT * of tasks: redefine it so that it carries the new columns.
CREATE OR REPLACE VIEW current_tasks AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY task, split ORDER BY registered_at DESC) AS rn FROM tasks
) WHERE rn = 1;

-- The board of 003 (the same columns, in order; provenance is read from current_tasks), without the reported
-- rows that were not reported on that data: a paper's number on the real test split is no figure
-- for a board over the bundled sample.  Boards registered before this migration ('unknown') keep
-- their reported rows, as before.
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
  AND NOT (t.hidden AND NOT s.is_reference AND p.slice <> '' AND p.n_items < 5)
  AND (NOT s.is_reference OR coalesce(t.data_kind, 'unknown') = 'unknown' OR (coalesce(s.reported_on, '') <> '' AND s.reported_on = t.data_digest));
