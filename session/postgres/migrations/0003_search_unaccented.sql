-- Search folds diacritics as the SQLite store's FTS5 (unicode61) does:
-- "cafe" finds "café". The ctxls configuration is 'simple' (no stemming,
-- no stop words) with unaccent before it; the tsvector columns are made
-- again with it.
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION ctxls (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION ctxls
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, simple;

DROP INDEX sessions_title_tsv;
ALTER TABLE sessions DROP COLUMN title_tsv;
ALTER TABLE sessions ADD COLUMN title_tsv tsvector GENERATED ALWAYS AS (to_tsvector('ctxls', title)) STORED;
CREATE INDEX sessions_title_tsv ON sessions USING gin (title_tsv);

DROP INDEX messages_content_tsv;
ALTER TABLE messages DROP COLUMN content_tsv;
ALTER TABLE messages ADD COLUMN content_tsv tsvector GENERATED ALWAYS AS (to_tsvector('ctxls', content)) STORED;
CREATE INDEX messages_content_tsv ON messages USING gin (content_tsv);
