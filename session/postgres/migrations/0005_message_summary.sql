-- Compaction (issue 14): a summary of earlier turns is a system message
-- that covers the messages with ids summary_first..summary_last (both
-- inclusive), as in the SQLite store's migration 0006. NULL for every
-- other message.
ALTER TABLE messages ADD COLUMN summary_first bigint, ADD COLUMN summary_last bigint,
    ADD CONSTRAINT messages_summary_range CHECK ((summary_first IS NULL) = (summary_last IS NULL) AND summary_first <= summary_last);
