-- The PostgreSQL store's schema (issue 13). Times are Unix milliseconds,
-- UTC, as in the SQLite store. Every person connects as a role of their
-- own, a member of ctxls_user; Row-Level Security keeps each role's private
-- sessions (and their messages, context and files) from every other role,
-- even through plain SQL.

DO $$ BEGIN
    CREATE ROLE ctxls_user NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

CREATE TABLE sessions (
    id           text PRIMARY KEY,
    owner        name NOT NULL DEFAULT session_user,
    visibility   text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'team')),
    title        text NOT NULL,
    title_source text NOT NULL CHECK (title_source IN ('auto', 'model', 'user')),
    created_at   bigint NOT NULL,
    updated_at   bigint NOT NULL,
    meta         jsonb NOT NULL DEFAULT '{}',
    folder       text NOT NULL, -- the folder's name in each machine's mirror
    title_tsv    tsvector GENERATED ALWAYS AS (to_tsvector('simple', title)) STORED
);
CREATE INDEX sessions_by_activity ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_title_tsv ON sessions USING gin (title_tsv);

CREATE TABLE messages (
    id                bigserial PRIMARY KEY,
    session_id        text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role              text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content           text NOT NULL,
    tool_calls        text, -- OpenAI-style tool_calls JSON array, verbatim
    tool_call_id      text,
    status            text NOT NULL CHECK (status IN ('complete', 'interrupted', 'error', 'streaming')),
    created_at        bigint NOT NULL,
    prompt_tokens     integer,
    completion_tokens integer,
    owner             text,   -- "<host>/<pid>/<random>" of the daemon streaming it
    heartbeat_at      bigint, -- its last checkpoint or heartbeat
    model             text,
    content_tsv       tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED
);
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE INDEX messages_content_tsv ON messages USING gin (content_tsv);
CREATE INDEX messages_streaming ON messages (session_id) WHERE status = 'streaming';

CREATE TABLE context_items (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    set_name   text NOT NULL,
    position   integer NOT NULL,
    item       text NOT NULL,
    added_by   text NOT NULL DEFAULT 'user',
    PRIMARY KEY (session_id, set_name, position)
);

-- Session files live here and are mirrored into each machine's session
-- folder (sources/ from the user; results/, scripts/, data/ from the model).
CREATE TABLE files (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    subdir     text NOT NULL CHECK (subdir IN ('sources', 'results', 'scripts', 'data')),
    name       text NOT NULL,
    content    bytea NOT NULL CHECK (octet_length(content) <= 25 * 1024 * 1024),
    updated_at bigint NOT NULL,
    PRIMARY KEY (session_id, subdir, name)
);

-- Who may do what. Members of ctxls_user read and write the sessions they
-- own and the team's; only the owner deletes a session or changes its
-- visibility (share, below). owner and visibility are not updatable
-- directly.
GRANT SELECT, INSERT, DELETE ON sessions TO ctxls_user;
GRANT UPDATE (title, title_source, updated_at, meta, folder) ON sessions TO ctxls_user;
GRANT SELECT, INSERT, UPDATE, DELETE ON messages, context_items, files TO ctxls_user;
GRANT USAGE ON SEQUENCE messages_id_seq TO ctxls_user;

ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE context_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE files ENABLE ROW LEVEL SECURITY;

CREATE POLICY sessions_read ON sessions FOR SELECT
    USING (owner = session_user OR visibility = 'team');
CREATE POLICY sessions_create ON sessions FOR INSERT
    WITH CHECK (owner = session_user);
CREATE POLICY sessions_change ON sessions FOR UPDATE
    USING (owner = session_user OR visibility = 'team')
    WITH CHECK (owner = session_user OR visibility = 'team');
CREATE POLICY sessions_delete ON sessions FOR DELETE
    USING (owner = session_user);

-- A row of a session's messages, context or files is reachable exactly when
-- the session is (the subquery sees sessions through their policy).
CREATE POLICY messages_of_visible ON messages
    USING (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id))
    WITH CHECK (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id));
CREATE POLICY context_of_visible ON context_items
    USING (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id))
    WITH CHECK (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id));
CREATE POLICY files_of_visible ON files
    USING (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id))
    WITH CHECK (EXISTS (SELECT 1 FROM sessions s WHERE s.id = session_id));

-- share sets a session's visibility; only its owner may. It runs with the
-- privileges of the schema's owner (who may update the column) and checks
-- the caller itself.
CREATE FUNCTION share(session text, vis text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF vis NOT IN ('private', 'team') THEN
        RAISE EXCEPTION 'visibility must be private or team, got %', vis USING ERRCODE = '22023';
    END IF;
    UPDATE public.sessions SET visibility = vis WHERE id = session AND owner = session_user;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no session % of yours', session USING ERRCODE = '42501';
    END IF;
END $$;
REVOKE ALL ON FUNCTION share(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION share(text, text) TO ctxls_user;
