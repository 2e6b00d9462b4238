-- The model that wrote an answer (NULL for user, tool and system messages,
-- and for answers stored before this column existed).
ALTER TABLE messages ADD COLUMN model TEXT;
