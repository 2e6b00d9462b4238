package api

import (
	"context"
	"encoding/json"
	"time"
)

// Connection is what a door does with its connection's service beyond the
// operations (Interface): the settings its client gives, the workspace
// folders, the session in use, the live updates, a few variants of
// operations with the CLI's flags over the connection's provider. The
// service implements it; a door calls nothing else of it but StartTurn,
// Subscribe and Tools, whose types are the service's (a test keeps it so).
type Connection interface {
	// The client and its settings.
	SetClient(nameVersion, envOverride string)
	SetProvider(p Provider)
	SetCompactAt(percent int)
	SetProjectInstructions(on bool)
	SetStorageLimitMB(mb int)
	SetMCPServers(raw json.RawMessage) error
	SetWorkspaceMCPServers(raw json.RawMessage) error
	CheckProvider(ctx context.Context, p Provider) (*ProviderCheck, error)

	// The workspace and the editor's view of it.
	SetRoots(roots []string)
	Roots() []string
	WorkspaceChanged(ctx context.Context, roots, added, removed []string)
	CaptureView(ctx context.Context, id string, items []string) (skipped string)

	// The session in use.
	Current() string
	SetCurrent(id string, resumed bool)
	ResumeAtStart(ctx context.Context, id string)
	Use(ctx context.Context, id, cwd string, resumed bool) error
	Forget(id string)
	ResolveID(ctx context.Context, prefix string) (string, error)
	Session(ctx context.Context, id string) (*Session, error)
	SessionText(ctx context.Context, id string) (string, error)
	ContextState(ctx context.Context, id string) (*ContextChangedParams, error)
	AddFiles(ctx context.Context, id string, paths []string, remove bool, roots []string) (*FilesChange, error)
	ListIn(ctx context.Context, a *SessionListArgs, workspace string) (*SessionListResult, error)
	Compact(ctx context.Context, a *SessionIDArgs, p Provider) (*SessionCompactResult, error)
	RegenerateTitle(ctx context.Context, a *SessionIDArgs, p Provider) (*SessionResult, error)

	// The store.
	DataDir() string
	DiskUsage(ctx context.Context) (*DiskUsage, error)
	Prune(ctx context.Context, cutoff time.Time, dryRun bool) ([]SessionSummary, error)
	Follow(ctx context.Context, watching func() []string) error
	WaitStore(ctx context.Context) error
	WaitBackground(ctx context.Context, timeout time.Duration) bool
	Close() error
}

// FilesChange is what AddFiles changed: the relevant files now, those
// added or removed, and warnings about them.
type FilesChange struct {
	Items, Added, Removed, Warnings []string
}

// ProviderCheck is what CheckProvider found.
type ProviderCheck struct {
	API, BaseURL, Model, TitleModel string // API: APIOpenAI or APIAnthropic
	KeyEnv                          string // the variable the key is read from
	HasKey                          bool
	Models                          []string // the provider's models, when it answered
	ListErr                         error    // why it did not answer
	NoModel                         bool     // none is configured (Models: what the server offers)
}

// FolderUsage is the size of one session's folder.
type FolderUsage struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Folder string `json:"folder"`
	Size   int64  `json:"size"`
}

// DiskUsage is how much the data directory holds: the sizes of its regular
// files, symbolic links not followed.
type DiskUsage struct {
	Total    int64         `json:"total"`    // everything under the data directory
	Database int64         `json:"database"` // ctxls.db with its -wal and -shm files, and the lock file
	Sessions []FolderUsage `json:"sessions"` // each session's folder, largest first
	Other    int64         `json:"other"`    // the rest: tmp/, folders no session names
}
