-- procbench store, migration 011: the board's rows with their metrics still packed (issue #31).
-- The `board` view (004) unnests every packed aggregate before it joins the submissions, so one board's read
-- carried each submission's row once per metric (its metadata included) through the join and out of the store:
-- at 100 000 submissions one task's whole-split board was ~100 000 rows, about 0.3 s, paid by the first page after
-- any write.  `board_packed` is the same rows before the unnest (one per submission and slice value, the metrics as
-- lists, in the order they were stored); `board` is now defined from it, so the visibility rules are written once.
-- A submitted row's slice value under 5 items on a hidden split is left out per metric (its n_items), so that
-- rule stays on `board`; for the whole split (slice = '') it never applies, and a reader of a whole-split board may
-- read `board_packed`.
--
-- 001-010 are released and never edited.

CREATE OR REPLACE VIEW board_packed AS
SELECT s.submission_id, p.task, p.split, s.team, s.model, s.is_reference, s.metadata_json, s.created_at,
       s.n_items, p.slice, p.slice_value, p.metric, p.value, p.n_items AS slice_n_items,
       s.fingerprint, s.origin_id, s.size_class, s.weights, s.method_family, s.paper_url, s.code_url,
       s.description, t.hidden AS hidden_split
FROM aggregates_packed p
-- a submission's aggregates carry its own task and split: saying so lets a board's read join only that task's
-- submissions (the filter reaches both sides) instead of hashing every submission of the store
JOIN submissions s ON s.submission_id = p.submission_id AND s.task = p.task AND s.split = p.split
JOIN current_tasks t ON t.task = p.task AND t.split = p.split AND t.fingerprint = p.fingerprint
WHERE NOT s.hidden AND NOT s.deleted
  AND (NOT s.is_reference OR coalesce(t.data_kind, 'unknown') = 'unknown' OR (coalesce(s.reported_on, '') <> '' AND s.reported_on = t.data_digest));

CREATE OR REPLACE VIEW board AS
SELECT submission_id, task, split, team, model, is_reference, metadata_json, created_at, n_items, slice,
       slice_value, metric, value, slice_n_items, fingerprint, origin_id, size_class, weights, method_family,
       paper_url, code_url, description, hidden_split
FROM (
    SELECT * EXCLUDE (metric, value, slice_n_items),
           unnest(metric) AS metric, unnest(value) AS value, unnest(slice_n_items) AS slice_n_items
    FROM board_packed
)
WHERE NOT (hidden_split AND NOT is_reference AND slice <> '' AND slice_n_items < 5);
