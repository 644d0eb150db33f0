-- procbench store, migration 002: submissions you can trust.
-- Team tokens (hashes only), per-task quotas, an intake failure log keyed by receipt, the raw
-- prediction files (content-addressed, for re-scoring), model cards on submissions, and the
-- lineage of re-scored rows.  001 is released and never edited; views are redefined here.

-- A team's tokens: only sha256(token) is stored; the token is printed once by `procbench team create`.
CREATE TABLE IF NOT EXISTS team_tokens (
    token_hash  VARCHAR PRIMARY KEY,
    team        VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    expires_at  TIMESTAMP,            -- NULL: does not expire
    revoked_at  TIMESTAMP             -- NULL: not revoked
);

-- Per-task quotas (EvalAI-style).  split = '' is the default for every split of the task.
-- per_day counts scored submissions of one team to one task and split in the last 24 hours;
-- max_attempts caps everything that reached the scorer (scored + failed validation/scoring).
CREATE TABLE IF NOT EXISTS quotas (
    task          VARCHAR NOT NULL,
    split         VARCHAR NOT NULL DEFAULT '',
    per_day       INTEGER,            -- NULL: no daily limit
    max_attempts  INTEGER,            -- NULL: no cap
    updated_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (task, split)
);

-- Every intake that did not end in a stored submission, with the reason the user was shown.
-- Kept apart from `submissions` so that table holds scored submissions only.
CREATE TABLE IF NOT EXISTS failures (
    receipt_id      VARCHAR PRIMARY KEY,
    task            VARCHAR NOT NULL,
    split           VARCHAR NOT NULL,
    team            VARCHAR NOT NULL,
    model           VARCHAR NOT NULL,
    filename        VARCHAR NOT NULL DEFAULT '',
    content_sha256  VARCHAR NOT NULL DEFAULT '',   -- '' when the file was refused before hashing
    stage           VARCHAR NOT NULL,              -- request | auth | quota | data | file | validate | score | store
    reason          VARCHAR NOT NULL,
    created_at      TIMESTAMP NOT NULL
);

-- Raw prediction files, content-addressed: the bytes live gzip-compressed in `<db>.raw/`
-- under `location`; a row is written in the same transaction as the first submission using it.
CREATE TABLE IF NOT EXISTS raw_files (
    content_sha256  VARCHAR PRIMARY KEY,
    size_bytes      BIGINT NOT NULL,
    stored_bytes    BIGINT NOT NULL,
    codec           VARCHAR NOT NULL,
    location        VARCHAR NOT NULL,
    stored_at       TIMESTAMP NOT NULL
);

-- Model card and lineage.  origin_id is the submission a re-scored row was computed from (its
-- own id for an original submission); hide/unhide/delete act on the whole lineage.
ALTER TABLE submissions ADD COLUMN origin_id VARCHAR NOT NULL DEFAULT '';
UPDATE submissions SET origin_id = submission_id WHERE origin_id = '';
ALTER TABLE submissions ADD COLUMN receipt_id VARCHAR NOT NULL DEFAULT '';
ALTER TABLE submissions ADD COLUMN filename VARCHAR NOT NULL DEFAULT '';
ALTER TABLE submissions ADD COLUMN size_class VARCHAR NOT NULL DEFAULT 'unknown';
ALTER TABLE submissions ADD COLUMN weights VARCHAR NOT NULL DEFAULT 'unknown';
ALTER TABLE submissions ADD COLUMN method_family VARCHAR NOT NULL DEFAULT 'unknown';
ALTER TABLE submissions ADD COLUMN paper_url VARCHAR NOT NULL DEFAULT '';
ALTER TABLE submissions ADD COLUMN code_url VARCHAR NOT NULL DEFAULT '';
ALTER TABLE submissions ADD COLUMN description VARCHAR NOT NULL DEFAULT '';

ALTER TABLE status_history ADD COLUMN actor VARCHAR NOT NULL DEFAULT '';

-- The board: the columns of 001 first (unchanged), then the model card.  On a hidden split a
-- slice smaller than 5 items is left out: its aggregate would be (nearly) a per-item score.
CREATE OR REPLACE VIEW board AS
SELECT s.submission_id, s.task, s.split, s.team, s.model, s.is_reference, s.metadata_json, s.created_at,
       s.n_items, a.slice, a.slice_value, a.metric, a.value, a.n_items AS slice_n_items,
       s.fingerprint, s.origin_id, s.size_class, s.weights, s.method_family, s.paper_url, s.code_url,
       s.description, t.hidden AS hidden_split
FROM submissions s
JOIN current_tasks t ON t.task = s.task AND t.split = s.split AND t.fingerprint = s.fingerprint
JOIN aggregates a ON a.submission_id = s.submission_id
WHERE NOT s.hidden AND NOT s.deleted
  AND NOT (t.hidden AND NOT s.is_reference AND a.slice <> '' AND a.n_items < 5);

-- Per-item scores anyone may see: visible submissions, current fingerprints, public splits only.
CREATE OR REPLACE VIEW public_item_scores AS
SELECT i.submission_id, s.task, s.split, s.team, s.model, i.item_id, i.metric, i.value
FROM item_scores i
JOIN submissions s ON s.submission_id = i.submission_id
JOIN current_tasks t ON t.task = s.task AND t.split = s.split AND t.fingerprint = s.fingerprint
WHERE NOT s.hidden AND NOT s.deleted AND NOT t.hidden;
