-- An answer the user stopped keeps status 'cancelled' (issue 24), told
-- apart from one left 'interrupted' by a daemon that died while it
-- streamed. The table is made again for the CHECK constraint, as in 0008:
-- every row with its id, then its indexes and triggers.
CREATE TABLE messages_new (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role              TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content           TEXT NOT NULL,
    tool_calls        TEXT,     -- OpenAI-style tool_calls JSON array, verbatim
    tool_call_id      TEXT,
    status            TEXT NOT NULL CHECK (status IN ('complete', 'interrupted', 'error', 'streaming', 'declined', 'cancelled')),
    created_at        INTEGER NOT NULL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    owner             TEXT,
    heartbeat_at      INTEGER,
    model             TEXT,
    summary_first     INTEGER,
    summary_last      INTEGER,
    summary_count     INTEGER,
    cached_tokens     INTEGER
);
INSERT INTO messages_new (id, session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens,
                          completion_tokens, owner, heartbeat_at, model, summary_first, summary_last, summary_count, cached_tokens)
    SELECT id, session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens,
           completion_tokens, owner, heartbeat_at, model, summary_first, summary_last, summary_count, cached_tokens
    FROM messages;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE INDEX messages_streaming ON messages (session_id) WHERE status = 'streaming';
CREATE INDEX messages_summaries ON messages (session_id, id) WHERE summary_first IS NOT NULL;
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_counted AFTER INSERT ON messages BEGIN
    UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id;
END;
CREATE TRIGGER messages_uncounted AFTER DELETE ON messages BEGIN
    UPDATE sessions SET message_count = message_count - 1 WHERE id = old.session_id;
END;
