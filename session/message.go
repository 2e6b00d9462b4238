package session

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ctxls/ctxls/api"
)

// Role is who wrote a message.
type Role = api.Role

// Roles (declared with the wire's, in package api).
const (
	RoleSystem    = api.RoleSystem
	RoleUser      = api.RoleUser
	RoleAssistant = api.RoleAssistant
	RoleTool      = api.RoleTool
)

// Status is how a message ended.
type Status = api.Status

// Statuses.
const (
	StatusComplete    = api.StatusComplete
	StatusInterrupted = api.StatusInterrupted
	StatusCancelled   = api.StatusCancelled
	StatusError       = api.StatusError
	StatusDeclined    = api.StatusDeclined
	StatusStreaming   = api.StatusStreaming
)

// Usage is a turn's token usage.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// CachedTokens is how much of the prompt the provider said it read from
	// its cache (OpenAI's prompt_tokens_details.cached_tokens), at a
	// discount; 0 when it said nothing.
	CachedTokens int `json:"cachedTokens,omitempty"`
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
	// Files are the files that went with a question (role "user"): the
	// ones the editor sent and those the question mentioned, absolute,
	// each with ":N" or ":N-M" when it named lines.
	Files []string `json:"files,omitempty"`
}

// Span is a range of message ids, both ends included.
type Span struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	// Covered is how many messages (summaries left out) the range holds,
	// counted by the store when the summary is stored.
	Covered int `json:"covered"`
	// Questions is how many of them are the user's questions (what people
	// count), counted with Covered.
	Questions int `json:"questions"`
}

// IsSummary reports whether m is a summary of earlier turns.
func (m *Message) IsSummary() bool { return m.SummaryOf != nil }

// MessageColumns are the columns both stores write for a new message, in
// the order of messageArgs.
const MessageColumns = "session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, model, owner, heartbeat_at, summary_first, summary_last, files"

// MessageArgs are the values of messageColumns for m, stored at now by the
// store instance owner: a streaming answer carries its owner and a first
// heartbeat.
func MessageArgs(m *Message, now int64, owner string) []any {
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
	pt, ct, _ := UsageArgs(m.Usage)
	return []any{m.SessionID, m.Role, m.Content, toolCalls, Nullable(m.ToolCallID), m.Status, now, pt, ct, Nullable(m.Model), streamOwner, heartbeat, sf, sl, FilesArg(m.Files)}
}

// FilesArg is a message's files as the stores keep them: a JSON array, or
// NULL for none.
func FilesArg(files []string) any {
	if len(files) == 0 {
		return nil
	}
	b, _ := json.Marshal(files)
	return string(b)
}

// ParseFiles reads a message's files as FilesArg wrote them (nil for
// NULL; a value that is not a JSON array of strings is none).
func ParseFiles(s *string) []string {
	if s == nil {
		return nil
	}
	var files []string
	if json.Unmarshal([]byte(*s), &files) != nil {
		return nil
	}
	return files
}

func ValidRole(r Role) bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

func ValidStatus(s Status) bool {
	switch s {
	case StatusComplete, StatusInterrupted, StatusCancelled, StatusError, StatusStreaming, StatusDeclined:
		return true
	}
	return false
}

func Nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// UsageArgs are a usage's columns (prompt, completion and cached tokens),
// NULL when there is none.
func UsageArgs(u *Usage) (pt, ct, cached any) {
	if u == nil {
		return nil, nil, nil
	}
	return u.PromptTokens, u.CompletionTokens, u.CachedTokens
}

// CheckMessage checks a message to append, defaulting its status to
// complete.
func CheckMessage(m *Message) error {
	if !ValidRole(m.Role) {
		return Invalidf("unknown role %q", m.Role)
	}
	if m.Status == "" {
		m.Status = StatusComplete
	}
	if !ValidStatus(m.Status) {
		return Invalidf("unknown status %q", m.Status)
	}
	if len(m.ToolCalls) > 0 && !json.Valid(m.ToolCalls) {
		return Invalidf("toolCalls is not valid JSON")
	}
	if sp := m.SummaryOf; sp != nil {
		if m.Role != RoleSystem {
			return Invalidf("a summary is a system message, not %q", m.Role)
		}
		if sp.First < 1 || sp.Last < sp.First {
			return Invalidf("a summary covers messages %d..%d: want 1 <= first <= last", sp.First, sp.Last)
		}
	}
	return nil
}

// StaleAfter is how old a streaming answer's heartbeat may grow before the
// answer is taken for one a killed daemon left behind. A streaming turn
// writes a checkpoint or a heartbeat at least every HeartbeatEvery.
const (
	StaleAfter     = 5 * time.Second
	HeartbeatEvery = time.Second
)

// NewOwner names a store instance: host, pid and a random part.
func NewOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), NewID()[:8])
}

// IsStale says whether a streaming answer owned by owner, with heartbeat
// hb, is one no live daemon is writing, as store self sees it at now on
// host (see interruptStale).
func IsStale(self, owner string, hb sql.NullInt64, now int64, host string) bool {
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

// FirstQuestions says what a summary of the first n questions covers, as
// people count a conversation: "the first question and its answer", "the
// first 3 questions and their answers".
func FirstQuestions(n int) string {
	if n == 1 {
		return "the first question and its answer"
	}
	return fmt.Sprintf("the first %d questions and their answers", n)
}
