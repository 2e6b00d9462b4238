-- The last word of a search is a prefix. Without a prefix index FTS5 answers
-- a prefix by merging the doclists of every term that starts with it, which
-- for the one to three characters of a word still being typed ("deploy c")
-- took 0.1-0.6 s on 100,000 messages. Prefix indexes for 1, 2 and 3
-- characters make those a single lookup; longer prefixes match few terms.
-- They cost index size (about 2.7 times the index without them) and insert
-- time.
--
-- FTS5 options cannot be altered, so the index is dropped, created again and
-- rebuilt from the messages. The triggers on messages name messages_fts and
-- keep working.
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5 (content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2', prefix = '1 2 3');
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

-- The terms of the message index, so Search can spell a longer prefix out
-- into the terms it matches (see messagesMatch in search.go).
CREATE VIRTUAL TABLE messages_vocab USING fts5vocab (messages_fts, 'row');
