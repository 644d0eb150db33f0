-- procbench store, migration 001: tasks, teams, submissions with status history, scores.
-- Every figure is stored under the fingerprint of the spec + gold it was computed with; the
-- board never pools results across fingerprints.

CREATE TABLE IF NOT EXISTS tasks (
    task            VARCHAR NOT NULL,
    fingerprint     VARCHAR NOT NULL,
    split           VARCHAR NOT NULL,
    title           VARCHAR NOT NULL,
    benchmark       VARCHAR NOT NULL,
    version         VARCHAR NOT NULL,
    primary_metric  VARCHAR NOT NULL,
    hidden          BOOLEAN NOT NULL DEFAULT FALSE,
    spec_json       VARCHAR NOT NULL,
    registered_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (task, split, fingerprint)
);

CREATE TABLE IF NOT EXISTS teams (
    team        VARCHAR PRIMARY KEY,
    token_hash  VARCHAR,
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS submissions (
    submission_id   VARCHAR PRIMARY KEY,
    task            VARCHAR NOT NULL,
    split           VARCHAR NOT NULL,
    fingerprint     VARCHAR NOT NULL,
    team            VARCHAR NOT NULL,
    model           VARCHAR NOT NULL,
    content_sha256  VARCHAR NOT NULL,
    metadata_json   VARCHAR NOT NULL DEFAULT '{}',
    is_reference    BOOLEAN NOT NULL DEFAULT FALSE,
    hidden          BOOLEAN NOT NULL DEFAULT FALSE,
    deleted         BOOLEAN NOT NULL DEFAULT FALSE,
    n_items         INTEGER NOT NULL,
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (task, split, team, content_sha256, fingerprint)
);

CREATE TABLE IF NOT EXISTS status_history (
    submission_id  VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,  -- received | validated | scored | failed | hidden | unhidden | deleted
    reason         VARCHAR NOT NULL DEFAULT '',
    changed_at     TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS item_scores (
    submission_id  VARCHAR NOT NULL,
    item_id        VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    value          DOUBLE NOT NULL
);

CREATE TABLE IF NOT EXISTS item_labels (
    task         VARCHAR NOT NULL,
    split        VARCHAR NOT NULL,
    fingerprint  VARCHAR NOT NULL,
    item_id      VARCHAR NOT NULL,
    dimension    VARCHAR NOT NULL,
    value        VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS aggregates (
    submission_id  VARCHAR NOT NULL,
    slice          VARCHAR NOT NULL,  -- '' for the whole split
    slice_value    VARCHAR NOT NULL,  -- '' for the whole split
    metric         VARCHAR NOT NULL,
    value          DOUBLE NOT NULL,
    n_items        INTEGER NOT NULL
);

-- What the site reads: visible submissions under the current fingerprint of each task and split.
CREATE OR REPLACE VIEW current_tasks AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY task, split ORDER BY registered_at DESC) AS rn FROM tasks
) WHERE rn = 1;

CREATE OR REPLACE VIEW board AS
SELECT s.submission_id, s.task, s.split, s.team, s.model, s.is_reference, s.metadata_json, s.created_at,
       s.n_items, a.slice, a.slice_value, a.metric, a.value, a.n_items AS slice_n_items
FROM submissions s
JOIN current_tasks t ON t.task = s.task AND t.split = s.split AND t.fingerprint = s.fingerprint
JOIN aggregates a ON a.submission_id = s.submission_id
WHERE NOT s.hidden AND NOT s.deleted;
