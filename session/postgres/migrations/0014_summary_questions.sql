-- How many of the user's questions a summary covers, as in the SQLite
-- store's migration 0013 (summary_questions); NULL for every other message.
ALTER TABLE messages ADD COLUMN summary_questions integer;
UPDATE messages m SET summary_questions = (
    SELECT count(*) FROM messages c
    WHERE c.session_id = m.session_id AND c.id BETWEEN m.summary_first AND m.summary_last
      AND c.summary_first IS NULL AND c.role = 'user')
WHERE summary_first IS NOT NULL;
