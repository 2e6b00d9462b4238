package sqlite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ctxls/ctxls/session"
)

func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConcurrentProcesses runs writers in separate OS processes on one data
// directory; every write must land and none may fail with "locked".
func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("CTXLS_TEST_WRITER_DIR"); dir != "" {
		return // the child part runs in TestWriterChild
	}
	dir := t.TempDir()
	const procs, writes = 3, 60
	var wg sync.WaitGroup
	errs := make([]error, procs)
	out := make([][]byte, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriterChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CTXLS_TEST_WRITER_DIR="+dir, fmt.Sprintf("CTXLS_TEST_WRITER_N=%d", writes), fmt.Sprintf("CTXLS_TEST_WRITER_ID=%d", p))
			out[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("writer %d: %v\n%s", p, errs[p], out[p])
		}
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, _, err := st.List(ctx, session.ListOptions{Limit: 500})
	if err != nil || len(list) != procs {
		t.Fatalf("sessions: %d %v", len(list), err)
	}
	for _, ss := range list {
		msgs, _ := st.Messages(ctx, ss.ID)
		c, _ := st.Context(ctx, ss.ID)
		if len(msgs) != writes || len(c["ports"]) != 10 || ss.FileCount != writes {
			t.Errorf("session %s: %d messages, %d ports, %d files", ss.Title, len(msgs), len(c["ports"]), ss.FileCount)
		}
	}
}

// TestWriterChild is the child process of TestConcurrentProcesses.
func TestWriterChild(t *testing.T) {
	dir := os.Getenv("CTXLS_TEST_WRITER_DIR")
	if dir == "" {
		t.Skip("run by TestConcurrentProcesses")
	}
	var n int
	fmt.Sscan(os.Getenv("CTXLS_TEST_WRITER_N"), &n)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ss, err := s.Create(ctx, "writer "+os.Getenv("CTXLS_TEST_WRITER_ID"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := s.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: fmt.Sprintf("message %d", i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateContext(ctx, ss.ID, "ports", []string{fmt.Sprint(i % 10)}, session.ModeMerge, session.AddedByUser, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddFile(ctx, ss.ID, fmt.Sprintf("f%d", i), strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.List(ctx, session.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeleteForgets: a deleted session leaves nothing in the store's
// memory (its updated_at for live updates, its history.md rendering).
func TestDeleteForgets(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	ss, err := s.Create(ctx, "to delete")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	s.touchedMu.Lock()
	_, touched := s.touched[ss.ID]
	s.touchedMu.Unlock()
	if !touched {
		t.Fatal("a message's append did not note the session's updated_at")
	}
	if err := s.Delete(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	s.touchedMu.Lock()
	defer s.touchedMu.Unlock()
	if _, ok := s.touched[ss.ID]; ok {
		t.Fatal("the deleted session's updated_at is still kept")
	}
}

// TestAppendMessagesAllOrNone: messages appended at once are stored in
// order with rising ids, found by search; one invalid message stores none.
func TestAppendMessagesAllOrNone(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	ss, err := s.Create(ctx, "bulk")
	if err != nil {
		t.Fatal(err)
	}
	ms := []*session.Message{
		{SessionID: ss.ID, Role: session.RoleUser, Content: "first zebra question"},
		{SessionID: ss.ID, Role: session.RoleAssistant, Content: "first answer"},
		{SessionID: ss.ID, Role: session.RoleUser, Content: "second question"},
	}
	if err := s.AppendMessages(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if !(ms[0].ID > 0 && ms[0].ID < ms[1].ID && ms[1].ID < ms[2].ID) || ms[2].CreatedAt.IsZero() {
		t.Fatalf("ids %d %d %d, created %v", ms[0].ID, ms[1].ID, ms[2].ID, ms[2].CreatedAt)
	}
	got, err := s.Messages(ctx, ss.ID)
	if err != nil || len(got) != 3 || got[0].Content != "first zebra question" || got[2].Content != "second question" {
		t.Fatalf("messages %+v, %v", got, err)
	}
	if hits, err := s.Search(ctx, "zebra", 10); err != nil || len(hits) != 1 {
		t.Fatalf("search: %+v, %v", hits, err)
	}
	bad := []*session.Message{
		{SessionID: ss.ID, Role: session.RoleUser, Content: "kept?"},
		{SessionID: ss.ID, Role: "robot", Content: "invalid role"},
	}
	if err := s.AppendMessages(ctx, bad); err == nil {
		t.Fatal("a batch with an invalid message was stored")
	}
	other, _ := s.Create(ctx, "other")
	mixed := []*session.Message{
		{SessionID: ss.ID, Role: session.RoleUser, Content: "kept?"},
		{SessionID: other.ID, Role: session.RoleUser, Content: "elsewhere"},
	}
	if err := s.AppendMessages(ctx, mixed); err == nil {
		t.Fatal("a batch of two sessions' messages was stored")
	}
	if got, _ := s.Messages(ctx, ss.ID); len(got) != 3 {
		t.Fatalf("after the refused batches: %d messages", len(got))
	}
}
