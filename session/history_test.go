package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHistoryWrittenLaterAndOnClose: message changes reach history.md in
// the background without any call, and Close writes what is still pending.
func TestHistoryWrittenLaterAndOnClose(t *testing.T) {
	forEachStoreEnv(t, testHistoryWrittenLaterAndOnClose)
}

func testHistoryWrittenLaterAndOnClose(t *testing.T, e *storeEnv) {
	s := e.S
	a, _ := s.Create(ctx, "History")
	hist := filepath.Join(a.Folder, "history.md")
	m := &Message{SessionID: a.ID, Role: RoleUser, Content: "first question"}
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
	answer := &Message{SessionID: a.ID, Role: RoleAssistant, Status: StatusStreaming}
	if err := s.AppendMessage(ctx, answer); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := s.UpdateMessage(ctx, answer.ID, strings.Repeat("word ", i+1), StatusStreaming, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.UpdateMessage(ctx, answer.ID, "the final answer", StatusComplete, nil); err != nil {
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
	if err := s2.AppendMessage(ctx, &Message{SessionID: b.ID, Role: RoleUser, Content: "x"}); err != nil {
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

// TestHistoryRenderedFromWhereItStopped (both stores): on a long session
// history.md is rendered from the Markdown kept of its settled messages,
// and is each time exactly what rendering the whole session gives: after
// appends, a streaming answer and its end, a summary stored after the
// messages it covers, and messages written by a second store on the same
// data (another daemon).
func TestHistoryRenderedFromWhereItStopped(t *testing.T) {
	forEachStoreEnv(t, func(t *testing.T, e *storeEnv) {
		s := e.S
		ss, err := s.Create(ctx, "A long ticket")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetContext(ctx, ss.ID, SetFiles, []string{"/w/a.go"}, ModeReplace); err != nil {
			t.Fatal(err)
		}
		add := func(s Store, m *Message) {
			t.Helper()
			m.SessionID = ss.ID
			if err := s.AppendMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		var ids []int64
		for i := range 260 {
			m := &Message{Role: []Role{RoleUser, RoleAssistant}[i%2], Content: fmt.Sprintf("message %d", i)}
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
			if h := readString(t, filepath.Join(got.Folder, "history.md")); h != Markdown(got, sets, msgs) {
				t.Fatalf("%s: history.md differs from the whole session's Markdown:\n%s", when, lastLines(h, 12))
			}
		}
		check(s, "after 260 messages")
		if h := historyOf(s); h.entries[ss.ID] == nil || h.entries[ss.ID].count < 260 {
			t.Fatalf("no Markdown kept for a session of 260 messages: %+v", h.entries[ss.ID])
		}

		answer := &Message{Role: RoleAssistant, Status: StatusStreaming, Content: "the first half"}
		add(s, answer)
		check(s, "streaming")
		if err := s.UpdateMessage(ctx, answer.ID, "the first half, then the rest", StatusComplete, nil); err != nil {
			t.Fatal(err)
		}
		check(s, "answer complete")

		add(s, &Message{Role: RoleUser, Content: "compact, please"})
		add(s, &Message{Role: RoleSystem, Content: "Goal: the ticket.", SummaryOf: &Span{First: ids[0], Last: ids[99]}})
		check(s, "a summary among the settled messages")
		add(s, &Message{Role: RoleAssistant, Content: "done"})
		check(s, "after the summary")

		other := e.Reopen()
		add(other, &Message{Role: RoleUser, Content: "from another daemon"})
		if err := other.FlushHistory(); err != nil {
			t.Fatal(err)
		}
		add(s, &Message{Role: RoleAssistant, Content: "seen here"})
		check(s, "after another daemon's message")
	})
}

// historyOf is a store's kept Markdown.
func historyOf(s Store) *HistoryCache {
	switch s := s.(type) {
	case *SQLite:
		return &s.history.Cache
	case *Postgres:
		return &s.history.Cache
	}
	panic(fmt.Sprintf("historyOf: unknown store %T", s))
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
