-- procbench store, migration 007: coverage, the items a submission answered (issue #28).
-- A prediction file may leave items out; each measure counts them by its declared `missing = ...`
-- convention (docs/language.md).  n_answered is the number of the split's items that had a prediction
-- record, so a board can show answered / n_items on every row.  NULL: stored before this migration
-- (or a reported row, which has no file), shown as unknown.
--
-- 001-006 are released and never edited.

ALTER TABLE submissions ADD COLUMN IF NOT EXISTS n_answered INTEGER;
