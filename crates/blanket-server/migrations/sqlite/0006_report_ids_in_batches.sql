-- Wire version 2 (docs/service.md, "API"): the seal binds the report id (HPKE associated
-- data), so the analyzer needs each report's id to open it and the batch carries it. The id is
-- the client's random choice, which the shuffler already holds in shuffler_seen; it is deleted
-- with the row after delivery. Rows stored before this migration (version 1 seals) have none
-- and are forwarded with a zero id: they do not open and are counted as rejected.
ALTER TABLE shuffler_pending ADD COLUMN report_id BLOB;
