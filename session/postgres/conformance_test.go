package postgres

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/storetest"
	"github.com/jackc/pgx/v5"
)

var ctx = context.Background()

// TestConformance runs the store conformance suite (session/storetest) on
// the PostgreSQL store: one throwaway cluster per test binary (see
// TestMain), a database of its own for each test.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, openEnv)
}

// openEnv opens a new, empty PostgreSQL store for a conformance test.
func openEnv(t *testing.T) *storetest.Env {
	dsn := newPGDatabase(t)
	dir := filepath.Join(t.TempDir(), "data")
	openIn := func(t *testing.T, dir string) storetest.Store {
		t.Helper()
		s, err := Open(ctx, dir, dsn)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	open := func() storetest.Store { return openIn(t, dir) }
	return &storetest.Env{
		S:      open(),
		Dir:    dir,
		Reopen: open,
		Elsewhere: func(t *testing.T) storetest.Store {
			return openIn(t, filepath.Join(t.TempDir(), "elsewhere"))
		},
		SetClock: func(s storetest.Store, now func() time.Time) {
			s.(*Store).now = now
		},
		SetSessionID: func(t *testing.T, from, to string) {
			t.Helper()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "UPDATE sessions SET id = $1 WHERE id = $2", to, from); err != nil {
				t.Fatal(err)
			}
		},
		HistoryCache: func(s storetest.Store) *session.HistoryCache { return &s.(*Store).history.Cache },
	}
}
