-- Admission to relay tasks (docs/service.md, "Admission to relay tasks"): with admission
-- "tokens" (the default) the operator receives one single-use enrollment token per client
-- index when it creates the task; the relay keeps only SHA-256 of each (domain, task, index,
-- token), checks it at registration, and never shows it. A task with admission "open" has no
-- rows here.
CREATE TABLE relay_admission (
    task_id BYTEA NOT NULL,
    idx BIGINT NOT NULL,
    token_hash BYTEA NOT NULL,
    PRIMARY KEY (task_id, idx)
);
