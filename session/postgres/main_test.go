package postgres

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/internal/testmain"
	"github.com/jackc/pgx/v5"
)

// pgShared is the PostgreSQL cluster the test binary's tests share.
var pgShared struct {
	once    sync.Once
	cluster *pgtest.Cluster
	stop    func() error
	err     error
	dbs     atomic.Int64
	// initMu: Init of two databases at once can collide on the cluster's
	// roles (duplicate key in pg_authid), so the parallel tests take turns.
	initMu sync.Mutex
}

// TestMain runs up to 4 tests at once (they mostly wait on the database
// server), then stops the shared cluster.
func TestMain(m *testing.M) {
	code := testmain.Run(m, 4)
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
	name := newPGDatabaseBare(t)
	c := pgShared.cluster
	pgShared.initMu.Lock()
	applied, err := Init(ctx, c.DSN("", name))
	pgShared.initMu.Unlock()
	if err != nil || len(applied) == 0 {
		t.Fatalf("InitPostgres on %s: %v %v", name, applied, err)
	}
	return name
}

// newPGDatabaseBare makes an empty database of the test's own in the
// shared cluster (no Init), dropped when the test ends, and returns its
// name.
func newPGDatabaseBare(t testing.TB) string {
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
	return name
}
