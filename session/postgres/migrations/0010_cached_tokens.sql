-- How much of an answer's prompt the provider read from its cache, as in
-- the SQLite store's migration 0009; NULL when it said nothing.
ALTER TABLE messages ADD COLUMN cached_tokens integer;
