-- blanket service schema (PostgreSQL): the same tables as migrations/sqlite, for replicas of
-- a role sharing one database. Shuffler tables start with shuffler_, analyzer tables with
-- analyzer_.

CREATE TABLE shuffler_tasks (
    task_id BYTEA PRIMARY KEY NOT NULL,
    min_batch BIGINT NOT NULL,
    deadline_unix BIGINT NOT NULL
);

-- Every report id ever accepted: replay protection by this primary key alone.
CREATE TABLE shuffler_seen (
    task_id BYTEA NOT NULL,
    report_id BYTEA NOT NULL,
    PRIMARY KEY (task_id, report_id)
);

-- Sealed reports waiting to be forwarded (no time, no connection detail, no report id).
CREATE TABLE shuffler_pending (
    seq BIGSERIAL PRIMARY KEY,
    task_id BYTEA NOT NULL,
    batch_id BYTEA,
    enc BYTEA NOT NULL,
    ct BYTEA NOT NULL
);
CREATE INDEX shuffler_pending_task_batch ON shuffler_pending (task_id, batch_id);

-- Batches until the analyzer has them; a replica leases one (leased_until) to deliver it.
CREATE TABLE shuffler_batches (
    batch_id BYTEA PRIMARY KEY NOT NULL,
    task_id BYTEA NOT NULL,
    reports BIGINT NOT NULL,
    leased_until BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE analyzer_tasks (
    task_id BYTEA PRIMARY KEY NOT NULL,
    config TEXT NOT NULL,
    hpke_secret BYTEA NOT NULL,
    created_unix BIGINT NOT NULL
);

CREATE TABLE analyzer_batches (
    task_id BYTEA NOT NULL,
    batch_id BYTEA NOT NULL,
    reports BIGINT NOT NULL,
    rejected BIGINT NOT NULL,
    duplicates BIGINT NOT NULL,
    state TEXT NOT NULL,
    release_id BIGINT,
    PRIMARY KEY (task_id, batch_id)
);

CREATE TABLE analyzer_seen (
    task_id BYTEA NOT NULL,
    enc BYTEA NOT NULL,
    PRIMARY KEY (task_id, enc)
);

CREATE TABLE analyzer_releases (
    release_id BIGSERIAL PRIMARY KEY,
    task_id BYTEA NOT NULL,
    created_unix BIGINT NOT NULL,
    reports BIGINT NOT NULL,
    epsilon DOUBLE PRECISION NOT NULL,
    delta DOUBLE PRECISION NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX analyzer_releases_task ON analyzer_releases (task_id);
