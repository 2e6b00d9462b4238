-- Who is streaming an answer, and when it last showed it is alive. A row
-- left "streaming" by a killed daemon is marked "interrupted" when a store
-- is opened (or a turn starts in its session), but only once it is stale:
-- its owner's process is gone (same host) or its heartbeat is older than
-- session.StaleAfter. A live daemon on the same data directory keeps its
-- rows (see interruptStale in message.go).
ALTER TABLE messages ADD COLUMN owner TEXT;          -- "<host>/<pid>/<random>" of the store streaming it
ALTER TABLE messages ADD COLUMN heartbeat_at INTEGER; -- Unix ms of its last checkpoint or heartbeat
CREATE INDEX messages_streaming ON messages (session_id) WHERE status = 'streaming';
