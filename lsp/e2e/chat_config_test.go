package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/service"
)

// TestChatConfigurationAndServerCreatedProgress: with no provider the turn
// says how to configure one; didChangeConfiguration fixes it; with no token
// the server creates one; regenerateTitle asks the model again.
func TestChatConfigurationAndServerCreatedProgress(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "CTXLS_MODEL"} {
		t.Setenv(k, "")
	}
	fake := openaitest.New(t)
	s := lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
	s.Initialize(lsptest.InitOptions{WorkDoneProgress: true})
	err := s.Call("ctxls/chat", map[string]any{"message": "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no model provider is configured") {
		t.Fatalf("unconfigured: %v", err)
	}
	if msg := s.WaitNotification("window/showMessage", 1); !strings.Contains(string(msg.Params), "OPENAI_API_KEY") {
		t.Errorf("showMessage %s", msg.Params)
	}
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"}}}})
	fake.Enqueue(openaitest.Reply{Chunks: []string{"configured ", "now"}}, openaitest.Reply{Chunks: []string{"First title"}})
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "hi"}, &res); err != nil || res.Text != "configured now" {
		t.Fatalf("after didChangeConfiguration: %+v %v", res, err)
	}
	create := s.WaitFor("workDoneProgress/create", func(m *lsptest.Message) bool { return m.Method == "window/workDoneProgress/create" })
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	mustUnmarshal(t, create.Params, &p)
	deltas, kinds, end := progressFor(s, string(p.Token))
	if deltas != "configured now" || kinds[0] != "begin" || end != "done" {
		t.Errorf("progress on the created token: %q %v %q", deltas, kinds, end)
	}
	s.WaitNotification(api.SessionUpdated, 2) // auto title, then the model's
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Regenerated title here"}})
	var sess api.SessionResult
	s.MustCommand(api.RegenerateTitle, map[string]any{}, &sess)
	if sess.Session.Title != "Regenerated title here" || sess.Session.TitleSource != "model" {
		t.Errorf("regenerated: %+v", sess.Session)
	}
	// A failed title call keeps the title.
	fake.Enqueue(openaitest.Reply{Status: 500, ErrorMessage: "down"})
	if err := s.Command(api.RegenerateTitle, map[string]any{}, nil); err == nil {
		t.Error("failed title call reported success")
	}
	s.MustCommand(api.SessionShow, map[string]any{}, &sess)
	if sess.Session.Title != "Regenerated title here" {
		t.Errorf("title after a failed call: %q", sess.Session.Title)
	}
	// A typo in the provider settings is reported, not ignored silently.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"provider": map[string]any{"modle": "x"}}}})
	if msg := s.WaitNotification("window/showMessage", 2); !strings.Contains(string(msg.Params), `unknown field \"modle\"`) {
		t.Errorf("settings typo not reported: %s", msg.Params)
	}
	if err := s.Call("ctxls/chat", map[string]any{"message": "still works"}, &res); err != nil {
		t.Errorf("a bad settings update must keep the old provider: %v", err)
	}
}
