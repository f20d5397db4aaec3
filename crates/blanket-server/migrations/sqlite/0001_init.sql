-- blanket service schema (SQLite). Shuffler tables start with shuffler_, analyzer tables with
-- analyzer_; a role only ever touches its own (one database per role, or one shared by
-- `--role all`).

-- Tasks the shuffler accepts reports for (public parameters only).
CREATE TABLE shuffler_tasks (
    task_id BLOB PRIMARY KEY NOT NULL,
    min_batch INTEGER NOT NULL,
    deadline_unix INTEGER NOT NULL
);

-- Every report id ever accepted: replay protection by this primary key alone.
CREATE TABLE shuffler_seen (
    task_id BLOB NOT NULL,
    report_id BLOB NOT NULL,
    PRIMARY KEY (task_id, report_id)
) WITHOUT ROWID;

-- Sealed reports waiting to be forwarded. No time, no connection detail, no report id; the
-- arrival order (seq) is only kept until the batch is shuffled and delivered, then deleted.
CREATE TABLE shuffler_pending (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id BLOB NOT NULL,
    batch_id BLOB,
    enc BLOB NOT NULL,
    ct BLOB NOT NULL
);
CREATE INDEX shuffler_pending_task_batch ON shuffler_pending (task_id, batch_id);

-- Batches cut from the pending reports, until the analyzer has them; delivery leases one
-- (leased_until) so that it is sent once at a time.
CREATE TABLE shuffler_batches (
    batch_id BLOB PRIMARY KEY NOT NULL,
    task_id BLOB NOT NULL,
    reports INTEGER NOT NULL,
    leased_until INTEGER NOT NULL DEFAULT 0
);

-- Analyzer: tasks with their calibration and their HPKE private key.
CREATE TABLE analyzer_tasks (
    task_id BLOB PRIMARY KEY NOT NULL,
    config TEXT NOT NULL,
    hpke_secret BLOB NOT NULL,
    created_unix INTEGER NOT NULL
);

-- Each batch once (primary key), with its aggregated analyzer state (JSON).
CREATE TABLE analyzer_batches (
    task_id BLOB NOT NULL,
    batch_id BLOB NOT NULL,
    reports INTEGER NOT NULL,
    rejected INTEGER NOT NULL,
    duplicates INTEGER NOT NULL,
    state TEXT NOT NULL,
    release_id INTEGER,
    PRIMARY KEY (task_id, batch_id)
);

-- Each encapsulated key once per task: a sealed report forwarded twice counts once.
CREATE TABLE analyzer_seen (
    task_id BLOB NOT NULL,
    enc BLOB NOT NULL,
    PRIMARY KEY (task_id, enc)
) WITHOUT ROWID;

-- Releases, with the guarantee each spent.
CREATE TABLE analyzer_releases (
    release_id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id BLOB NOT NULL,
    created_unix INTEGER NOT NULL,
    reports INTEGER NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX analyzer_releases_task ON analyzer_releases (task_id);
