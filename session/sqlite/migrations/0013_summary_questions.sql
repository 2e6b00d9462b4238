-- How many of the user's questions a summary covers (issue 36: people
-- count questions, not messages), counted once when it is stored, beside
-- summary_count; NULL for every other message.
ALTER TABLE messages ADD COLUMN summary_questions INTEGER;
UPDATE messages SET summary_questions = (
    SELECT count(*) FROM messages c
    WHERE c.session_id = messages.session_id AND c.id BETWEEN messages.summary_first AND messages.summary_last
      AND c.summary_first IS NULL AND c.role = 'user')
WHERE summary_first IS NOT NULL;
