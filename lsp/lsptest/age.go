package lsptest

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// AgeSessions moves the last activity (and creation) of the sessions ids
// of the SQLite store in dataDir back by age, straight in its database:
// what a session left alone that long looks like. No daemon may have the
// store open.
func AgeSessions(t testing.TB, dataDir string, age time.Duration, ids ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "ctxls.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range ids {
		res, err := db.Exec("UPDATE sessions SET updated_at = updated_at - ?, created_at = created_at - ? WHERE id = ?", age.Milliseconds(), age.Milliseconds(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("AgeSessions: no session %s in %s", id, dataDir)
		}
	}
}
