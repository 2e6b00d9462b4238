package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ctxls/ctxls/session"
)

// spanOf is the SummaryOf of scanned summary_first, summary_last,
// summary_count and summary_questions columns (nil when they are NULL).
func spanOf(first, last, count, questions sql.NullInt64) *session.Span {
	if !first.Valid || !last.Valid {
		return nil
	}
	return &session.Span{First: first.Int64, Last: last.Int64, Covered: int(count.Int64), Questions: int(questions.Int64)}
}

// coveredSQL counts the messages, summaries left out, of a session with
// ids in a range, and the user's questions among them: what a summary over
// that range covers. (The PostgreSQL store counts them in its insert.)
const coveredSQL = "SELECT count(*), coalesce(sum(role = 'user'), 0) FROM messages WHERE session_id = ? AND id BETWEEN ? AND ? AND summary_first IS NULL"

// AppendMessage stores m, filling its ID and CreatedAt, and keeps
// history.md current.
func (s *Store) AppendMessage(ctx context.Context, m *session.Message) error {
	return s.AppendMessages(ctx, []*session.Message{m})
}

// AppendMessages stores messages of one session in order, in one
// transaction (all or none), filling their IDs and CreatedAt: what an
// import, or a test's long session, costs once instead of per message (each
// commit flushes the search index).
func (s *Store) AppendMessages(ctx context.Context, ms []*session.Message) error {
	if len(ms) == 0 {
		return nil
	}
	for _, m := range ms {
		if err := session.CheckMessage(m); err != nil {
			return err
		}
		if m.SessionID != ms[0].SessionID {
			return session.Invalidf("messages of two sessions, %q and %q, appended at once", ms[0].SessionID, m.SessionID)
		}
	}
	now := s.millis()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.touch(ctx, tx, ms[0].SessionID); err != nil {
			return err
		}
		for _, m := range ms {
			var count, questions any
			if sp := m.SummaryOf; sp != nil {
				if err := tx.QueryRowContext(ctx, coveredSQL, m.SessionID, sp.First, sp.Last).Scan(&sp.Covered, &sp.Questions); err != nil {
					return err
				}
				count, questions = sp.Covered, sp.Questions
			}
			res, err := tx.ExecContext(ctx, "INSERT INTO messages ("+session.MessageColumns+", summary_count, summary_questions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				append(session.MessageArgs(m, now, s.owner), count, questions)...)
			if err != nil {
				return err
			}
			if m.ID, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range ms {
		m.CreatedAt = session.FromMillis(now)
	}
	return s.historyLater(ctx, ms[0].SessionID)
}

// UpdateMessage replaces a message's content, status and usage (streaming
// checkpoints and the final state).
func (s *Store) UpdateMessage(ctx context.Context, id int64, content string, status session.Status, usage *session.Usage) error {
	if !session.ValidStatus(status) {
		return session.Invalidf("unknown status %q", status)
	}
	var sessionID string
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT session_id FROM messages WHERE id = ?", id).Scan(&sessionID); err != nil {
			if err == sql.ErrNoRows {
				return fmt.Errorf("message %d: %w", id, session.ErrNotFound)
			}
			return err
		}
		pt, ct, cached := session.UsageArgs(usage)
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, status = ?,
			prompt_tokens = coalesce(?, prompt_tokens), completion_tokens = coalesce(?, completion_tokens),
			cached_tokens = coalesce(?, cached_tokens), heartbeat_at = ? WHERE id = ?`,
			content, status, pt, ct, cached, s.millis(), id); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return err
	}
	return s.historyLater(ctx, sessionID)
}

// interruptStale marks stale "streaming" answers of one session (or of all,
// with sessionID "") as "interrupted". An answer is stale when it has no
// owner or heartbeat (written before they were recorded), when this store
// owns it, when its owner's process is gone from this host, or when its
// heartbeat is older than StaleAfter. Answers of a live daemon on the same
// data directory are left alone.
func (s *Store) interruptStale(ctx context.Context, sessionID string) error {
	query := "SELECT id, owner, heartbeat_at FROM messages WHERE status = 'streaming'"
	var args []any
	if sessionID != "" {
		query += " AND session_id = ?"
		args = append(args, sessionID)
	}
	// Almost always there are none: look first, without the write lock.
	stale, err := s.staleStreaming(ctx, s.db, query, args)
	if err != nil || len(stale) == 0 {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		stale, err := s.staleStreaming(ctx, tx, query, args) // again, under the lock
		if err != nil {
			return err
		}
		for _, id := range stale {
			if _, err := tx.ExecContext(ctx, "UPDATE messages SET status = 'interrupted' WHERE id = ? AND status = 'streaming'", id); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) staleStreaming(ctx context.Context, q querier, query string, args []any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	host, _ := os.Hostname()
	now := s.millis()
	var stale []int64
	for rows.Next() {
		var (
			id    int64
			owner sql.NullString
			hb    sql.NullInt64
		)
		if err := rows.Scan(&id, &owner, &hb); err != nil {
			return nil, err
		}
		if s.isStale(owner.String, hb, now, host) {
			stale = append(stale, id)
		}
	}
	return stale, rows.Err()
}

func (s *Store) isStale(owner string, hb sql.NullInt64, now int64, host string) bool {
	return session.IsStale(s.owner, owner, hb, now, host)
}

// Heartbeat records that a streaming answer's turn is alive, without
// changing its text (a provider pause).
func (s *Store) Heartbeat(ctx context.Context, id int64) error {
	res, err := s.exec(ctx, "UPDATE messages SET heartbeat_at = ? WHERE id = ? AND status = 'streaming'", s.millis(), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("message %d: %w", id, session.ErrNotFound)
	}
	return nil
}

// SetToolCalls records the tool calls an assistant message made.
func (s *Store) SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error {
	if !json.Valid(toolCalls) {
		return session.Invalidf("toolCalls is not valid JSON")
	}
	res, err := s.exec(ctx, "UPDATE messages SET tool_calls = ? WHERE id = ?", string(toolCalls), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("message %d: %w", id, session.ErrNotFound)
	}
	return nil
}

// Messages returns a session's messages, oldest first.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]session.Message, error) {
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, err
	}
	return loadMessages(ctx, s.db, sessionID)
}

// ModelHistory returns what a turn gives the model of a session: its
// newest summary (nil when it has none) and the messages after the range
// that summary covers, summaries left out, oldest first. Only those are
// read, so once a long session is compacted a turn costs what a short one
// does.
func (s *Store) ModelHistory(ctx context.Context, sessionID string) (*session.Message, []session.Message, error) {
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, nil, err
	}
	summary, rest, _, err := s.modelHistorySince(ctx, sessionID, nil)
	return summary, rest, err
}

// modelHistorySince is ModelHistory less what mark says the caller holds
// (see session.HistoryMark): since is mark.Through when it held.
func (s *Store) modelHistorySince(ctx context.Context, sessionID string, mark *session.HistoryMark) (summary *session.Message, rest []session.Message, since int64, err error) {
	newest, err := queryMessages(ctx, s.db, "session_id = ? AND summary_first IS NOT NULL ORDER BY id DESC LIMIT 1", sessionID)
	if err != nil {
		return nil, nil, 0, err
	}
	summary, after := session.ViewStart(newest)
	if mark != nil && mark.Summary == session.SummaryID(summary) && mark.Through >= after {
		// Read from the last message the caller holds, to see that it is
		// still there: a Rewind may have removed it (ids are never reused).
		rest, err = queryMessages(ctx, s.db, "session_id = ? AND id >= ? AND summary_first IS NULL ORDER BY id", sessionID, mark.Through)
		if err != nil || (len(rest) > 0 && rest[0].ID == mark.Through) {
			return summary, rest[min(1, len(rest)):], mark.Through, err
		}
	}
	rest, err = queryMessages(ctx, s.db, "session_id = ? AND id > ? AND summary_first IS NULL ORDER BY id", sessionID, after)
	return summary, rest, 0, err
}

// loadMessages reads a session's messages through q, oldest first.
func loadMessages(ctx context.Context, q querier, sessionID string) ([]session.Message, error) {
	return queryMessages(ctx, q, "session_id = ? ORDER BY id", sessionID)
}

// queryMessages reads the messages that where (a condition and an order)
// selects through q.
func queryMessages(ctx context.Context, q querier, where string, args ...any) ([]session.Message, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model, summary_first, summary_last, summary_count, summary_questions, cached_tokens, files
		FROM messages WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []session.Message{}
	for rows.Next() {
		var (
			m          session.Message
			toolCalls  sql.NullString
			toolCallID sql.NullString
			created    int64
			pt, ct, ca sql.NullInt64
			model      sql.NullString
			sf, sl, sc sql.NullInt64
			sq         sql.NullInt64
			files      *string
		)
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Role, &m.Content, &toolCalls, &toolCallID, &m.Status, &created, &pt, &ct, &model, &sf, &sl, &sc, &sq, &ca, &files); err != nil {
			return nil, err
		}
		m.SummaryOf = spanOf(sf, sl, sc, sq)
		if toolCalls.Valid {
			m.ToolCalls = json.RawMessage(toolCalls.String)
		}
		m.ToolCallID = toolCallID.String
		m.Model = model.String
		m.Files = session.ParseFiles(files)
		m.CreatedAt = session.FromMillis(created)
		if pt.Valid || ct.Valid {
			m.Usage = &session.Usage{PromptTokens: int(pt.Int64), CompletionTokens: int(ct.Int64), CachedTokens: int(ca.Int64)}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// folderOf returns the absolute folder of a session.
func (s *Store) folderOf(ctx context.Context, id string) (string, error) {
	var folder string
	if err := s.db.QueryRowContext(ctx, "SELECT folder FROM sessions WHERE id = ?", id).Scan(&folder); err != nil {
		if err == sql.ErrNoRows {
			return "", session.NotFound(id)
		}
		return "", err
	}
	return s.folderPath(folder), nil
}
