package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestSearchTools: the model's grep, find_files and list_directory over
// the real binary with an editor holding buffers: each called by the fake
// provider's model, its result checked in the next model request. grep
// finds what the user typed and has not saved (marked unsaved), not what
// the unsaved text removed, never a secret file's text nor an ignored
// file's, and a bad pattern is a clear error; the tool cards carry their
// summaries.
func TestSearchTools(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s, root, _ := startChatBinary(t, fake, nil, nil)
	write := func(name, text string) string {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".gitignore", "build/\n")
	write("build/out.go", "func loginRedirect() {} // ignored\n")
	write(".env", "LOGIN_TOKEN=loginRedirect-secret\n")
	write("auth/login.go", "package auth\n\nfunc loginRedirect() {}\n")
	typed := write("auth/handler.go", "package auth\n\nfunc handle() {}\n")
	removed := write("auth/old.go", "package auth\n\nfunc loginRedirectOld() {}\n")
	open := func(path, text string) {
		s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": "file://" + path, "languageId": "go", "version": 1, "text": text}})
	}
	open(typed, "package auth\n\nfunc handle() { loginRedirect() }\n")
	open(removed, "package auth\n\nfunc gone() {}\n")

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "g1", Name: "grep", Arguments: `{"pattern":"loginRedirect"}`},
			{ID: "g2", Name: "grep", Arguments: `{"pattern":"func (","path":"auth"}`},
			{ID: "f1", Name: "find_files", Arguments: `{"pattern":"**/*.go"}`},
			{ID: "l1", Name: "list_directory", Arguments: `{"path":"auth"}`},
			{ID: "g3", Name: "grep", Arguments: `{"pattern":"x","path":"../"}`},
		}},
		openaitest.Reply{Chunks: []string{"Found it."}},
		openaitest.Reply{Chunks: []string{"Title"}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "why does login redirect twice?"}, &res)
	reqs := fake.WaitRequests(2, 10*time.Second)
	results := map[string]string{}
	for _, m := range reqs[1].Parsed.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	g1 := results["g1"]
	for _, want := range []string{"auth/login.go:3: func loginRedirect() {}", "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)"} {
		if !strings.Contains(g1, want) {
			t.Errorf("grep result lacks %q:\n%s", want, g1)
		}
	}
	for _, never := range []string{"old.go", "loginRedirect-secret", "build/out.go"} {
		if strings.Contains(g1, never) {
			t.Errorf("grep result has %q:\n%s", never, g1)
		}
	}
	if !strings.Contains(results["g2"], "error parsing regexp") && !strings.Contains(results["g2"], "missing closing )") {
		t.Errorf("a bad pattern: %q", results["g2"])
	}
	f1 := results["f1"]
	if !strings.Contains(f1, "auth/login.go") || !strings.Contains(f1, "auth/handler.go") || strings.Contains(f1, "build/") {
		t.Errorf("find_files:\n%s", f1)
	}
	l1 := results["l1"]
	if !strings.Contains(l1, "login.go") || !strings.Contains(l1, "old.go") || strings.Contains(l1, "main.go") {
		t.Errorf("list_directory auth:\n%s", l1)
	}
	if !strings.HasPrefix(results["g3"], "error: ") || !strings.Contains(results["g3"], "outside") {
		t.Errorf("grep outside the workspace: %q", results["g3"])
	}
	// The cards: done, with the summary.
	var summary string
	names := callNames(s, "g1")
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		if json.Unmarshal(m.Params, &p) == nil && names[p.ID] == "g1" && p.Status == api.ToolDone {
			summary = p.Summary
		}
	}
	if summary != "2 matches in 2 files" {
		t.Errorf("grep's card summary %q", summary)
	}
}
