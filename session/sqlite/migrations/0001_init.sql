-- Times are Unix milliseconds, UTC.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    title_source TEXT NOT NULL CHECK (title_source IN ('auto', 'model', 'user')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    meta         TEXT NOT NULL DEFAULT '{}',  -- JSON: envHint, currentIntent, lastObservedAt, lastIdleAt
    folder       TEXT NOT NULL                -- directory name under <dataDir>/sessions
);
CREATE INDEX sessions_by_activity ON sessions (updated_at DESC, id DESC);

CREATE TABLE messages (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role              TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content           TEXT NOT NULL,
    tool_calls        TEXT,     -- OpenAI-style tool_calls JSON array, verbatim
    tool_call_id      TEXT,
    status            TEXT NOT NULL CHECK (status IN ('complete', 'interrupted', 'error', 'streaming')),
    created_at        INTEGER NOT NULL,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER
);
CREATE INDEX messages_by_session ON messages (session_id, id);

-- One row per item of a named relevant-context set, in order.
CREATE TABLE context_items (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    set_name   TEXT NOT NULL,
    position   INTEGER NOT NULL,
    item       TEXT NOT NULL,
    PRIMARY KEY (session_id, set_name, position)
);

-- Full-text indexes over message contents and session titles, kept in step
-- by triggers (external-content FTS5 tables).
CREATE VIRTUAL TABLE messages_fts USING fts5 (content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
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

CREATE VIRTUAL TABLE titles_fts USING fts5 (title, content = 'sessions', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER sessions_ai AFTER INSERT ON sessions BEGIN
    INSERT INTO titles_fts (rowid, title) VALUES (new.rowid, new.title);
END;
CREATE TRIGGER sessions_ad AFTER DELETE ON sessions BEGIN
    INSERT INTO titles_fts (titles_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
END;
CREATE TRIGGER sessions_au AFTER UPDATE OF title ON sessions BEGIN
    INSERT INTO titles_fts (titles_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
    INSERT INTO titles_fts (rowid, title) VALUES (new.rowid, new.title);
END;
