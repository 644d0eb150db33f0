-- procbench store, migration 009: marks a reader needs to trust a row (issue #34).
-- * contamination, contamination_source: the model card's word on the model's known exposure to the
--   benchmark's data ('unknown' where not stated, 'none', 'suspected', 'confirmed'), and where that is
--   said (a link or a citation).
-- * run_by: who ran the model to produce the predictions: 'submitter', 'operator' (the board's own
--   baselines), 'paper' (a reported row) or 'unknown' (a submitted row stored before this migration).
-- * judge_prompt_digest: for a row graded by an LLM judge, sha256 of the prompts the judge was given
--   (the spec's judge templates, and the chain-of-thought sentence when asked for); '' otherwise.  The
--   judge's model id is the `judge` key intake writes in metadata_json (procbench.submissions.judging).
-- The board view keeps its columns; pages read these from `submissions`.
--
-- 001-008 are released and never edited.

ALTER TABLE submissions ADD COLUMN IF NOT EXISTS contamination VARCHAR DEFAULT 'unknown';
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS contamination_source VARCHAR DEFAULT '';
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS run_by VARCHAR DEFAULT 'unknown';
ALTER TABLE submissions ADD COLUMN IF NOT EXISTS judge_prompt_digest VARCHAR DEFAULT '';
UPDATE submissions SET run_by = 'paper' WHERE is_reference;
