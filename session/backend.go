package session

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// Store is the session store every caller uses: the LSP and ACP doors, the
// turn engine and its tools, the CLI. SQLite (Open) is the embedded default;
// a second backend implements the same interface and passes the same
// conformance tests.
type Store interface {
	AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*FileInfo, error)
	AddFileFromPath(ctx context.Context, sessionID, path string) (*FileInfo, error)
	AddedBy(ctx context.Context, sessionID, setName string) (map[string]string, error)
	AppendMessage(ctx context.Context, m *Message) error
	ClearTitleRequested(ctx context.Context, id string) error
	Close() error
	Context(ctx context.Context, sessionID string) (Context, error)
	Create(ctx context.Context, title string) (*Session, error)
	DataDir() string
	Delete(ctx context.Context, id string) error
	DiskUsage(ctx context.Context) (*DiskUsage, error)
	EnforceSoftLimit(ctx context.Context, limit int64) (*Cleanup, error)
	Export(ctx context.Context, id, format string) (string, string, error)
	FirstExchange(ctx context.Context, id string) (first, answer string, err error)
	FlushHistory() error
	Get(ctx context.Context, id string) (*Session, error)
	Heartbeat(ctx context.Context, id int64) error
	List(ctx context.Context, opt ListOptions) ([]Session, string, error)
	ListFiles(ctx context.Context, sessionID, sub string) ([]string, error)
	MarkTitleRequested(ctx context.Context, id string) (bool, error)
	Messages(ctx context.Context, sessionID string) ([]Message, error)
	ModelHistory(ctx context.Context, sessionID string) (summary *Message, rest []Message, err error)
	OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *Written, error)
	PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]Session, error)
	RemoveFile(ctx context.Context, sessionID, name string) error
	Rename(ctx context.Context, id, title string, source TitleSource) (*Session, error)
	ResolveID(ctx context.Context, prefix string) (string, error)
	Search(ctx context.Context, query string, limit int) ([]Hit, error)
	SetAutoTitle(ctx context.Context, id, title string) (bool, error)
	SetContext(ctx context.Context, sessionID, setName string, items []string, mode Mode) (*ContextChange, error)
	SetContextBy(ctx context.Context, sessionID, setName string, items []string, mode Mode, by string) (*ContextChange, error)
	SetEnvHint(ctx context.Context, id, hint string) (bool, error)
	SetModel(ctx context.Context, id, model string) (*Session, error)
	SetTitleIfAuto(ctx context.Context, id, title string) (bool, error)
	SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error
	SetWorkspace(ctx context.Context, id, dir string) error
	// Share sets who sees a session: VisibilityPrivate (its owner) or
	// VisibilityTeam (every member of ctxls_user). Only the PostgreSQL
	// store shares; the local store refuses with ErrInvalid.
	Share(ctx context.Context, id string, visibility Visibility) (*Session, error)
	// TurnState begins a turn, when user is not nil (stale answers
	// interrupted, user appended), and reads at once what the turn gives
	// the model of the session (see TurnState).
	TurnState(ctx context.Context, id string, user *Message) (*TurnState, error)
	UpdateContext(ctx context.Context, sessionID, setName string, items []string, mode Mode, by string, roots []string) (*ContextChange, error)
	UpdateMessage(ctx context.Context, id int64, content string, status Status, usage *Usage) error
	// Watch calls fn with the changes other processes make to the
	// sessions interested accepts (and every deletion) until ctx ends
	// (PostgreSQL's live updates); a store without them returns at once.
	Watch(ctx context.Context, interested func(sessionID string) bool, fn func(Change)) error
	// LockTurn holds the session's turn lock across processes until
	// unlock is called; held elsewhere, it fails with ErrTurnElsewhere.
	// lost (nil where locks cannot be lost) is closed if the lock goes
	// away under the turn (its database connection broke).
	LockTurn(ctx context.Context, sessionID string) (unlock func(), lost <-chan struct{}, err error)
	WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*Written, error)
	// OutputWritten records a file a front door wrote at the path
	// OutputTarget gave (nothing to do where the folder is the store).
	OutputWritten(ctx context.Context, sessionID, path string, content []byte) error
}
