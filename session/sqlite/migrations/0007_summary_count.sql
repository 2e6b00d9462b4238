-- A turn reads only what the model is given (issue 14: costs that stay
-- flat): the newest summary, found through the index below, and the
-- messages after the range it covers. summary_count is how many messages
-- (summaries left out) a summary covers, counted once when it is stored,
-- for the marker that opens it; NULL for every other message.
ALTER TABLE messages ADD COLUMN summary_count INTEGER;
UPDATE messages SET summary_count = (
    SELECT count(*) FROM messages c
    WHERE c.session_id = messages.session_id AND c.id BETWEEN messages.summary_first AND messages.summary_last
      AND c.summary_first IS NULL)
WHERE summary_first IS NOT NULL;
CREATE INDEX messages_summaries ON messages (session_id, id) WHERE summary_first IS NOT NULL;

-- A session's message count is kept on its row instead of counted on
-- every read (a 10,000-message session took a millisecond or two each
-- time, several times a turn).
ALTER TABLE sessions ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id);
CREATE TRIGGER messages_counted AFTER INSERT ON messages BEGIN
    UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id;
END;
CREATE TRIGGER messages_uncounted AFTER DELETE ON messages BEGIN
    UPDATE sessions SET message_count = message_count - 1 WHERE id = old.session_id;
END;
