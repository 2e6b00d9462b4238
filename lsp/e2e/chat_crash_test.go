package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestSIGKILLMidStreamKeepsCheckpoint kills the built binary while an answer
// streams: after a restart the user message and the checkpointed partial
// answer are there, and the next turn works.
func TestSIGKILLMidStreamKeepsCheckpoint(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	var chunks []string
	for i := range 40 {
		chunks = append(chunks, "w"+string(rune('a'+i%26))+" ")
	}
	fake.Enqueue(openaitest.Reply{Chunks: chunks, Delay: 50 * time.Millisecond})
	dataDir := t.TempDir()
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY="}
	s := lsptest.Binary(t, env, "serve", "--data-dir", dataDir)
	s.Initialize(lsptest.InitOptions{})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	s.Send(1000, "ctxls/chat", map[string]any{"message": "stream a long answer", "workDoneToken": "k"})
	deltas := 0
	s.WaitFor("20 deltas", func(m *lsptest.Message) bool {
		if m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta"`) {
			deltas++
		}
		return deltas >= 20
	})
	s.Kill()
	s.Exit()

	s2 := lsptest.Binary(t, env, "serve", "--data-dir", dataDir)
	s2.Initialize(lsptest.InitOptions{})
	var show api.ShowResult
	s2.MustCommand(api.SessionShow, map[string]any{"sessionId": created.Session.ID}, &show)
	if len(show.Messages) != 2 || show.Messages[0].Content != "stream a long answer" {
		t.Fatalf("messages after the kill: %+v", show.Messages)
	}
	partial := show.Messages[1].Content
	// 20 chunks were streamed at 50 ms each: the 500 ms checkpoint keeps at
	// least the first 10 (allowing for scheduling, at least 5).
	if !strings.HasPrefix(strings.Join(chunks, ""), partial) || len(partial) < 5*3 {
		t.Errorf("checkpointed partial answer %q", partial)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"back"}})
	var res api.ChatResult
	s2.MustCommand(api.Chat, map[string]any{"sessionId": created.Session.ID, "message": "again"}, &res)
	if res.Text != "back" {
		t.Errorf("next turn %+v", res)
	}
	s2.MustCommand(api.SessionShow, map[string]any{"sessionId": created.Session.ID}, &show)
	if show.Messages[1].Status != api.StatusInterrupted {
		t.Errorf("the killed answer ends interrupted, got %s", show.Messages[1].Status)
	}
}
