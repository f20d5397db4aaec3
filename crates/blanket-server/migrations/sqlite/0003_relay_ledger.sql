-- Relay releases on the release ledger (docs/service.md, "Budget"): a relay run's release is
-- charged to the same ledger as the analyzer's releases (analyzer_releases, one ledger per
-- task id: for a relay run, the id of the relay task that holds the budget, itself or the
-- task it `continues`). This table settles each run once (primary key run_id), in the
-- transaction that writes the ledger row: a run replayed after a restart is never charged
-- twice. A refused release is kept here too (release_id NULL, the refusal as an RFC 9457
-- problem), so the refusal is stable across restarts.
CREATE TABLE relay_releases (
    run_id BLOB PRIMARY KEY NOT NULL,
    ledger_task BLOB NOT NULL,
    release_id INTEGER,
    refusal TEXT
);
