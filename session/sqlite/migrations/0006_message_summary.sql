-- Compaction (issue 14): a summary of earlier turns is a system message
-- that covers the messages with ids summary_first..summary_last (both
-- inclusive). The originals stay; the model's view of the session starts
-- with the newest summary and goes on after summary_last. NULL for every
-- other message.
ALTER TABLE messages ADD COLUMN summary_first INTEGER;
ALTER TABLE messages ADD COLUMN summary_last INTEGER;
