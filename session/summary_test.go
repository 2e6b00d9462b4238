package session

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSummaryMessage (both stores): a summary of earlier turns is stored as
// a system message with the range it covers and read back with it; the
// originals stay, search still finds them, and export and history.md show
// the summary, marked, right after the last message it covers. A summary
// that is not a system message or covers no range is refused.
func TestSummaryMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		sess, err := s.Create(ctx, "Long design doc")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, m := range []Message{
			{Role: RoleUser, Content: "We want the importer to resume after a crash"},
			{Role: RoleAssistant, Content: "Keep a checkpoint table keyed by batch"},
			{Role: RoleUser, Content: "Agreed, and the retry limit?"},
			{Role: RoleAssistant, Content: "Three retries with backoff"},
			{Role: RoleUser, Content: "Next: write the migration"},
		} {
			m.SessionID = sess.ID
			if err := s.AppendMessage(ctx, &m); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		sum := &Message{SessionID: sess.ID, Role: RoleSystem, Content: "Goal: a resumable importer.\nDecisions: checkpoint table; three retries.",
			SummaryOf: &Span{First: ids[0], Last: ids[3]}}
		if err := s.AppendMessage(ctx, sum); err != nil {
			t.Fatal(err)
		}
		answer := &Message{SessionID: sess.ID, Role: RoleAssistant, Content: "Here is the migration"}
		if err := s.AppendMessage(ctx, answer); err != nil {
			t.Fatal(err)
		}

		msgs, err := s.Messages(ctx, sess.ID)
		if err != nil || len(msgs) != 7 {
			t.Fatalf("messages: %d, %v", len(msgs), err)
		}
		got := msgs[5]
		if sum.SummaryOf.Covered != 4 {
			t.Errorf("stored summary covers %d, want 4", sum.SummaryOf.Covered)
		}
		if got.ID != sum.ID || !got.IsSummary() || *got.SummaryOf != (Span{First: ids[0], Last: ids[3], Covered: 4}) || got.Role != RoleSystem || got.Content != sum.Content {
			t.Errorf("summary read back as %+v (span %+v)", got, got.SummaryOf)
		}
		for i, m := range msgs {
			if i != 5 && m.SummaryOf != nil {
				t.Errorf("message %d has a summary range %+v", m.ID, m.SummaryOf)
			}
		}

		// The model's view: the summary, then what follows its range.
		view, rest := modelView(msgs)
		if view == nil || view.ID != sum.ID || len(rest) != 2 || rest[0].ID != ids[4] || rest[1].ID != answer.ID {
			t.Errorf("model view: %+v, rest %+v", view, rest)
		}
		// What a turn reads: the same, and only that.
		if summary, rest2, err := s.ModelHistory(ctx, sess.ID); err != nil || summary == nil || summary.ID != sum.ID ||
			summary.SummaryOf.Covered != 4 || len(rest2) != 2 || rest2[0].ID != ids[4] || rest2[1].ID != answer.ID {
			t.Errorf("ModelHistory: %+v, %+v, %v", summary, rest2, err)
		}

		// Search still finds the originals.
		hits, err := s.Search(ctx, "retry limit", 10)
		if err != nil || len(hits) == 0 || hits[0].MessageID != ids[2] {
			t.Errorf("search for an original: %+v %v", hits, err)
		}

		// Export: every original, the summary marked after the last one it covers.
		_, md, err := s.Export(ctx, sess.ID, "markdown")
		if err != nil {
			t.Fatal(err)
		}
		marker := SummaryMarker(Span{First: ids[0], Last: ids[3], Covered: 4})
		checkOrder(t, "export", md, "We want the importer", "Three retries with backoff", "## summary", marker, "Goal: a resumable importer.", "Next: write the migration", "Here is the migration")
		_, js, err := s.Export(ctx, sess.ID, "json")
		if err != nil || !strings.Contains(js, `"summaryOf": {`) {
			t.Errorf("json export lacks summaryOf: %v", err)
		}
		// history.md follows (written in the background).
		deadline := time.Now().Add(5 * time.Second)
		for {
			cur, _ := s.Get(ctx, sess.ID)
			b, _ := os.ReadFile(filepath.Join(cur.Folder, "history.md"))
			if strings.Contains(string(b), marker) && strings.Contains(string(b), "Here is the migration") {
				checkOrder(t, "history.md", string(b), "Three retries with backoff", marker, "Next: write the migration")
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("history.md lacks the summary:\n%s", b)
			}
			time.Sleep(50 * time.Millisecond)
		}

		for _, bad := range []Message{
			{Role: RoleUser, Content: "x", SummaryOf: &Span{First: ids[0], Last: ids[1]}},
			{Role: RoleSystem, Content: "x", SummaryOf: &Span{First: ids[1], Last: ids[0]}},
			{Role: RoleSystem, Content: "x", SummaryOf: &Span{First: 0, Last: ids[0]}},
		} {
			bad.SessionID = sess.ID
			if err := s.AppendMessage(ctx, &bad); !errors.Is(err, ErrInvalid) {
				t.Errorf("summary %+v of %+v accepted: %v", bad.Role, bad.SummaryOf, err)
			}
		}
	})
}

// TestInConversationOrder: summaries move to right after the last message
// they cover, in the order of their ranges; nothing else moves.
func TestInConversationOrder(t *testing.T) {
	msgs := []Message{
		{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4},
		{ID: 5, Role: RoleSystem, SummaryOf: &Span{First: 1, Last: 2}},
		{ID: 6}, {ID: 7},
		{ID: 8, Role: RoleSystem, SummaryOf: &Span{First: 1, Last: 6}},
		{ID: 9},
	}
	var got []int64
	for _, m := range InConversationOrder(msgs) {
		got = append(got, m.ID)
	}
	want := []int64{1, 2, 5, 3, 4, 6, 8, 7, 9}
	if len(got) != len(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	summary, rest := modelView(msgs)
	if summary.ID != 8 || len(rest) != 2 || rest[0].ID != 7 || rest[1].ID != 9 {
		t.Errorf("model view: %+v %+v", summary, rest)
	}
}

// checkOrder fails unless each of parts occurs in text after the one before.
func checkOrder(t *testing.T, what, text string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(text[at:], p)
		if i < 0 {
			t.Errorf("%s: %q missing after offset %d:\n%s", what, p, at, text)
			return
		}
		at += i + len(p)
	}
}

// TestMigration0007 opens a database made before 0007, with a summary
// stored then, and checks that its covered count is filled in from the
// messages, and that ModelHistory finds it.
func TestMigration0007(t *testing.T) {
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
	if err != nil || summary == nil || *summary.SummaryOf != (Span{First: 1, Last: 4, Covered: 4}) {
		t.Fatalf("summary after the migration: %+v %v", summary, err)
	}
	if len(rest) != 3 || rest[0].Content != "message 5" || rest[2].Content != "message 8" {
		t.Errorf("rest: %+v", rest)
	}
}

// modelView is the rule Store.ModelHistory reads in SQL, over every
// message: it splits a session's messages (oldest first, as Messages returns
// them) into what the model is given: the newest summary, if any, and the
// messages after the range it covers, summaries left out. Without a summary
// rest is every message but summaries.
func modelView(msgs []Message) (summary *Message, rest []Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].IsSummary() {
			summary = &msgs[i]
			break
		}
	}
	rest = make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if m.IsSummary() || (summary != nil && m.ID <= summary.SummaryOf.Last) {
			continue
		}
		rest = append(rest, m)
	}
	return summary, rest
}
