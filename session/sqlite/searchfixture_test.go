package sqlite

import (
	"testing"

	"github.com/ctxls/ctxls/session/storetest"
)

// fillSearchFixture inserts n messages (and n/50 sessions) into s, in one
// transaction with the FTS triggers as they are in production.
func fillSearchFixture(tb testing.TB, s *Store, n int) {
	tb.Helper()
	tx, err := s.db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	sessStmt, err := tx.Prepare("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES (?, ?, 'auto', ?, ?, ?)")
	if err != nil {
		tb.Fatal(err)
	}
	msgStmt, err := tx.Prepare("INSERT INTO messages (session_id, role, content, status, created_at) VALUES (?, ?, ?, 'complete', ?)")
	if err != nil {
		tb.Fatal(err)
	}
	storetest.SearchFixture(n, func(id, title string, created, updated int64) {
		if _, err := sessStmt.Exec(id, title, created, updated, id); err != nil {
			tb.Fatal(err)
		}
	}, func(id, role, content string, created int64) {
		if _, err := msgStmt.Exec(id, role, content, created); err != nil {
			tb.Fatal(err)
		}
	})
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}
