package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestLiveSQLiteOneFolder: two daemons on one SQLite data directory, as two
// editors of one person. A turn asked on A in the session B shows reaches
// B's editor as ctxls/sessionUpdated (the SQLite store looks for other
// processes' changes every half second), and B then reads the
// new question and answer; a session B does not show is not announced.
func TestLiveSQLiteOneFolder(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Shared"}}))
	dataDir := t.TempDir()
	a, _, _ := startChatBinary(t, fake, nil, nil, "--data-dir", dataDir)
	b, _, _ := startChatBinary(t, fake, nil, nil, "--data-dir", dataDir)

	fake.Enqueue(openaitest.Reply{Chunks: []string{"first answer"}}, openaitest.Reply{Chunks: []string{"other answer"}})
	var res api.ChatResult
	if err := a.Call("ctxls/chat", map[string]any{"message": "first question"}, &res); err != nil {
		t.Fatal(err)
	}
	id := res.SessionID
	var other api.SessionResult
	a.MustCommand(api.SessionNew, map[string]any{"title": "Not shown on B"}, &other)
	var otherTurn api.ChatResult
	if err := a.Call("ctxls/chat", map[string]any{"sessionId": other.Session.ID, "message": "elsewhere"}, &otherTurn); err != nil {
		t.Fatal(err)
	}
	b.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, nil)

	since := time.Now()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"second answer"}})
	if err := a.Call("ctxls/chat", map[string]any{"sessionId": id, "message": "second question"}, &res); err != nil || res.Text != "second answer" {
		t.Fatalf("A's turn: %+v %v", res, err)
	}
	b.WaitFor("B: sessionUpdated for A's turn", func(m *lsptest.Message) bool {
		if !m.IsNotification() || m.Method != api.SessionUpdated || m.At.Before(since) {
			return false
		}
		var p api.SessionUpdatedParams
		json.Unmarshal(m.Params, &p)
		if p.SessionID == other.Session.ID {
			t.Errorf("B was told of a session it does not show: %s", m.Params)
		}
		return p.SessionID == id
	})
	if d := time.Since(since); d > 10*time.Second {
		t.Errorf("B heard of A's turn %v later", d)
	}
	var shown api.ShowResult
	b.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &shown)
	var got []string
	for _, m := range shown.Messages {
		got = append(got, m.Content)
	}
	if strings.Join(got, " | ") != "first question | first answer | second question | second answer" {
		t.Fatalf("B reads: %q", got)
	}
}
