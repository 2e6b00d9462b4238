package session

// The store conformance suite: every store test that is not about SQLite
// itself runs through forEachStore (or forEachStoreEnv) against both
// backends, as subtests "sqlite" and "postgres", using only the Store
// interface (and setClock). To run one backend only:
//
//	go test -run '.*/sqlite' ./session/
//	go test -run '.*/postgres' ./session/
//
// The PostgreSQL subtests share one throwaway cluster per test binary
// (started on first use, stopped by TestMain); each test gets a database
// of its own in it, so no test sees another's sessions. Without PostgreSQL
// installed they are skipped (and fail when CI is set, see pgtest.Need).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// storeEnv is one backend under test.
type storeEnv struct {
	// S is open on a fresh data directory (Dir, which Open or OpenPostgres
	// creates) and, for PostgreSQL, a fresh database; it is closed when the
	// test ends (Close must be harmless after a test closed it already).
	S Store
	// Dir is S's data directory.
	Dir string
	// Reopen opens another store on the same data directory and database,
	// closed when the test ends. It does not close S.
	Reopen func() Store

	dsn string // PostgreSQL: the test's database, as the superuser
}

// forEachStore runs fn as subtest "sqlite" and subtest "postgres", each with
// a new, empty store of that backend.
func forEachStore(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Helper()
	forEachStoreEnv(t, func(t *testing.T, e *storeEnv) { fn(t, e.S) })
}

// forEachStoreEnv is forEachStore for tests that need more than the store:
// its data directory, or a second store on the same data.
func forEachStoreEnv(t *testing.T, fn func(t *testing.T, e *storeEnv)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		open := func() Store {
			t.Helper()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		fn(t, &storeEnv{S: open(), Dir: dir, Reopen: open})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := newPGDatabase(t)
		dir := filepath.Join(t.TempDir(), "data")
		open := func() Store {
			t.Helper()
			s, err := OpenPostgres(ctx, dir, dsn)
			if err != nil {
				t.Fatalf("OpenPostgres: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		fn(t, &storeEnv{S: open(), Dir: dir, Reopen: open, dsn: dsn})
	})
}

// setClock sets the clock of either store.
func setClock(s Store, now func() time.Time) {
	switch s := s.(type) {
	case *SQLite:
		s.now = now
	case *Postgres:
		s.now = now
	default:
		panic(fmt.Sprintf("setClock: unknown store %T", s))
	}
}

// isSQLite reports whether s is the SQLite store, for the parts of a
// conformance test that only hold where the session folder is the store.
func isSQLite(s Store) bool {
	_, ok := s.(*SQLite)
	return ok
}

// setSessionID changes a session's id behind the store's back, straight in
// its database (tests of id prefixes need ids that share one). The session
// must have no messages, context or files yet.
func setSessionID(t *testing.T, e *storeEnv, from, to string) {
	t.Helper()
	switch s := e.S.(type) {
	case *SQLite:
		if _, err := s.db.Exec("UPDATE sessions SET id = ? WHERE id = ?", to, from); err != nil {
			t.Fatal(err)
		}
	case *Postgres:
		conn, err := pgx.Connect(ctx, e.dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "UPDATE sessions SET id = $1 WHERE id = $2", to, from); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("setSessionID: unknown store %T", s)
	}
}

// pgShared is the PostgreSQL cluster the test binary's tests share.
var pgShared struct {
	once    sync.Once
	cluster *pgtest.Cluster
	stop    func() error
	err     error
	dbs     atomic.Int64
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgShared.stop != nil {
		if err := pgShared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the shared PostgreSQL cluster:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// newPGDatabase makes a database of the test's own in the shared cluster
// (starting the cluster on first use), runs InitPostgres on it and returns
// its DSN for the superuser. The database is dropped when the test ends.
func newPGDatabase(t testing.TB) string {
	t.Helper()
	return pgShared.cluster.DSN("", newPGDatabaseNamed(t))
}

// newPGDatabaseNamed is newPGDatabase, returning the database's name.
func newPGDatabaseNamed(t testing.TB) string {
	t.Helper()
	pgShared.once.Do(func() {
		pgShared.cluster, pgShared.stop, pgShared.err = pgtest.Launch()
	})
	pgtest.Need(t, pgShared.err)
	c := pgShared.cluster
	name := fmt.Sprintf("t_%d", pgShared.dbs.Add(1))
	admin := func(sql string) error {
		conn, err := pgx.Connect(ctx, c.DSN("", "postgres"))
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	// Registered before the store's Close, so it runs after it; FORCE ends
	// connections a store left open.
	t.Cleanup(func() {
		if err := admin("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	if applied, err := InitPostgres(ctx, c.DSN("", name)); err != nil || len(applied) == 0 {
		t.Fatalf("InitPostgres on %s: %v %v", name, applied, err)
	}
	return name
}

// TestShare: on PostgreSQL a session's owner shares it with the team and
// takes it back; the local store refuses to share, naming PostgreSQL.
func TestShare(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		a, err := s.Create(ctx, "Shared")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Share(ctx, "nosuchsession", VisibilityTeam); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown session: %v", err)
		}
		if isSQLite(s) {
			if a.Owner != "" || a.Visibility != "" {
				t.Errorf("a local session has owner %q, visibility %q", a.Owner, a.Visibility)
			}
			if _, err := s.Share(ctx, a.ID, VisibilityTeam); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "PostgreSQL") {
				t.Errorf("Share on the local store: %v", err)
			}
			return
		}
		if a.Owner == "" || a.Visibility != VisibilityPrivate {
			t.Errorf("new session: owner %q, visibility %q", a.Owner, a.Visibility)
		}
		got, err := s.Share(ctx, a.ID, VisibilityTeam)
		if err != nil || got.ID != a.ID || got.Visibility != VisibilityTeam || got.Owner != a.Owner {
			t.Fatalf("Share team: %+v %v", got, err)
		}
		if got, err := s.Get(ctx, a.ID); err != nil || got.Visibility != VisibilityTeam {
			t.Errorf("Get after sharing: %+v %v", got, err)
		}
		if list, _, err := s.List(ctx, ListOptions{}); err != nil || len(list) != 1 || list[0].Visibility != VisibilityTeam {
			t.Errorf("List after sharing: %+v %v", list, err)
		}
		for _, bad := range []Visibility{"", "public"} {
			if _, err := s.Share(ctx, a.ID, bad); !errors.Is(err, ErrInvalid) {
				t.Errorf("Share(%q): %v", bad, err)
			}
		}
		if got, err := s.Share(ctx, a.ID, VisibilityPrivate); err != nil || got.Visibility != VisibilityPrivate {
			t.Errorf("Share private: %+v %v", got, err)
		}
	})
}
