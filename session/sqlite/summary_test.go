package sqlite

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// TestMigration0007 opens a database made before 0007, with a summary
// stored then, and checks that its covered count is filled in from the
// messages, and that ModelHistory finds it.
func TestMigration0007(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "ctxls.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() >= "0007" {
			break
		}
		text, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(text)); err != nil {
			t.Fatal(e.Name(), err)
		}
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(q, err)
		}
	}
	exec("PRAGMA user_version = 6")
	if err := os.MkdirAll(filepath.Join(dir, "sessions", "f1"), 0o700); err != nil {
		t.Fatal(err)
	}
	exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ('s1', 'Long', 'user', 1, 1, 'f1')")
	for i := range 6 {
		exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES ('s1', ?, ?, 'complete', ?)", []string{"user", "assistant"}[i%2], fmt.Sprintf("message %d", i+1), i)
	}
	exec("INSERT INTO messages (session_id, role, content, status, created_at, summary_first, summary_last) VALUES ('s1', 'system', 'the first four', 'complete', 7, 1, 4)")
	exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES ('s1', 'user', 'message 8', 'complete', 8)")
	db.Close()

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	summary, rest, err := s.ModelHistory(ctx, "s1")
	if err != nil || summary == nil || *summary.SummaryOf != (session.Span{First: 1, Last: 4, Covered: 4, Questions: 2}) { // 0013 counted its questions
		t.Fatalf("summary after the migration: %+v %v", summary, err)
	}
	if len(rest) != 3 || rest[0].Content != "message 5" || rest[2].Content != "message 8" {
		t.Errorf("rest: %+v", rest)
	}
}
