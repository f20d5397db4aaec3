-- The relay role (clients' verifiable shuffle, docs/protocol.md "Over the network"): relay
-- tables start with relay_. The relay state machine is deterministic given its inputs, so the
-- state is event-sourced: the task, the registered keys and the log of every input.

CREATE TABLE relay_tasks (
    task_id BLOB PRIMARY KEY NOT NULL,
    spec TEXT NOT NULL,
    created_unix INTEGER NOT NULL
);

-- Registered long-term keys; the index is the client's id in the run.
CREATE TABLE relay_clients (
    task_id BLOB NOT NULL,
    idx INTEGER NOT NULL,
    public_key BLOB NOT NULL,
    PRIMARY KEY (task_id, idx),
    UNIQUE (task_id, public_key)
);

-- Every input the relay state machine consumed, in order: kind 0 = start(at_ms),
-- 1 = receive(client, body) under the client's signed request number client_seq,
-- 2 = advance(at_ms). A request number is accepted once: (task_id, client, client_seq) of the
-- receive rows is unique.
CREATE TABLE relay_log (
    task_id BLOB NOT NULL,
    seq INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    client INTEGER NOT NULL,
    client_seq INTEGER NOT NULL,
    part INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (task_id, seq),
    UNIQUE (task_id, kind, client, client_seq, part)
);
