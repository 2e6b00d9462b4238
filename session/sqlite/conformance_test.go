package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/storetest"
)

// TestConformance runs the store conformance suite (session/storetest) on
// the SQLite store.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, openEnv)
}

// openEnv opens a new, empty SQLite store for a conformance test.
func openEnv(t *testing.T) *storetest.Env {
	dir := filepath.Join(t.TempDir(), "data")
	open := func() storetest.Store {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open().(*Store)
	return &storetest.Env{
		S:      s,
		Dir:    dir,
		Reopen: open,
		Local:  true,
		SetClock: func(s storetest.Store, now func() time.Time) {
			s.(*Store).now = now
		},
		SetSessionID: func(t *testing.T, from, to string) {
			t.Helper()
			if _, err := s.db.Exec("UPDATE sessions SET id = ? WHERE id = ?", to, from); err != nil {
				t.Fatal(err)
			}
		},
		HistoryCache: func(s storetest.Store) *session.HistoryCache { return &s.(*Store).history.Cache },
	}
}

var ctx = context.Background()
