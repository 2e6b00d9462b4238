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

-- A session's message count is kept on its row instead of counted on
-- every read, as in the SQLite store. The trigger runs as the schema's
-- owner: people cannot set the column themselves.
ALTER TABLE sessions ADD COLUMN message_count integer NOT NULL DEFAULT 0;
UPDATE sessions s SET message_count = (SELECT count(*) FROM messages m WHERE m.session_id = s.id);
CREATE FUNCTION count_messages() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE sessions SET message_count = message_count + 1 WHERE id = NEW.session_id;
    ELSE
        UPDATE sessions SET message_count = message_count - 1 WHERE id = OLD.session_id;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION count_messages() FROM PUBLIC;
CREATE TRIGGER messages_counted AFTER INSERT OR DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION count_messages();
