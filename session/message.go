package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
}

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
func (s *Store) AppendMessage(ctx context.Context, m *Message) error {
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
	now := s.millis()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.touch(ctx, tx, m.SessionID); err != nil {
			return err
		}
		var toolCalls any
		if len(m.ToolCalls) > 0 {
			toolCalls = string(m.ToolCalls)
		}
		pt, ct := usageArgs(m.Usage)
		res, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.SessionID, m.Role, m.Content, toolCalls, nullable(m.ToolCallID), m.Status, now, pt, ct, nullable(m.Model))
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

// UpdateMessage replaces a message's content, status and usage (streaming
// checkpoints and the final state).
func (s *Store) UpdateMessage(ctx context.Context, id int64, content string, status Status, usage *Usage) error {
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
			prompt_tokens = coalesce(?, prompt_tokens), completion_tokens = coalesce(?, completion_tokens) WHERE id = ?`,
			content, status, pt, ct, id); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return err
	}
	return s.historyLater(ctx, sessionID)
}

// InterruptStale marks a session's messages still "streaming" as
// "interrupted": called when a new turn starts, they can only be left over
// from a daemon that died mid-stream.
func (s *Store) InterruptStale(ctx context.Context, sessionID string) error {
	// Almost always there are none: look first, without the write lock.
	var stale bool
	if err := s.db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = ? AND status = 'streaming')", sessionID).Scan(&stale); err != nil || !stale {
		return err
	}
	_, err := s.exec(ctx, "UPDATE messages SET status = 'interrupted' WHERE session_id = ? AND status = 'streaming'", sessionID)
	return err
}

// SetToolCalls records the tool calls an assistant message made.
func (s *Store) SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error {
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
func (s *Store) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, err
	}
	return loadMessages(ctx, s.db, sessionID)
}

// loadMessages reads a session's messages through q, oldest first.
func loadMessages(ctx context.Context, q querier, sessionID string) ([]Message, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model
		FROM messages WHERE session_id = ? ORDER BY id`, sessionID)
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
		)
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Role, &m.Content, &toolCalls, &toolCallID, &m.Status, &created, &pt, &ct, &model); err != nil {
			return nil, err
		}
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
func (s *Store) folderOf(ctx context.Context, id string) (string, error) {
	var folder string
	if err := s.db.QueryRowContext(ctx, "SELECT folder FROM sessions WHERE id = ?", id).Scan(&folder); err != nil {
		if err == sql.ErrNoRows {
			return "", notFound(id)
		}
		return "", err
	}
	return s.folderPath(folder), nil
}
