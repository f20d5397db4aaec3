-- Batches on upload boundaries (docs/service.md, "Multi-message tasks"). Every pending report
-- carries the id of the upload (one HTTP request) it came in, so a batch cut takes whole
-- uploads and a user's messages (sent in one bulk upload) never fall in two batches. The id
-- is the shuffler's own (never the client's), is deleted with the row after delivery, and
-- only says what the shuffler already saw: which reports came in one request. Rows stored
-- before this migration are each their own upload (-seq; new ids are positive).
ALTER TABLE shuffler_pending ADD COLUMN upload INTEGER NOT NULL DEFAULT 0;
UPDATE shuffler_pending SET upload = -seq;

-- Reports per user of the task (t for a vector sum, m for an IKOS sum, 1 otherwise): an
-- upload must hold a positive multiple of it, so a user's messages arrive whole. Tasks
-- registered before this migration keep 1 (no check).
ALTER TABLE shuffler_tasks ADD COLUMN reports_per_upload INTEGER NOT NULL DEFAULT 1;
