-- A turn reads only what the model is given (issue 14: costs that stay
-- flat), as in the SQLite store's migration 0007: the newest summary,
-- found through the index below, and the messages after the range it
-- covers. summary_count is how many messages (summaries left out) a
-- summary covers, counted once when it is stored; NULL for every other
-- message.
ALTER TABLE messages ADD COLUMN summary_count integer;
UPDATE messages m SET summary_count = (
    SELECT count(*) FROM messages c
    WHERE c.session_id = m.session_id AND c.id BETWEEN m.summary_first AND m.summary_last
      AND c.summary_first IS NULL)
WHERE summary_first IS NOT NULL;
CREATE INDEX messages_summaries ON messages (session_id, id) WHERE summary_first IS NOT NULL;

