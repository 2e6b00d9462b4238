package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// TestPendingOpens: a store Start opens serves every call once open, as
// the store itself, and knows its data directory before.
func TestPendingOpens(t *testing.T) {
	dir := t.TempDir()
	p := Start(context.Background(), dir, "", nil)
	if p.DataDir() != dir {
		t.Errorf("DataDir %q, want %q", p.DataDir(), dir)
	}
	ctx := context.Background()
	s, err := p.Create(ctx, "First")
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := p.List(ctx, session.ListOptions{})
	if err != nil || len(list) != 1 || list[0].ID != s.ID {
		t.Errorf("list: %v %+v", err, list)
	}
	if st, err := p.Wait(ctx); err != nil || st == nil {
		t.Errorf("Wait: %v %v", st, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	// The store was closed: a second one opens the same data.
	q := Start(ctx, dir, "", nil)
	defer q.Close()
	if got, err := q.Get(ctx, s.ID); err != nil || got.Title != "First" {
		t.Errorf("reopened: %v %+v", err, got)
	}
}

// TestPendingFails: a store that cannot be opened fails every call with the
// open's error as wrap made it; a call whose context ends first returns the
// context's error.
func TestPendingFails(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	errWrapped := errors.New("wrapped")
	p := Start(context.Background(), notDir, "", func(err error) error { return errors.Join(errWrapped, err) })
	defer p.Close()
	ctx := context.Background()
	if _, err := p.Create(ctx, "x"); !errors.Is(err, errWrapped) {
		t.Errorf("create: %v", err)
	}
	if _, err := p.Search(ctx, "x", 5); !errors.Is(err, errWrapped) || !strings.Contains(err.Error(), notDir) {
		t.Errorf("search: %v", err)
	}
	if err := p.Watch(ctx, nil, nil); !errors.Is(err, errWrapped) {
		t.Errorf("watch: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("close of a store that never opened: %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	slow := &Pending{dir: notDir, cancel: func() {}, done: make(chan struct{})} // an open that has not ended
	if _, err := slow.Get(cancelled, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("get with a cancelled context while opening: %v", err)
	}
}
