-- The changes the model's tools made to the user's files, per turn, for
-- undo and redo (issue 32), as in the SQLite store's migration 0011: only
-- the changed span both ways, with hashes of the whole text before and
-- after. Reachable exactly when the session is, as its messages are.
CREATE TABLE file_edits (
    id          bigserial PRIMARY KEY,
    session_id  text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn        bigint NOT NULL,
    path        text NOT NULL,
    created     boolean NOT NULL DEFAULT false,
    start       bigint NOT NULL,
    removed     text NOT NULL,
    inserted    text NOT NULL,
    before_hash text NOT NULL,
    after_hash  text NOT NULL,
    on_disk     boolean NOT NULL DEFAULT false,
    undone      boolean NOT NULL DEFAULT false,
    toggled_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX file_edits_by_session ON file_edits (session_id, id);

GRANT SELECT, INSERT, UPDATE, DELETE ON file_edits TO ctxls_user;
GRANT USAGE ON SEQUENCE file_edits_id_seq TO ctxls_user;
ALTER TABLE file_edits ENABLE ROW LEVEL SECURITY;
CREATE POLICY file_edits_of_visible ON file_edits
    USING (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id))
    WITH CHECK (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id));
