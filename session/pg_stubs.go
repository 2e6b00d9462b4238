package session

// Stubs of the PostgreSQL store, replaced method by method (issue 13).

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"
)

var errPGTodo = errors.New("not implemented on PostgreSQL yet")

var (
	_ = json.Valid
	_ io.Reader
	_ time.Time
)

func (s *Postgres) AddFile(ctx context.Context, sessionID, name string, r io.Reader) (*FileInfo, error) {
	return nil, errPGTodo
}

func (s *Postgres) AddFileFromPath(ctx context.Context, sessionID, path string) (*FileInfo, error) {
	return nil, errPGTodo
}

func (s *Postgres) AddedBy(ctx context.Context, sessionID, setName string) (map[string]string, error) {
	return nil, errPGTodo
}

func (s *Postgres) AppendMessage(ctx context.Context, m *Message) error { return errPGTodo }

func (s *Postgres) ClearTitleRequested(ctx context.Context, id string) error { return errPGTodo }

func (s *Postgres) Close() error { return errPGTodo }

func (s *Postgres) Context(ctx context.Context, sessionID string) (Context, error) {
	return nil, errPGTodo
}

func (s *Postgres) Create(ctx context.Context, title string) (*Session, error) { return nil, errPGTodo }

func (s *Postgres) DataDir() string { return s.dir }

func (s *Postgres) Delete(ctx context.Context, id string) error { return errPGTodo }

func (s *Postgres) DiskUsage(ctx context.Context) (*DiskUsage, error) { return nil, errPGTodo }

func (s *Postgres) EnforceSoftLimit(ctx context.Context, limit int64) (*Cleanup, error) {
	return nil, errPGTodo
}

func (s *Postgres) Export(ctx context.Context, id, format string) (string, string, error) {
	return "", "", errPGTodo
}

func (s *Postgres) FirstExchange(ctx context.Context, id string) (string, string, error) { return "", "", errPGTodo }

func (s *Postgres) FlushHistory() error { return errPGTodo }

func (s *Postgres) Get(ctx context.Context, id string) (*Session, error) { return nil, errPGTodo }

func (s *Postgres) Heartbeat(ctx context.Context, id int64) error { return errPGTodo }

func (s *Postgres) InterruptStale(ctx context.Context, sessionID string) error { return errPGTodo }

func (s *Postgres) List(ctx context.Context, opt ListOptions) ([]Session, string, error) {
	return nil, "", errPGTodo
}

func (s *Postgres) ListFiles(ctx context.Context, sessionID, sub string) ([]string, error) {
	return nil, errPGTodo
}

func (s *Postgres) MarkTitleRequested(ctx context.Context, id string) (bool, error) {
	return false, errPGTodo
}

func (s *Postgres) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	return nil, errPGTodo
}

func (s *Postgres) OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *Written, error) {
	return "", nil, errPGTodo
}

func (s *Postgres) PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]Session, error) {
	return nil, errPGTodo
}

func (s *Postgres) RemoveFile(ctx context.Context, sessionID, name string) error { return errPGTodo }

func (s *Postgres) Rename(ctx context.Context, id, title string, source TitleSource) (*Session, error) {
	return nil, errPGTodo
}

func (s *Postgres) ResolveID(ctx context.Context, prefix string) (string, error) {
	return "", errPGTodo
}

func (s *Postgres) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	return nil, errPGTodo
}

func (s *Postgres) SetAutoTitle(ctx context.Context, id, title string) (bool, error) {
	return false, errPGTodo
}

func (s *Postgres) SetContext(ctx context.Context, sessionID, setName string, items []string, mode Mode) (*ContextChange, error) {
	return nil, errPGTodo
}

func (s *Postgres) SetContextBy(ctx context.Context, sessionID, setName string, items []string, mode Mode, by string) (*ContextChange, error) {
	return nil, errPGTodo
}

func (s *Postgres) SetEnvHint(ctx context.Context, id, hint string) (bool, error) {
	return false, errPGTodo
}

func (s *Postgres) SetModel(ctx context.Context, id, model string) (*Session, error) {
	return nil, errPGTodo
}

func (s *Postgres) SetTitleIfAuto(ctx context.Context, id, title string) (bool, error) {
	return false, errPGTodo
}

func (s *Postgres) SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error {
	return errPGTodo
}

func (s *Postgres) SetWorkspace(ctx context.Context, id, dir string) error { return errPGTodo }

func (s *Postgres) UpdateContext(ctx context.Context, sessionID, setName string, items []string, mode Mode, by string, roots []string) (*ContextChange, error) {
	return nil, errPGTodo
}

func (s *Postgres) UpdateMessage(ctx context.Context, id int64, content string, status Status, usage *Usage) error {
	return errPGTodo
}

func (s *Postgres) WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*Written, error) {
	return nil, errPGTodo
}

func (s *Postgres) Share(ctx context.Context, id string, visibility Visibility) (*Session, error) {
	return nil, errPGTodo
}

func (s *Postgres) OutputWritten(ctx context.Context, sessionID, path string, content []byte) error {
	return errPGTodo
}
