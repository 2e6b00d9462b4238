package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestSearchTools: over ACP the model's grep, find_files and
// list_directory search the disk of the session's folder (ACP clients send
// no buffers): each called by the fake provider's model, its result checked
// in the next model request, shown as a search tool call whose title ends
// with its summary.
func TestSearchTools(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	for name, text := range map[string]string{
		"auth/login.go": "package auth\n\nfunc loginRedirect() {}\n",
		"auth/id_rsa":   "-----BEGIN OPENSSH PRIVATE KEY-----\nloginRedirect\n",
		".gitignore":    "build/\n",
		"build/x.go":    "func loginRedirect() {}\n",
		"notes.txt":     "loginRedirect\n-----BEGIN OPENSSH PRIVATE KEY-----\n",
	} {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "g1", Name: "grep", Arguments: `{"pattern":"loginRedirect"}`},
			{ID: "f1", Name: "find_files", Arguments: `{"pattern":"*.go"}`},
			{ID: "l1", Name: "list_directory", Arguments: `{}`},
		}},
		openaitest.Reply{Chunks: []string{"Found."}},
	)
	res, err := a.prompt(id, text("Where is the login redirect?"))
	if err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	reqs := fake.WaitRequests(2, 10*time.Second)
	results := map[string]string{}
	for _, m := range reqs[1].Parsed.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if g := results["g1"]; !strings.Contains(g, "auth/login.go:3: func loginRedirect() {}") || strings.Contains(g, "build/") || strings.Contains(g, "id_rsa") || strings.Contains(g, "notes.txt") {
		t.Errorf("grep:\n%s", g)
	}
	if f := results["f1"]; strings.TrimSpace(f) != "auth/login.go" {
		t.Errorf("find_files:\n%s", f)
	}
	if l := results["l1"]; !strings.Contains(l, "auth/") || strings.Contains(l, "build/") {
		t.Errorf("list_directory:\n%s", l)
	}
	calls := map[string]acptest.Update{}
	done := map[string]acptest.Update{}
	names := byCall(a.Updates(id), "g1", "f1", "l1")
	for _, u := range a.Updates(id) {
		switch u.Kind {
		case "tool_call":
			calls[names[u.ToolCallID()]] = u
		case "tool_call_update":
			if u.Status() == "completed" {
				done[names[u.ToolCallID()]] = u
			}
		}
	}
	if raw := string(calls["g1"].Raw); !strings.Contains(raw, `"kind":"search"`) || !strings.Contains(raw, `"title":"grep loginRedirect"`) {
		t.Errorf("grep's tool_call: %s", raw)
	}
	if raw := string(done["g1"].Raw); !strings.Contains(raw, `"title":"grep loginRedirect — 1 match in 1 file"`) {
		t.Errorf("grep's end: %s", raw)
	}
}
