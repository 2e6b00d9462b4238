-- Live updates: every change to a session, its messages, context or files
-- is announced on the channel ctxls_changes, so the daemons of other
-- machines tell their editors. The payload names the session, what
-- changed and who changed it (the daemon's application_name), never a
-- title, a file name or content: NOTIFY reaches every listener, whatever it
-- may read, and a daemon reads what changed through the policies.
-- Identical payloads in one transaction are delivered once.
CREATE FUNCTION ctxls_notify() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    r record;
    sid text;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'sessions' THEN
        sid := r.id;
    ELSE
        sid := r.session_id;
    END IF;
    PERFORM pg_notify('ctxls_changes', json_build_object(
        's', sid, 'k', TG_TABLE_NAME, 'op', lower(TG_OP),
        'by', current_setting('application_name'))::text);
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_notify AFTER INSERT OR UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION ctxls_notify();
CREATE TRIGGER messages_notify AFTER INSERT OR UPDATE OR DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION ctxls_notify();
CREATE TRIGGER context_notify AFTER INSERT OR UPDATE OR DELETE ON context_items
    FOR EACH ROW EXECUTE FUNCTION ctxls_notify();
CREATE TRIGGER files_notify AFTER INSERT OR UPDATE OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION ctxls_notify();
