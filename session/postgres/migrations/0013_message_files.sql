-- The files that went with a question (issue 36), as in the SQLite store's
-- migration 0012 (message_files): a JSON array of absolute paths, NULL for none.
ALTER TABLE messages ADD COLUMN files text;
