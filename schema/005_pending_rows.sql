-- procbench store, migration 005: rows being computed.
-- A baseline that needs a model (minutes on a CPU) is listed here from the moment the board is served
-- until its row is stored (or it fails), so its board can say "computing" instead of looking complete.
-- The row itself arrives through intake like any submission; this table only says what is on its way.

CREATE TABLE IF NOT EXISTS pending_rows (
    task       VARCHAR NOT NULL,
    split      VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    what       VARCHAR NOT NULL,          -- one line for the board: what is being computed
    started_at TIMESTAMP NOT NULL,
    PRIMARY KEY (task, split, model)
);
