package service

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
)

// heldGet is a store whose Get, once armed, reads and then waits for
// release before it returns: a live update's read overtaken by a change.
type heldGet struct {
	session.Store
	armed   chan struct{} // closed by the test: hold the next Get
	read    chan struct{} // closed when the held Get has read
	release chan struct{}
	once    sync.Once
}

func (h *heldGet) Get(ctx context.Context, id string) (*session.Session, error) {
	sess, err := h.Store.Get(ctx, id)
	select {
	case <-h.armed:
		held := false
		h.once.Do(func() { held = true })
		if held {
			close(h.read)
			<-h.release
		}
	default:
	}
	return sess, err
}

// TestLiveTitleNeverOvertakesANewerOne: a live update (the store watched
// for other daemons' changes, which also sees this one's) reads a
// session's first-line title; before it publishes it, the model's title
// is stored and announced. The last title the doors hear is the model's,
// not the stale one read before it (a client then kept the first line:
// TestEmacs/path/ask in CI).
func TestLiveTitleNeverOvertakesANewerOne(t *testing.T) {
	t.Parallel()
	inner, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &heldGet{Store: inner, armed: make(chan struct{}), read: make(chan struct{}), release: make(chan struct{})}
	s := open(t, st, api.Provider{})
	ctx := context.Background()
	sess, err := inner.Create(ctx, "why does login redirect twice")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var titles []string
	s.Subscribe(func(ev Update) {
		if u, ok := ev.(SessionUpdated); ok && u.SessionID == sess.ID && u.Title != "" {
			mu.Lock()
			titles = append(titles, u.Title)
			mu.Unlock()
		}
	})

	close(st.armed)
	live := make(chan struct{})
	go func() { defer close(live); s.liveSession(ctx, sess.ID) }()
	<-st.read // the live update has read the first-line title

	named := make(chan struct{})
	go func() {
		defer close(named)
		renamed, err := inner.Rename(ctx, sess.ID, "Login redirect loop", session.TitleModel)
		if err != nil {
			t.Error(err)
			return
		}
		s.titleChanged(renamed) // as the turn announces the model's title
	}()
	// Give the announcement its chance to go first, as it did in CI.
	select {
	case <-named:
	case <-time.After(200 * time.Millisecond):
	}
	close(st.release)
	<-live
	<-named

	mu.Lock()
	defer mu.Unlock()
	if len(titles) == 0 || titles[len(titles)-1] != "Login redirect loop" {
		t.Fatalf("the titles published, in order: %q; the last must be the model's", titles)
	}
}
