package sqlite

import (
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// TestMigration0010 opens a database at schema 0009 holding messages of
// every status it knew, a summary, tool calls and cached tokens, and checks
// that 0010 (status "cancelled") keeps every row as it was (ids, counts,
// the full-text index, the triggers), then stores a cancelled answer.
func TestMigration0010(t *testing.T) {
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
	n := 0
	for _, e := range entries {
		if e.Name() >= "0010" {
			break
		}
		text, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(text)); err != nil {
			t.Fatal(e.Name(), err)
		}
		n++
	}
	if n != 9 {
		t.Fatalf("%d migrations before 0010, want 9", n)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(q, err)
		}
	}
	exec("PRAGMA user_version = 9")
	for _, f := range []string{"f1", "f2"} {
		if err := os.MkdirAll(filepath.Join(dir, "sessions", f), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ('s1', 'Old', 'user', 1, 1, 'f1')")
	exec("INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ('s2', 'Other', 'auto', 1, 2, 'f2')")
	rows := []struct {
		role, content, status string
	}{
		{"user", "how do zebras sleep", "complete"},
		{"assistant", "standing up, mostly", "complete"},
		{"user", "and giraffes", "complete"},
		{"assistant", "briefly and", "interrupted"},
		{"user", "read the notes", "complete"},
		{"assistant", "", "complete"},
		{"tool", "no such file", "error"},
		{"tool", "not allowed", "declined"},
		{"assistant", "still typing", "streaming"},
	}
	for i, r := range rows {
		var calls, callID any
		if i == 5 {
			calls = `[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"run","arguments":"{}"}}]`
		}
		if r.role == "tool" {
			callID = []string{"c1", "c2"}[i-6]
		}
		exec(`INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, status, created_at, prompt_tokens, completion_tokens, cached_tokens, model)
			VALUES ('s1', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.role, r.content, calls, callID, r.status, 10+i, 100+i, i, 50+i, "m1")
	}
	exec("INSERT INTO messages (session_id, role, content, status, created_at, summary_first, summary_last, summary_count) VALUES ('s1', 'system', 'zebras and giraffes so far', 'complete', 30, 1, 4, 4)")
	exec("INSERT INTO messages (session_id, role, content, status, created_at) VALUES ('s2', 'user', 'unrelated', 'complete', 40)")
	// The old constraint refuses the new status: the migration is needed.
	if _, err := db.Exec("UPDATE messages SET status = 'cancelled' WHERE id = 4"); err == nil || !strings.Contains(err.Error(), "CHECK") {
		t.Fatalf("schema 0009 took status cancelled: %v", err)
	}
	db.Close()

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs, err := s.Messages(ctx, "s1")
	if err != nil || len(msgs) != len(rows)+1 {
		t.Fatalf("messages after the migration: %d %v", len(msgs), err)
	}
	for i, r := range rows {
		m := msgs[i]
		want := session.Status(r.status)
		if r.status == "streaming" {
			want = session.StatusInterrupted // its daemon is gone: marked when the store opened
		}
		if m.ID != int64(i+1) || string(m.Role) != r.role || m.Content != r.content || m.Status != want || m.Model != "m1" ||
			m.Usage == nil || m.Usage.PromptTokens != 100+i || m.Usage.CompletionTokens != i || m.Usage.CachedTokens != 50+i {
			t.Errorf("message %d after the migration: %+v (usage %+v), want %+v", i+1, m, m.Usage, r)
		}
	}
	if len(msgs[5].ToolCalls) == 0 || msgs[6].ToolCallID != "c1" || msgs[7].ToolCallID != "c2" {
		t.Errorf("tool calls after the migration: %s %q %q", msgs[5].ToolCalls, msgs[6].ToolCallID, msgs[7].ToolCallID)
	}
	if sum := msgs[len(rows)]; sum.SummaryOf == nil || *sum.SummaryOf != (session.Span{First: 1, Last: 4, Covered: 4, Questions: 2}) { // 0013 counted its questions
		t.Errorf("summary after the migration: %+v", sum)
	}
	if got, err := s.Get(ctx, "s1"); err != nil || got.MessageCount != len(rows)+1 || got.Title != "Old" || got.TitleSource != session.TitleUser {
		t.Errorf("session after the migration: %+v %v", got, err)
	}
	if hits, err := s.Search(ctx, "zebras", 10); err != nil || len(hits) != 2 {
		t.Errorf("search after the migration: %+v %v", hits, err)
	}
	// The triggers are back: a new message is counted and indexed, and a
	// cancelled answer is stored.
	q := &session.Message{SessionID: "s1", Role: session.RoleUser, Content: "what about okapis", Status: session.StatusComplete}
	a := &session.Message{SessionID: "s1", Role: session.RoleAssistant, Content: "okapis", Status: session.StatusStreaming}
	for _, m := range []*session.Message{q, a} {
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if q.ID != int64(len(rows)+3) {
		t.Errorf("the next id is %d, want %d (ids are not reused)", q.ID, len(rows)+3)
	}
	if err := s.UpdateMessage(ctx, a.ID, "okapis sleep", session.StatusCancelled, nil); err != nil {
		t.Fatalf("storing a cancelled answer: %v", err)
	}
	if got, _ := s.Get(ctx, "s1"); got.MessageCount != len(rows)+3 {
		t.Errorf("message count %d, want %d", got.MessageCount, len(rows)+3)
	}
	if hits, err := s.Search(ctx, "okapis", 10); err != nil || len(hits) != 2 || hits[0].SessionID != "s1" {
		t.Errorf("search for the new message: %+v %v", hits, err)
	}
	if msgs, _ := s.Messages(ctx, "s1"); msgs[len(msgs)-1].Status != session.StatusCancelled {
		t.Errorf("the cancelled answer: %+v", msgs[len(msgs)-1])
	}
	if err := s.Delete(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.Search(ctx, "unrelated", 10); len(hits) != 0 {
		t.Errorf("a deleted session's messages are still found: %+v", hits)
	}
}
