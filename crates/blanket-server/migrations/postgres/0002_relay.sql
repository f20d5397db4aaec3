-- The relay role (clients' verifiable shuffle, docs/protocol.md "Over the network"): relay
-- tables start with relay_. The relay state machine is deterministic given its inputs, so the
-- state is event-sourced: the task, the registered keys and the log of every input.

CREATE TABLE relay_tasks (
    task_id BYTEA PRIMARY KEY NOT NULL,
    spec TEXT NOT NULL,
    created_unix BIGINT NOT NULL
);

-- Registered long-term keys; the index is the client's id in the run.
CREATE TABLE relay_clients (
    task_id BYTEA NOT NULL,
    idx BIGINT NOT NULL,
    public_key BYTEA NOT NULL,
    PRIMARY KEY (task_id, idx),
    UNIQUE (task_id, public_key)
);

-- Every input the relay state machine consumed, in order: kind 0 = start(at_ms),
-- 1 = receive(client, body) under the client's signed request number client_seq,
-- 2 = advance(at_ms). A request number is accepted once: (task_id, client, client_seq) of the
-- receive rows is unique.
CREATE TABLE relay_log (
    task_id BYTEA NOT NULL,
    seq BIGINT NOT NULL,
    kind BIGINT NOT NULL,
    client BIGINT NOT NULL,
    client_seq BIGINT NOT NULL,
    part BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (task_id, seq),
    UNIQUE (task_id, kind, client, client_seq, part)
);
