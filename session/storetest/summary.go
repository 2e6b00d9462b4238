package storetest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

// testSummaryMessage (both stores): a summary of earlier turns is stored as
// a system message with the range it covers and read back with it; the
// originals stay, search still finds them, and export and history.md show
// the summary, marked, right after the last message it covers. A summary
// that is not a system message or covers no range is refused.
func testSummaryMessage(t *testing.T, s Store) {
	sess, err := s.Create(ctx, "Long design doc")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range []session.Message{
		{Role: session.RoleUser, Content: "We want the importer to resume after a crash"},
		{Role: session.RoleAssistant, Content: "Keep a checkpoint table keyed by batch"},
		{Role: session.RoleUser, Content: "Agreed, and the retry limit?"},
		{Role: session.RoleAssistant, Content: "Three retries with backoff"},
		{Role: session.RoleUser, Content: "Next: write the migration"},
	} {
		m.SessionID = sess.ID
		if err := s.AppendMessage(ctx, &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	sum := &session.Message{SessionID: sess.ID, Role: session.RoleSystem, Content: "Goal: a resumable importer.\nDecisions: checkpoint table; three retries.",
		SummaryOf: &session.Span{First: ids[0], Last: ids[3]}}
	if err := s.AppendMessage(ctx, sum); err != nil {
		t.Fatal(err)
	}
	answer := &session.Message{SessionID: sess.ID, Role: session.RoleAssistant, Content: "Here is the migration"}
	if err := s.AppendMessage(ctx, answer); err != nil {
		t.Fatal(err)
	}

	msgs, err := s.Messages(ctx, sess.ID)
	if err != nil || len(msgs) != 7 {
		t.Fatalf("messages: %d, %v", len(msgs), err)
	}
	got := msgs[5]
	if sum.SummaryOf.Covered != 4 || sum.SummaryOf.Questions != 2 {
		t.Errorf("stored summary covers %d messages and %d questions, want 4 and 2", sum.SummaryOf.Covered, sum.SummaryOf.Questions)
	}
	if got.ID != sum.ID || !got.IsSummary() || *got.SummaryOf != (session.Span{First: ids[0], Last: ids[3], Covered: 4, Questions: 2}) || got.Role != session.RoleSystem || got.Content != sum.Content {
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
	marker := session.SummaryMarker(session.Span{First: ids[0], Last: ids[3], Covered: 4})
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

	for _, bad := range []session.Message{
		{Role: session.RoleUser, Content: "x", SummaryOf: &session.Span{First: ids[0], Last: ids[1]}},
		{Role: session.RoleSystem, Content: "x", SummaryOf: &session.Span{First: ids[1], Last: ids[0]}},
		{Role: session.RoleSystem, Content: "x", SummaryOf: &session.Span{First: 0, Last: ids[0]}},
	} {
		bad.SessionID = sess.ID
		if err := s.AppendMessage(ctx, &bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("summary %+v of %+v accepted: %v", bad.Role, bad.SummaryOf, err)
		}
	}
}
