package storetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

// testHistoryWrittenLaterAndOnClose: message changes reach history.md in
// the background without any call, and Close writes what is still pending.
func testHistoryWrittenLaterAndOnClose(t *testing.T, e *Env) {
	s := e.S
	a, _ := s.Create(ctx, "History")
	hist := filepath.Join(a.Folder, "history.md")
	m := &session.Message{SessionID: a.ID, Role: session.RoleUser, Content: "first question"}
	if err := s.AppendMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	// In the background: no call needed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(hist)
		if strings.Contains(string(data), "first question") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history.md never got the message:\n%s", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A burst of checkpoints, then Close at once: the last state is written.
	answer := &session.Message{SessionID: a.ID, Role: session.RoleAssistant, Status: session.StatusStreaming}
	if err := s.AppendMessage(ctx, answer); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := s.UpdateMessage(ctx, answer.ID, strings.Repeat("word ", i+1), session.StatusStreaming, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.UpdateMessage(ctx, answer.ID, "the final answer", session.StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(hist)
	if !strings.Contains(string(data), "the final answer") || strings.Contains(string(data), "word word") {
		t.Errorf("history.md after Close is not the last state:\n%s", data)
	}
	// A deleted session's pending write is dropped without an error.
	s2 := e.Reopen()
	b, _ := s2.Create(ctx, "Gone")
	if err := s2.AppendMessage(ctx, &session.Message{SessionID: b.ID, Role: session.RoleUser, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Errorf("close after deleting a session with a pending history.md: %v", err)
	}
	if _, err := os.Stat(b.Folder); !os.IsNotExist(err) {
		t.Errorf("the deleted session's folder came back: %v", err)
	}
}

// testHistoryRenderedFromWhereItStopped (both stores): on a long session
// history.md is rendered from the Markdown kept of its settled messages,
// and is each time exactly what rendering the whole session gives: after
// appends, a streaming answer and its end, a summary stored after the
// messages it covers, and messages written by a second store on the same
// data (another daemon).
func testHistoryRenderedFromWhereItStopped(t *testing.T, e *Env) {
	s := e.S
	ss, err := s.Create(ctx, "A long ticket")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateContext(ctx, ss.ID, session.SetFiles, []string{"/w/a.go"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	add := func(s Store, m *session.Message) {
		t.Helper()
		m.SessionID = ss.ID
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for i := range 260 {
		m := &session.Message{Role: []session.Role{session.RoleUser, session.RoleAssistant}[i%2], Content: fmt.Sprintf("message %d", i)}
		add(s, m)
		ids = append(ids, m.ID)
	}
	check := func(s Store, when string) {
		t.Helper()
		if err := s.FlushHistory(); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		sets, _ := s.Context(ctx, ss.ID)
		msgs, _ := s.Messages(ctx, ss.ID)
		if h := readString(t, filepath.Join(got.Folder, "history.md")); h != session.Markdown(got, sets, msgs) {
			t.Fatalf("%s: history.md differs from the whole session's Markdown:\n%s", when, lastLines(h, 12))
		}
	}
	check(s, "after 260 messages")
	if h := e.HistoryCache(s); h.Kept(ss.ID) < 260 {
		t.Fatalf("no Markdown kept for a session of 260 messages: %d kept", h.Kept(ss.ID))
	}

	answer := &session.Message{Role: session.RoleAssistant, Status: session.StatusStreaming, Content: "the first half"}
	add(s, answer)
	check(s, "streaming")
	if err := s.UpdateMessage(ctx, answer.ID, "the first half, then the rest", session.StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	check(s, "answer complete")

	add(s, &session.Message{Role: session.RoleUser, Content: "compact, please"})
	add(s, &session.Message{Role: session.RoleSystem, Content: "Goal: the ticket.", SummaryOf: &session.Span{First: ids[0], Last: ids[99]}})
	check(s, "a summary among the settled messages")
	add(s, &session.Message{Role: session.RoleAssistant, Content: "done"})
	check(s, "after the summary")

	other := e.Reopen()
	add(other, &session.Message{Role: session.RoleUser, Content: "from another daemon"})
	if err := other.FlushHistory(); err != nil {
		t.Fatal(err)
	}
	add(s, &session.Message{Role: session.RoleAssistant, Content: "seen here"})
	check(s, "after another daemon's message")
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
