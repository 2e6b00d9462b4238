package session

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// Store is the session store every caller uses: the LSP and ACP doors, the
// turn engine and its tools, the CLI. session/sqlite is the embedded
// default, session/postgres the shared one; session/backend opens the one a
// store URL names. Both pass the conformance suite in session/storetest.
//
// It is composed of one interface per concern, so a caller or a test
// double may ask for only the part it uses. Methods only tests call stay
// off it, on the backends' types (FlushHistory, AddedBy).
type Store interface {
	Sessions
	Titles
	Messages
	Turns
	ContextSets
	Folder
	Search
	Storage
	Live
	// DataDir is the data directory: the SQLite store's database and
	// session folders, the PostgreSQL store's local mirror of them.
	DataDir() string
	// Close writes pending history.md files and lets go of the database.
	Close() error
}

// Sessions creates, finds, lists, changes and deletes sessions.
type Sessions interface {
	Create(ctx context.Context, title string) (*Session, error)
	Get(ctx context.Context, id string) (*Session, error)
	List(ctx context.Context, opt ListOptions) ([]Session, string, error)
	// ResolveID turns an id or an unambiguous prefix of one into the id.
	ResolveID(ctx context.Context, prefix string) (string, error)
	Delete(ctx context.Context, id string) error
	SetModel(ctx context.Context, id, model string) (*Session, error)
	SetEnvHint(ctx context.Context, id, hint string) (bool, error)
	SetWorkspace(ctx context.Context, id, dir string) error
	// SetToolPermission records the user's standing decision about a tool
	// (ToolAllow, ToolDeny; "" forgets it) without touching the session's
	// activity.
	SetToolPermission(ctx context.Context, id, tool, decision string) error
	// SetReviewMode sets how the model's edits are reviewed (ReviewAsk,
	// ReviewAuto, ReviewOff) and returns the session; not activity.
	SetReviewMode(ctx context.Context, id, mode string) (*Session, error)
	// SetPlan replaces the session's plan (checked with ValidPlan; empty
	// clears it) and returns the plan as stored; not activity.
	SetPlan(ctx context.Context, id string, items []PlanItem) ([]PlanItem, error)
	// Share sets who sees a session: VisibilityPrivate (its owner) or
	// VisibilityTeam (every member of ctxls_user). Only the PostgreSQL
	// store shares; the local store refuses with ErrInvalid.
	Share(ctx context.Context, id string, visibility Visibility) (*Session, error)
}

// Titles names sessions: the user's renames and the automatic titles of
// the turn engine, which never override the user's.
type Titles interface {
	Rename(ctx context.Context, id, title string, source TitleSource) (*Session, error)
	SetAutoTitle(ctx context.Context, id, title string) (bool, error)
	SetTitleIfAuto(ctx context.Context, id, title string) (bool, error)
	MarkTitleRequested(ctx context.Context, id string) (bool, error)
	ClearTitleRequested(ctx context.Context, id string) error
	// FirstExchange is a session's first user message and its answer,
	// what a title is made from.
	FirstExchange(ctx context.Context, id string) (first, answer string, err error)
}

// Messages keeps a session's conversation and what a turn reads of it.
type Messages interface {
	AppendMessage(ctx context.Context, m *Message) error
	UpdateMessage(ctx context.Context, id int64, content string, status Status, usage *Usage) error
	SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error
	Messages(ctx context.Context, sessionID string) ([]Message, error)
	// ModelHistory is a session's newest summary and the messages after
	// the range it covers (what compaction reads).
	ModelHistory(ctx context.Context, sessionID string) (summary *Message, rest []Message, err error)
	// Export writes the session as "markdown" or "json" into its folder
	// and returns the file's path and content.
	Export(ctx context.Context, id, format string) (string, string, error)
}

// Turns runs a session's turns: one at a time across processes, the
// answer streaming under a heartbeat.
type Turns interface {
	// TurnState begins a turn, when user is not nil (stale answers
	// interrupted, user appended), and reads at once what the turn gives
	// the model of the session (see TurnState); with a mark (not nil),
	// only the history the caller does not hold (see HistoryMark).
	TurnState(ctx context.Context, id string, user *Message, mark *HistoryMark) (*TurnState, error)
	// LockTurn holds the session's turn lock across processes until
	// unlock is called; held elsewhere, it fails with ErrTurnElsewhere.
	// lost (nil where locks cannot be lost) is closed if the lock goes
	// away under the turn (its database connection broke).
	LockTurn(ctx context.Context, sessionID string) (unlock func(), lost <-chan struct{}, err error)
	// Heartbeat tells other processes that a streaming answer is alive.
	Heartbeat(ctx context.Context, id int64) error
}

// ContextSets keeps a session's named relevant-context sets.
type ContextSets interface {
	Context(ctx context.Context, sessionID string) (Context, error)
	// UpdateContext is the one operation that changes a set, for every
	// caller: the editor's commands, the model's tool, ACP's /add and
	// /drop, the CLI. Items of the files set are normalised first
	// (file:// URIs converted, relative paths joined to the first of
	// roots, folders refused); by is AddedByUser or AddedByModel. The
	// limits are checked and the set written in one transaction; a
	// refused change changes nothing.
	UpdateContext(ctx context.Context, sessionID, setName string, items []string, mode Mode, by string, roots []string) (*ContextChange, error)
}

// Folder keeps the files of a session's folder: the user's sources/ and
// the model's results/, scripts/ and data/.
type Folder interface {
	AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*FileInfo, error)
	AddFileFromPath(ctx context.Context, sessionID, path string) (*FileInfo, error)
	ListFiles(ctx context.Context, sessionID, sub string) ([]string, error)
	RemoveFile(ctx context.Context, sessionID, name string) error
	WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*Written, error)
	// OutputTarget checks a model's output path and gives the local file
	// a front door writes itself (ACP's fs/write_text_file).
	OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *Written, error)
	// OutputWritten records a file a front door wrote at the path
	// OutputTarget gave (nothing to do where the folder is the store).
	OutputWritten(ctx context.Context, sessionID, path string, content []byte) error
}

// Search finds messages by their words.
type Search interface {
	Search(ctx context.Context, query string, limit int) ([]Hit, error)
}

// Storage measures and bounds the data directory and removes old
// sessions.
type Storage interface {
	DiskUsage(ctx context.Context) (*DiskUsage, error)
	EnforceSoftLimit(ctx context.Context, limit int64) (*Cleanup, error)
	PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]Session, error)
	// PruneEmpty deletes the empty sessions (see EmptyAfter) with no
	// activity since cutoff, except those in keep, and returns their ids;
	// each goes only if it is still empty and that old in its delete. On
	// PostgreSQL only the role's own sessions are considered.
	PruneEmpty(ctx context.Context, cutoff time.Time, keep []string) ([]string, error)
}

// Live reports the changes other processes make.
type Live interface {
	// Watch calls fn with the changes other processes make to the
	// sessions interested accepts (and every deletion) until ctx ends
	// (PostgreSQL's live updates); a store without them returns at once.
	Watch(ctx context.Context, interested func(sessionID string) bool, fn func(Change)) error
}

// AppendAll stores messages of one session in order, filling their IDs: in
// one transaction where the store can (an AppendMessages method: the
// SQLite store), else one at a time.
func AppendAll(ctx context.Context, st Messages, ms []*Message) error {
	if b, ok := st.(interface {
		AppendMessages(context.Context, []*Message) error
	}); ok {
		return b.AppendMessages(ctx, ms)
	}
	for _, m := range ms {
		if err := st.AppendMessage(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
