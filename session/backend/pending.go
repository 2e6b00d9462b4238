package backend

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/ctxls/ctxls/session"
)

// Pending is a session store being opened. Start returns it at once and
// opens the store on a goroutine of its own, so that a door can answer its
// client's initialize before the store is open: each method waits until the
// open has ended (or its context is done) and then calls the store, or
// returns the open's error. The first command after start-up waits for the
// rest of the open instead of initialize waiting for all of it.
type Pending struct {
	dir    string
	cancel context.CancelFunc // ends an open still running (Close)
	done   chan struct{}      // closed when the open has ended; then store or err is set

	store session.Store
	err   error

	closeOnce sync.Once
	closeErr  error
}

// Start opens, on a goroutine of its own, the store Open would open, and
// returns at once. An error of the open goes through wrap (nil: as it is)
// and is what every method returns. The open outlives ctx's cancellation
// (the door's initialize request ends before it does) but not Close.
func Start(ctx context.Context, dataDir, url string, wrap func(error) error) *Pending {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &Pending{dir: dataDir, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		growStack()
		p.store, p.err = Open(ctx, dataDir, url)
		if p.err != nil && wrap != nil {
			p.err = wrap(p.err)
		}
	}()
	return p
}

// growStack grows the calling goroutine's stack to what opening a store
// takes, in one step while the stack is two frames deep. A new goroutine
// starts with 8 KB, and each time SQLite's deep calls outgrow it the runtime
// copies the stack, reading the stack maps of every function on it: that
// touched about 1 MB more of the binary's function tables (resident pages)
// than the same open on initialize's goroutine, whose stack had grown
// already. (cockroachdb's pkg/util/growstack grows its storage goroutines'
// stacks early the same way, for the copying's CPU time.)
//
//go:noinline
func growStack() {
	var buf [64 << 10]byte
	if growStackNever { // false, but the compiler cannot tell: buf stays on the stack
		for i := range buf {
			buf[i] = byte(i)
		}
		growStackNever = buf[len(buf)/2] == 0
	}
}

var growStackNever bool

// Wait waits until the store is open and returns it, or the open's error,
// or ctx's if it ends first.
func (p *Pending) Wait(ctx context.Context) (session.Store, error) { return p.wait(ctx) }

func (p *Pending) wait(ctx context.Context) (session.Store, error) {
	select {
	case <-p.done: // open: the store, even when ctx is done too
	default:
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p.store, p.err
}

// DataDir is the data directory, known before the store is open.
func (p *Pending) DataDir() string { return p.dir }

// Close ends an open still running, waits for it, and closes the store if
// it opened. It may be called more than once.
func (p *Pending) Close() error {
	p.closeOnce.Do(func() {
		p.cancel()
		<-p.done
		if p.store != nil {
			p.closeErr = p.store.Close()
		}
	})
	return p.closeErr
}

var _ session.Store = (*Pending)(nil)

// What follows calls the store once it is open, one method for each of
// session.Store's.

func (p *Pending) AddFile(ctx context.Context, sessionID string, name string, r io.Reader) (*session.FileInfo, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.AddFile(ctx, sessionID, name, r)
}

func (p *Pending) AddFileFromPath(ctx context.Context, sessionID string, path string) (*session.FileInfo, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.AddFileFromPath(ctx, sessionID, path)
}

func (p *Pending) AppendMessage(ctx context.Context, m *session.Message) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.AppendMessage(ctx, m)
}

// AppendMessages stores messages of one session at once (see
// session.AppendAll).
func (p *Pending) AppendMessages(ctx context.Context, ms []*session.Message) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return session.AppendAll(ctx, s, ms)
}

func (p *Pending) ClearTitleRequested(ctx context.Context, id string) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.ClearTitleRequested(ctx, id)
}

func (p *Pending) Context(ctx context.Context, sessionID string) (session.Context, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Context(ctx, sessionID)
}

func (p *Pending) Create(ctx context.Context, title string) (*session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, title)
}

func (p *Pending) Delete(ctx context.Context, id string) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.Delete(ctx, id)
}

func (p *Pending) DiskUsage(ctx context.Context) (*session.DiskUsage, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.DiskUsage(ctx)
}

func (p *Pending) EnforceSoftLimit(ctx context.Context, limit int64) (*session.Cleanup, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.EnforceSoftLimit(ctx, limit)
}

func (p *Pending) Export(ctx context.Context, id string, format string) (string, string, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return "", "", err
	}
	return s.Export(ctx, id, format)
}

func (p *Pending) FirstExchange(ctx context.Context, id string) (string, string, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return "", "", err
	}
	return s.FirstExchange(ctx, id)
}

func (p *Pending) Get(ctx context.Context, id string) (*session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

func (p *Pending) Heartbeat(ctx context.Context, id int64) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.Heartbeat(ctx, id)
}

func (p *Pending) List(ctx context.Context, opt session.ListOptions) ([]session.Session, string, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, "", err
	}
	return s.List(ctx, opt)
}

func (p *Pending) ListFiles(ctx context.Context, sessionID string, sub string) ([]string, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListFiles(ctx, sessionID, sub)
}

func (p *Pending) LockTurn(ctx context.Context, sessionID string) (func(), <-chan struct{}, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s.LockTurn(ctx, sessionID)
}

func (p *Pending) MarkTitleRequested(ctx context.Context, id string) (bool, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return false, err
	}
	return s.MarkTitleRequested(ctx, id)
}

func (p *Pending) Messages(ctx context.Context, sessionID string) ([]session.Message, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Messages(ctx, sessionID)
}

func (p *Pending) ModelHistory(ctx context.Context, sessionID string) (*session.Message, []session.Message, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s.ModelHistory(ctx, sessionID)
}

func (p *Pending) OutputTarget(ctx context.Context, sessionID string, path string, size int64) (string, *session.Written, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return "", nil, err
	}
	return s.OutputTarget(ctx, sessionID, path, size)
}

func (p *Pending) OutputWritten(ctx context.Context, sessionID string, path string, content []byte) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.OutputWritten(ctx, sessionID, path, content)
}

func (p *Pending) PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.PruneInactive(ctx, cutoff, dryRun)
}

func (p *Pending) RemoveFile(ctx context.Context, sessionID string, name string) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.RemoveFile(ctx, sessionID, name)
}

func (p *Pending) Rename(ctx context.Context, id string, title string, source session.TitleSource) (*session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Rename(ctx, id, title, source)
}

func (p *Pending) ResolveID(ctx context.Context, prefix string) (string, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return "", err
	}
	return s.ResolveID(ctx, prefix)
}

func (p *Pending) Search(ctx context.Context, query string, limit int) ([]session.Hit, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Search(ctx, query, limit)
}

func (p *Pending) SetAutoTitle(ctx context.Context, id string, title string) (bool, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return false, err
	}
	return s.SetAutoTitle(ctx, id, title)
}

func (p *Pending) SetEnvHint(ctx context.Context, id string, hint string) (bool, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return false, err
	}
	return s.SetEnvHint(ctx, id, hint)
}

func (p *Pending) SetModel(ctx context.Context, id string, model string) (*session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.SetModel(ctx, id, model)
}

func (p *Pending) SetReviewMode(ctx context.Context, id string, mode string) (*session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.SetReviewMode(ctx, id, mode)
}

func (p *Pending) SetPlan(ctx context.Context, id string, items []session.PlanItem) ([]session.PlanItem, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.SetPlan(ctx, id, items)
}

func (p *Pending) SetTitleIfAuto(ctx context.Context, id string, title string) (bool, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return false, err
	}
	return s.SetTitleIfAuto(ctx, id, title)
}

func (p *Pending) SetToolCalls(ctx context.Context, id int64, toolCalls json.RawMessage) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.SetToolCalls(ctx, id, toolCalls)
}

func (p *Pending) SetToolPermission(ctx context.Context, id string, tool string, decision string) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.SetToolPermission(ctx, id, tool, decision)
}

func (p *Pending) SetWorkspace(ctx context.Context, id string, dir string) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.SetWorkspace(ctx, id, dir)
}

func (p *Pending) Share(ctx context.Context, id string, visibility session.Visibility) (*session.Session, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.Share(ctx, id, visibility)
}

func (p *Pending) TurnState(ctx context.Context, id string, user *session.Message, held *session.HistoryMark) (*session.TurnState, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.TurnState(ctx, id, user, held)
}

func (p *Pending) UpdateContext(ctx context.Context, sessionID string, setName string, items []string, mode session.Mode, by string, roots []string) (*session.ContextChange, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.UpdateContext(ctx, sessionID, setName, items, mode, by, roots)
}

func (p *Pending) UpdateMessage(ctx context.Context, id int64, content string, status session.Status, usage *session.Usage) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.UpdateMessage(ctx, id, content, status, usage)
}

func (p *Pending) Watch(ctx context.Context, interested func(sessionID string) bool, fn func(session.Change)) error {
	s, err := p.wait(ctx)
	if err != nil {
		return err
	}
	return s.Watch(ctx, interested, fn)
}

func (p *Pending) WriteOutput(ctx context.Context, sessionID string, path string, content []byte) (*session.Written, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.WriteOutput(ctx, sessionID, path, content)
}

func (p *Pending) PruneEmpty(ctx context.Context, cutoff time.Time, keep []string) ([]string, error) {
	s, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	return s.PruneEmpty(ctx, cutoff, keep)
}
