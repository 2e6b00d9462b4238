package session

import (
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
