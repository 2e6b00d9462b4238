package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Role is who wrote a message.
type Role string

// Roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Status is how a message ended.
type Status string

// Statuses.
const (
	StatusComplete    Status = "complete"
	StatusInterrupted Status = "interrupted"
	StatusError       Status = "error"
	StatusStreaming   Status = "streaming"
)

// Usage is a turn's token usage.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// Message is one message of a session.
type Message struct {
	ID         int64           `json:"id"`
	SessionID  string          `json:"sessionId"`
	Role       Role            `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  json.RawMessage `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Status     Status          `json:"status"`
	CreatedAt  time.Time       `json:"createdAt"`
	Usage      *Usage          `json:"usage,omitempty"`
	Model      string          `json:"model,omitempty"` // the model that wrote an answer
	// SummaryOf is set on a summary of earlier turns (role "system"): the
	// ids of the first and last message it covers. See ModelHistory.
	SummaryOf *Span `json:"summaryOf,omitempty"`
}

// Span is a range of message ids, both ends included.
type Span struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	// Covered is how many messages (summaries left out) the range holds,
	// counted by the store when the summary is stored.
	Covered int `json:"covered"`
}

// IsSummary reports whether m is a summary of earlier turns.
func (m *Message) IsSummary() bool { return m.SummaryOf != nil }

// messageColumns are the columns both stores write for a new message, in
// the order of messageArgs.
const messageColumns = "session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model, owner, heartbeat_at, summary_first, summary_last"

// messageArgs are the values of messageColumns for m, stored at now by the
// store instance owner: a streaming answer carries its owner and a first
// heartbeat.
func messageArgs(m *Message, now int64, owner string) []any {
	var toolCalls, streamOwner, heartbeat, sf, sl any
	if len(m.ToolCalls) > 0 {
		toolCalls = string(m.ToolCalls)
	}
	if m.Status == StatusStreaming {
		streamOwner, heartbeat = owner, now
	}
	if m.SummaryOf != nil {
		sf, sl = m.SummaryOf.First, m.SummaryOf.Last
	}
	pt, ct := usageArgs(m.Usage)
	return []any{m.SessionID, m.Role, m.Content, toolCalls, nullable(m.ToolCallID), m.Status, now, pt, ct, nullable(m.Model), streamOwner, heartbeat, sf, sl}
}

// spanOf is the SummaryOf of scanned summary_first, summary_last and
// summary_count columns (nil when they are NULL).
func spanOf(first, last, count sql.NullInt64) *Span {
	if !first.Valid || !last.Valid {
		return nil
	}
	return &Span{First: first.Int64, Last: last.Int64, Covered: int(count.Int64)}
}

// coveredSQL counts the messages, summaries left out, of a session with
// ids in a range: what a summary over that range covers. (The PostgreSQL
// store counts them in its insert.)
const coveredSQL = "SELECT count(*) FROM messages WHERE session_id = ? AND id BETWEEN ? AND ? AND summary_first IS NULL"

func validRole(r Role) bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

func validStatus(s Status) bool {
	switch s {
	case StatusComplete, StatusInterrupted, StatusError, StatusStreaming:
		return true
	}
	return false
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func usageArgs(u *Usage) (any, any) {
	if u == nil {
		return nil, nil
	}
	return u.PromptTokens, u.CompletionTokens
}

// AppendMessage stores m, filling its ID and CreatedAt, and keeps
// history.md current.
func (s *SQLite) AppendMessage(ctx context.Context, m *Message) error {
	if err := checkMessage(m); err != nil {
		return err
	}
	now := s.millis()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.touch(ctx, tx, m.SessionID); err != nil {
			return err
		}
		var count any
		if sp := m.SummaryOf; sp != nil {
			if err := tx.QueryRowContext(ctx, coveredSQL, m.SessionID, sp.First, sp.Last).Scan(&sp.Covered); err != nil {
				return err
			}
			count = sp.Covered
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO messages ("+messageColumns+", summary_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			append(messageArgs(m, now, s.owner), count)...)
		if err != nil {
			return err
		}
		m.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return err
	}
	m.CreatedAt = fromMillis(now)
	return s.historyLater(ctx, m.SessionID)
}

// checkMessage checks a message to append, defaulting its status to
// complete.
func checkMessage(m *Message) error {
	if !validRole(m.Role) {
		return invalid("unknown role %q", m.Role)
	}
	if m.Status == "" {
		m.Status = StatusComplete
	}
	if !validStatus(m.Status) {
		return invalid("unknown status %q", m.Status)
	}
	if len(m.ToolCalls) > 0 && !json.Valid(m.ToolCalls) {
		return invalid("toolCalls is not valid JSON")
	}
	if sp := m.SummaryOf; sp != nil {
		if m.Role != RoleSystem {
			return invalid("a summary is a system message, not %q", m.Role)
		}
		if sp.First < 1 || sp.Last < sp.First {
			return invalid("a summary covers messages %d..%d: want 1 <= first <= last", sp.First, sp.Last)
		}
	}
	return nil
}

// UpdateMessage replaces a message's content, status and usage (streaming
// checkpoints and the final state).
func (s *SQLite) UpdateMessage(ctx context.Context, id int64, content string, status Status, usage *Usage) error {
	if !validStatus(status) {
		return invalid("unknown status %q", status)
	}
	var sessionID string
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT session_id FROM messages WHERE id = ?", id).Scan(&sessionID); err != nil {
			if err == sql.ErrNoRows {
				return fmt.Errorf("message %d: %w", id, ErrNotFound)
			}
			return err
		}
		pt, ct := usageArgs(usage)
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, status = ?,
			prompt_tokens = coalesce(?, prompt_tokens), completion_tokens = coalesce(?, completion_tokens), heartbeat_at = ? WHERE id = ?`,
			content, status, pt, ct, s.millis(), id); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return err
	}
	return s.historyLater(ctx, sessionID)
}

// StaleAfter is how old a streaming answer's heartbeat may grow before the
// answer is taken for one a killed daemon left behind. A streaming turn
// writes a checkpoint or a heartbeat at least every HeartbeatEvery.
const (
	StaleAfter     = 5 * time.Second
	HeartbeatEvery = time.Second
)

// newOwner names a store instance: host, pid and a random part.
func newOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), newID()[:8])
}

// interruptStale marks stale "streaming" answers of one session (or of all,
// with sessionID "") as "interrupted". An answer is stale when it has no
// owner or heartbeat (written before they were recorded), when this store
// owns it, when its owner's process is gone from this host, or when its
// heartbeat is older than StaleAfter. Answers of a live daemon on the same
// data directory are left alone.
func (s *SQLite) interruptStale(ctx context.Context, sessionID string) error {
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

func (s *SQLite) staleStreaming(ctx context.Context, q querier, query string, args []any) ([]int64, error) {
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

func (s *SQLite) isStale(owner string, hb sql.NullInt64, now int64, host string) bool {
	return isStale(s.owner, owner, hb, now, host)
}

// isStale says whether a streaming answer owned by owner, with heartbeat
// hb, is one no live daemon is writing, as store self sees it at now on
// host (see interruptStale).
func isStale(self, owner string, hb sql.NullInt64, now int64, host string) bool {
	if owner == "" || !hb.Valid || owner == self || now-hb.Int64 > StaleAfter.Milliseconds() {
		return true
	}
	parts := strings.SplitN(owner, "/", 3)
	if len(parts) == 3 && parts[0] == host {
		if pid, err := strconv.Atoi(parts[1]); err == nil && !processAlive(pid) {
			return true
		}
	}
	return false
}

// Heartbeat records that a streaming answer's turn is alive, without
// changing its text (a provider pause).
func (s *SQLite) Heartbeat(ctx context.Context, id int64) error {
	res, err := s.exec(ctx, "UPDATE messages SET heartbeat_at = ? WHERE id = ? AND status = 'streaming'", s.millis(), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("message %d: %w", id, ErrNotFound)
	}
	return nil
}

// SetToolCalls records the tool calls an assistant message made.
func (s *SQLite) SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error {
	if !json.Valid(toolCalls) {
		return invalid("toolCalls is not valid JSON")
	}
	res, err := s.exec(ctx, "UPDATE messages SET tool_calls = ? WHERE id = ?", string(toolCalls), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("message %d: %w", id, ErrNotFound)
	}
	return nil
}

// Messages returns a session's messages, oldest first.
func (s *SQLite) Messages(ctx context.Context, sessionID string) ([]Message, error) {
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
func (s *SQLite) ModelHistory(ctx context.Context, sessionID string) (*Message, []Message, error) {
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, nil, err
	}
	newest, err := queryMessages(ctx, s.db, "session_id = ? AND summary_first IS NOT NULL ORDER BY id DESC LIMIT 1", sessionID)
	if err != nil {
		return nil, nil, err
	}
	summary, after := viewStart(newest)
	rest, err := queryMessages(ctx, s.db, "session_id = ? AND id > ? AND summary_first IS NULL ORDER BY id", sessionID, after)
	return summary, rest, err
}

// loadMessages reads a session's messages through q, oldest first.
func loadMessages(ctx context.Context, q querier, sessionID string) ([]Message, error) {
	return queryMessages(ctx, q, "session_id = ? ORDER BY id", sessionID)
}

// queryMessages reads the messages that where (a condition and an order)
// selects through q.
func queryMessages(ctx context.Context, q querier, where string, args ...any) ([]Message, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model, summary_first, summary_last, summary_count
		FROM messages WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		var (
			m          Message
			toolCalls  sql.NullString
			toolCallID sql.NullString
			created    int64
			pt, ct     sql.NullInt64
			model      sql.NullString
			sf, sl, sc sql.NullInt64
		)
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Role, &m.Content, &toolCalls, &toolCallID, &m.Status, &created, &pt, &ct, &model, &sf, &sl, &sc); err != nil {
			return nil, err
		}
		m.SummaryOf = spanOf(sf, sl, sc)
		if toolCalls.Valid {
			m.ToolCalls = json.RawMessage(toolCalls.String)
		}
		m.ToolCallID = toolCallID.String
		m.Model = model.String
		m.CreatedAt = fromMillis(created)
		if pt.Valid || ct.Valid {
			m.Usage = &Usage{PromptTokens: int(pt.Int64), CompletionTokens: int(ct.Int64)}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// folderOf returns the absolute folder of a session.
func (s *SQLite) folderOf(ctx context.Context, id string) (string, error) {
	var folder string
	if err := s.db.QueryRowContext(ctx, "SELECT folder FROM sessions WHERE id = ?", id).Scan(&folder); err != nil {
		if err == sql.ErrNoRows {
			return "", notFound(id)
		}
		return "", err
	}
	return s.folderPath(folder), nil
}
