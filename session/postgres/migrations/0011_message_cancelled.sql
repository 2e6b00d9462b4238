-- An answer the user stopped keeps status 'cancelled' (issue 24), told
-- apart from one left 'interrupted' by a daemon that died while it
-- streamed, as in the SQLite store's migration 0010.
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
    CHECK (status IN ('complete', 'interrupted', 'error', 'streaming', 'declined', 'cancelled'));
