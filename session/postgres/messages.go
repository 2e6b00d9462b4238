package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// The PostgreSQL store's messages and relevant context (see message.go and
// context.go for the rules, which are the same).

// AppendMessage stores m, filling its ID and CreatedAt.
func (s *Store) AppendMessage(ctx context.Context, m *session.Message) error {
	if err := session.CheckMessage(m); err != nil {
		return err
	}
	now := s.millis()
	if err := scanAppended(m, s.pool.QueryRow(ctx, pgAppendMessage, session.MessageArgs(m, now, s.owner)...)); err != nil {
		return err
	}
	m.CreatedAt = session.FromMillis(now)
	return s.history.Later(ctx, m.SessionID)
}

// pgAppendMessage stores a message (messageArgs) in one statement (one
// round trip, atomic by itself): the session's activity bumped, the
// message inserted only if that found the session, a summary's covered
// messages counted.
const pgAppendMessage = `WITH touched AS (
		UPDATE sessions SET updated_at = GREATEST(updated_at + 1, $7) WHERE id = $1 RETURNING id)
	INSERT INTO messages (` + session.MessageColumns + `, summary_count, summary_questions)
	SELECT touched.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint, $14::bigint, $15,
		CASE WHEN $13::bigint IS NOT NULL THEN (SELECT count(*) FROM messages c
			WHERE c.session_id = touched.id AND c.id BETWEEN $13::bigint AND $14::bigint AND c.summary_first IS NULL) END,
		CASE WHEN $13::bigint IS NOT NULL THEN (SELECT count(*) FROM messages c
			WHERE c.session_id = touched.id AND c.id BETWEEN $13::bigint AND $14::bigint AND c.summary_first IS NULL AND c.role = 'user') END
	FROM touched RETURNING id, summary_count, summary_questions`

// scanAppended reads what pgAppendMessage returns into m: its id and, for
// a summary, how many messages and questions it covers.
func scanAppended(m *session.Message, row pgx.Row) error {
	var covered, questions *int64
	err := row.Scan(&m.ID, &covered, &questions)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.NotFound(m.SessionID)
	}
	if err != nil {
		return err
	}
	if m.SummaryOf != nil && covered != nil {
		m.SummaryOf.Covered = int(*covered)
	}
	if m.SummaryOf != nil && questions != nil {
		m.SummaryOf.Questions = int(*questions)
	}
	return nil
}

// UpdateMessage replaces a message's content, status and usage.
func (s *Store) UpdateMessage(ctx context.Context, id int64, content string, status session.Status, usage *session.Usage) error {
	if !session.ValidStatus(status) {
		return session.Invalidf("unknown status %q", status)
	}
	// One statement: the message changed and its session's activity bumped.
	pt, ct, cached := session.UsageArgs(usage)
	now := s.millis()
	var sessionID string
	err := s.pool.QueryRow(ctx, `WITH changed AS (
			UPDATE messages SET content = $1, status = $2,
				prompt_tokens = coalesce($3, prompt_tokens), completion_tokens = coalesce($4, completion_tokens), heartbeat_at = $5,
				cached_tokens = coalesce($7, cached_tokens)
			WHERE id = $6 RETURNING session_id)
		UPDATE sessions s SET updated_at = GREATEST(s.updated_at + 1, $5) FROM changed WHERE s.id = changed.session_id
		RETURNING s.id`, content, status, pt, ct, now, id, cached).Scan(&sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("message %d: %w", id, session.ErrNotFound)
	}
	if err != nil {
		return err
	}
	return s.history.Later(ctx, sessionID)
}

// Heartbeat records that a streaming answer's turn is alive.
func (s *Store) Heartbeat(ctx context.Context, id int64) error {
	tag, err := s.pool.Exec(ctx, "UPDATE messages SET heartbeat_at = $1 WHERE id = $2 AND status = 'streaming'", s.millis(), id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("message %d: %w", id, session.ErrNotFound)
	}
	return nil
}

// SetToolCalls records the tool calls an assistant message made.
func (s *Store) SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error {
	if !json.Valid(toolCalls) {
		return session.Invalidf("toolCalls is not valid JSON")
	}
	tag, err := s.pool.Exec(ctx, "UPDATE messages SET tool_calls = $1 WHERE id = $2", string(toolCalls), id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("message %d: %w", id, session.ErrNotFound)
	}
	return nil
}

// Messages returns a session's messages, oldest first.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]session.Message, error) {
	msgs, err := s.messages(ctx, s.pool, sessionID)
	if err == nil && len(msgs) == 0 {
		err = s.exists(ctx, s.pool, sessionID) // none, or no such session
	}
	return msgs, err
}

// ModelHistory returns what a turn gives the model of a session: its
// newest summary (nil when it has none) and the messages after the range
// that summary covers, summaries left out, oldest first; only those are
// read (see sqlite.Store.ModelHistory).
//
// It is one statement (a round trip is most of what a read costs here):
// the newest summary, and the messages after the last one it covers.
func (s *Store) ModelHistory(ctx context.Context, sessionID string) (*session.Message, []session.Message, error) {
	summary, rest, err := splitModelHistory(s.scanMessages(s.pool.Query(ctx, pgModelHistory, sessionID)))
	if err != nil {
		return nil, nil, err
	}
	if summary == nil && len(rest) == 0 {
		err = s.exists(ctx, s.pool, sessionID) // none, or no such session
	}
	return summary, rest, err
}

// pgModelHistory reads a session's ($1) newest summary and the messages
// after the last one it covers, summaries left out (splitModelHistory parts them).
const pgModelHistory = `WITH newest AS (
		SELECT id, summary_last FROM messages WHERE session_id = $1 AND summary_first IS NOT NULL ORDER BY id DESC LIMIT 1)
	SELECT ` + pgMessageColumns + ` FROM messages WHERE id = (SELECT id FROM newest)
	UNION ALL
	SELECT ` + pgMessageColumns + ` FROM messages
		WHERE session_id = $1 AND id > coalesce((SELECT summary_last FROM newest), 0) AND summary_first IS NULL
	ORDER BY id`

// pgModelHistorySince is pgModelHistory less what the caller holds: with
// $2 the newest summary's id (0: none) it holds the messages through $3.
// Message $3 itself is read too, so the caller sees that it is still
// there (a Rewind may have removed it; ids are never reused).
const pgModelHistorySince = `WITH newest AS (
		SELECT id, summary_last FROM messages WHERE session_id = $1 AND summary_first IS NOT NULL ORDER BY id DESC LIMIT 1)
	SELECT ` + pgMessageColumns + ` FROM messages WHERE id = (SELECT id FROM newest)
	UNION ALL
	SELECT ` + pgMessageColumns + ` FROM messages
		WHERE session_id = $1 AND summary_first IS NULL AND id > greatest(coalesce((SELECT summary_last FROM newest), 0),
			CASE WHEN coalesce((SELECT id FROM newest), 0) = $2 THEN $3::bigint - 1 ELSE 0 END)
	ORDER BY id`

// splitModelHistory parts the rows of pgModelHistory into the summary (nil when
// none) and the rest.
func splitModelHistory(rows []session.Message, err error) (*session.Message, []session.Message, error) {
	if err != nil {
		return nil, nil, err
	}
	var summary *session.Message
	rest := rows[:0:0]
	for i, m := range rows {
		if m.IsSummary() {
			summary = &rows[i] // the only one: the query reads the newest
		} else {
			rest = append(rest, m)
		}
	}
	return summary, rest, nil
}

func (s *Store) messages(ctx context.Context, q pgQuerier, sessionID string) ([]session.Message, error) {
	return s.queryMessages(ctx, q, "session_id = $1 ORDER BY id", sessionID)
}

// queryMessages reads the messages that where (a condition and an order)
// selects through q.
func (s *Store) queryMessages(ctx context.Context, q pgQuerier, where string, args ...any) ([]session.Message, error) {
	return s.scanMessages(q.Query(ctx, "SELECT "+pgMessageColumns+" FROM messages WHERE "+where, args...))
}

// pgMessageColumns are the columns scanMessages reads.
const pgMessageColumns = `id, session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model, summary_first, summary_last, summary_count, summary_questions, cached_tokens, files`

// scanMessages reads the messages of a query of pgMessageColumns.
func (s *Store) scanMessages(rows pgx.Rows, err error) ([]session.Message, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []session.Message{}
	for rows.Next() {
		var (
			m                            session.Message
			toolCalls, toolCallID, model *string
			created                      int64
			pt, ct, cached               *int64
			sf, sl, sc, sq               *int64
			files                        *string
		)
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Role, &m.Content, &toolCalls, &toolCallID, &m.Status, &created, &pt, &ct, &model, &sf, &sl, &sc, &sq, &cached, &files); err != nil {
			return nil, err
		}
		if sf != nil && sl != nil {
			m.SummaryOf = &session.Span{First: *sf, Last: *sl}
			if sc != nil {
				m.SummaryOf.Covered = int(*sc)
			}
			if sq != nil {
				m.SummaryOf.Questions = int(*sq)
			}
		}
		if toolCalls != nil {
			m.ToolCalls = json.RawMessage(*toolCalls)
		}
		if toolCallID != nil {
			m.ToolCallID = *toolCallID
		}
		if model != nil {
			m.Model = *model
		}
		m.Files = session.ParseFiles(files)
		m.CreatedAt = session.FromMillis(created)
		if pt != nil || ct != nil {
			m.Usage = &session.Usage{}
			if pt != nil {
				m.Usage.PromptTokens = int(*pt)
			}
			if ct != nil {
				m.Usage.CompletionTokens = int(*ct)
			}
			if cached != nil {
				m.Usage.CachedTokens = int(*cached)
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// interruptStale is sqlite.Store.interruptStale over every machine's daemons:
// an answer of another host is stale when its heartbeat is older than
// StaleAfter; one of this host also when its process is gone.
func (s *Store) interruptStale(ctx context.Context, sessionID string) error {
	query := "SELECT id, owner, heartbeat_at FROM messages WHERE status = 'streaming'"
	var args []any
	if sessionID != "" {
		query = pgStreaming
		args = append(args, sessionID)
	}
	now := s.millis()
	rows, err := s.pool.Query(ctx, query, args...)
	stale, err := s.staleAmong(rows, err, now)
	if err != nil || len(stale) == 0 {
		return err
	}
	_, err = s.markInterrupted(ctx, stale, now)
	return err
}

// pgStreaming reads a session's ($1) answers still streaming, for
// staleAmong.
const pgStreaming = "SELECT id, owner, heartbeat_at FROM messages WHERE status = 'streaming' AND session_id = $1"

// staleAmong reads the rows of streaming answers (id, owner, heartbeat_at)
// and returns those that are stale at now.
func (s *Store) staleAmong(rows pgx.Rows, err error, now int64) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	host, _ := os.Hostname()
	var stale []int64
	for rows.Next() {
		var (
			id    int64
			owner *string
			hb    *int64
		)
		if err := rows.Scan(&id, &owner, &hb); err != nil {
			return nil, err
		}
		o, beat := "", sql.NullInt64{}
		if owner != nil {
			o = *owner
		}
		if hb != nil {
			beat = sql.NullInt64{Int64: *hb, Valid: true}
		}
		if session.IsStale(s.owner, o, beat, now, host) {
			stale = append(stale, id)
		}
	}
	return stale, rows.Err()
}

// markInterrupted marks the stale answers ids as interrupted and returns
// the ones it marked. The heartbeat is checked again in the statement: a
// daemon that beat meanwhile keeps its answer.
func (s *Store) markInterrupted(ctx context.Context, ids []int64, now int64) ([]int64, error) {
	host, _ := os.Hostname()
	rows, err := s.pool.Query(ctx, `UPDATE messages SET status = 'interrupted' WHERE id = ANY($1) AND status = 'streaming'
		AND (owner IS NULL OR heartbeat_at IS NULL OR owner = $2 OR heartbeat_at < $3 OR owner LIKE $4) RETURNING id`,
		ids, s.owner, now-session.StaleAfter.Milliseconds(), host+"/%")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// Context returns all sets of a session.
func (s *Store) Context(ctx context.Context, sessionID string) (session.Context, error) {
	return s.context(ctx, s.pool, sessionID)
}

func (s *Store) context(ctx context.Context, q pgQuerier, sessionID string) (session.Context, error) {
	c, _, err := scanContext(q.Query(ctx, pgContext, sessionID))
	if err != nil {
		return nil, err
	}
	if len(c) == 0 {
		if err := s.exists(ctx, q, sessionID); err != nil { // none, or no such session
			return nil, err
		}
	}
	return c, nil
}

// pgContext reads every set of a session ($1), in order, with who added
// each item (scanContext).
const pgContext = `SELECT set_name, item, added_by FROM context_items WHERE session_id = $1 ORDER BY set_name COLLATE "C", position`

// scanContext reads the rows of pgContext: the sets, and who added each
// item of the files set.
func scanContext(rows pgx.Rows, err error) (session.Context, map[string]string, error) {
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	c, files := session.Context{}, map[string]string{}
	for rows.Next() {
		var name, item, by string
		if err := rows.Scan(&name, &item, &by); err != nil {
			return nil, nil, err
		}
		c[name] = append(c[name], item)
		if name == session.SetFiles {
			files[item] = by
		}
	}
	return c, files, rows.Err()
}

// AddedBy returns who added each item of a set.
func (s *Store) AddedBy(ctx context.Context, sessionID, setName string) (map[string]string, error) {
	return s.addedBy(ctx, s.pool, sessionID, setName)
}

func (s *Store) addedBy(ctx context.Context, q pgQuerier, sessionID, setName string) (map[string]string, error) {
	rows, err := q.Query(ctx, "SELECT item, added_by FROM context_items WHERE session_id = $1 AND set_name = $2", sessionID, setName)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var item, by string
		if err := rows.Scan(&item, &by); err != nil {
			return nil, err
		}
		out[item] = by
	}
	return out, rows.Err()
}

// UpdateContext is the one operation that changes a set for every caller
// (see sqlite.Store.UpdateContext).
func (s *Store) UpdateContext(ctx context.Context, sessionID, setName string, items []string, mode session.Mode, by string, roots []string) (*session.ContextChange, error) {
	items, err := session.NormalizeItems(setName, items, roots)
	if err != nil {
		return nil, err
	}
	return s.setContext(ctx, sessionID, setName, items, mode, by)
}

// setContext changes one set, recording who made the change (AddedByUser
// or AddedByModel) for the items it adds; UpdateContext normalises the
// items first. The session row is locked first, so two machines changing
// one session's context take turns.
func (s *Store) setContext(ctx context.Context, sessionID, setName string, items []string, mode session.Mode, by string) (*session.ContextChange, error) {
	req, err := session.NewContextRequest(setName, items, mode, by)
	if err != nil {
		return nil, err
	}
	var ch *session.ContextChange
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", sessionID); err != nil {
			return err
		}
		cur, err := s.context(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		origin, err := s.addedBy(ctx, tx, sessionID, setName)
		if err != nil {
			return err
		}
		var who []string
		if ch, who, err = req.Apply(cur, origin); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM context_items WHERE session_id = $1 AND set_name = $2", sessionID, setName); err != nil {
			return err
		}
		for i, it := range ch.Items {
			if _, err := tx.Exec(ctx, "INSERT INTO context_items (session_id, set_name, position, item, added_by) VALUES ($1, $2, $3, $4, $5)", sessionID, setName, i, it, who[i]); err != nil {
				return err
			}
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	if err := s.writeHistory(ctx, sessionID); err != nil {
		return nil, err
	}
	return ch, nil
}
