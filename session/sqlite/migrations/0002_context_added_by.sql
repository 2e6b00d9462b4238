-- Who added a context item: 'user' (commands, CLI) or 'model' (tool calls).
-- Files the model added are read only inside the workspace and session
-- folders, and never when they look like secrets.
ALTER TABLE context_items ADD COLUMN added_by TEXT NOT NULL DEFAULT 'user';
