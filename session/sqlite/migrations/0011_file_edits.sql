-- The changes the model's tools made to the user's files, per turn, for
-- undo and redo (issue 32): only the changed span both ways, with hashes of
-- the whole text before and after (session.FileChange).
CREATE TABLE file_edits (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn        INTEGER NOT NULL,
    path        TEXT NOT NULL,
    created     INTEGER NOT NULL DEFAULT 0,
    start       INTEGER NOT NULL,
    removed     TEXT NOT NULL,
    inserted    TEXT NOT NULL,
    before_hash TEXT NOT NULL,
    after_hash  TEXT NOT NULL,
    on_disk     INTEGER NOT NULL DEFAULT 0,
    undone      INTEGER NOT NULL DEFAULT 0,
    toggled_at  INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL
);
CREATE INDEX file_edits_by_session ON file_edits (session_id, id);
