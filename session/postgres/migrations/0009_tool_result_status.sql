-- A tool call's result records what became of the call (issue 21): status
-- 'error' when it failed, 'declined' when the user did not allow it, as in
-- the SQLite store's migration 0008.
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
    CHECK (status IN ('complete', 'interrupted', 'error', 'streaming', 'declined'));
