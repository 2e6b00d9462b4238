-- The files that went with a question (issue 36): the ones the editor sent
-- and those the question mentioned, a JSON array of absolute paths (each
-- with ":N" or ":N-M" when it named lines); NULL for none and for every
-- other message.
ALTER TABLE messages ADD COLUMN files TEXT;
