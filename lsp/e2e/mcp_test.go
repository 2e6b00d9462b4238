package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/internal/proctest"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// mcpDaemon starts the daemon with the test MCP server as "t" in its
// initializationOptions; answer answers each permission question in turn
// ("" leaves it unanswered).
func mcpDaemon(t *testing.T, fake *openaitest.Server, dataDir, rootURI, serverDir string, answers *permissionAnswers) *lsptest.Server {
	t.Helper()
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", dataDir)
	s.OnServerRequest(answers.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: map[string]any{
		"provider":                     map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"mcpServers":                   map[string]any{"t": testmcp.Server(t, "t", serverDir, "-stubborn")},
		"toolPermissionTimeoutSeconds": 1,
	}})
	return s
}

// permissionAnswers answers window/showMessageRequest with its answers in
// turn, recording the questions.
type permissionAnswers struct {
	mu        sync.Mutex
	answers   []string
	questions []string
}

func (p *permissionAnswers) handle(method string, params json.RawMessage) (any, *lsptest.RPCError) {
	if method != "window/showMessageRequest" {
		return lsptest.DefaultServerRequests(method, params)
	}
	var q struct {
		Message string `json:"message"`
		Actions []struct {
			Title string `json:"title"`
		} `json:"actions"`
	}
	json.Unmarshal(params, &q)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.questions = append(p.questions, q.Message)
	if len(p.answers) == 0 {
		return nil, nil
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	if a == "" {
		return lsptest.NoAnswer, nil
	}
	return map[string]string{"title": a}, nil
}

func (p *permissionAnswers) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.questions...)
}

// TestMCPToolsOverLSP: the model calls an MCP server's tools; the editor
// is asked with window/showMessageRequest (allow once, deny, no answer,
// always), each call is shown as ctxls/toolCall, and "always" holds in the
// next turn and after a restart of the daemon. The server's environment
// values are never logged or stored, and the server ends with the daemon,
// also when the daemon is killed (the server is one that ignores SIGTERM
// and stays after its input closes).
func TestMCPToolsOverLSP(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	_, rootURI := workspace(t)
	dataDir, serverDir := t.TempDir(), t.TempDir()
	answers := &permissionAnswers{answers: []string{"Allow once", "Deny", "", "Always in this session"}}
	s := mcpDaemon(t, fake, dataDir, rootURI, serverDir, answers)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`},
			{ID: "c2", Name: "mcp__t__add", Arguments: `{"a":1,"b":2}`},
			{ID: "c3", Name: "mcp__t__add", Arguments: `{"a":3,"b":4}`},
			{ID: "c4", Name: "mcp__t__picture", Arguments: `{}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "use the tools", "workDoneToken": "tok-1"}, &res)
	if res.Text != "Done." {
		t.Fatalf("answer %q", res.Text)
	}
	results := fake.LastStreamed().ToolResults()
	if results["c1"] != "echo: hi" || !strings.Contains(results["c2"], "declined") || !strings.Contains(results["c3"], "did not answer the permission question in time") || !strings.Contains(results["c4"], "here it is") {
		t.Errorf("results: %q", results)
	}
	q := answers.asked()
	if len(q) != 4 || !strings.Contains(q[0], "t · echo (read-only) with {\"text\":\"hi\"}") || !strings.Contains(q[1], "t · add") {
		t.Errorf("questions: %q", q)
	}
	statuses := map[string][]string{}
	names := callNames(s, "c1", "c2", "c3", "c4")
	for _, m := range s.Notifications(api.ToolCall) {
		var p api.ToolCallParams
		json.Unmarshal(m.Params, &p)
		if p.SessionID != res.SessionID || p.Server != "t" {
			t.Errorf("toolCall %+v", p)
		}
		statuses[names[p.ID]] = append(statuses[names[p.ID]], string(p.Status))
	}
	for id, want := range map[string]string{"c1": "pending running done", "c2": "pending declined", "c3": "pending declined", "c4": "pending running done"} {
		if got := strings.Join(statuses[id], " "); got != want {
			t.Errorf("%s: statuses %q, want %q", id, got, want)
		}
	}
	// Each question comes after its call was shown pending.
	pending, questions := 0, 0
	for _, m := range s.Received() {
		switch {
		case m.Method == api.ToolCall && strings.Contains(string(m.Params), `"status":"pending"`):
			pending++
		case m.Method == "window/showMessageRequest":
			questions++
			if pending < questions {
				t.Errorf("question %d came before its call was shown pending", questions)
			}
		}
	}
	if !strings.Contains(progressMessages(s), "t · echo: waiting for your permission") {
		t.Errorf("$/progress messages: %s", progressMessages(s))
	}

	// "Always" holds after a restart of the daemon.
	fake.WaitRequests(3, 10*time.Second) // the title's
	pidFile := filepath.Join(serverDir, "t.pid")
	pid1 := readPid(t, pidFile)
	s.Shutdown()
	s.Exit()
	waitGone(t, pid1)
	if strings.Contains(s.Stderr(), "s3cret-value-never-logged") {
		t.Error("the server's env value is in the log")
	}
	s2 := mcpDaemon(t, fake, dataDir, rootURI, serverDir, answers)
	s2.MustCommand(api.SessionResume, map[string]any{"sessionId": res.SessionID}, nil)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "d1", Name: "mcp__t__picture", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Again."}},
	)
	s2.MustCommand(api.Chat, map[string]any{"message": "again"}, &res)
	if got := fake.LastStreamed().ToolResults()["d1"]; !strings.Contains(got, "here it is") || len(answers.asked()) != 4 {
		t.Errorf("after the restart: %q, asked %d times", got, len(answers.asked()))
	}
	db, _ := os.ReadFile(filepath.Join(dataDir, "ctxls.db"))
	if strings.Contains(string(db), "s3cret-value-never-logged") {
		t.Error("the server's env value is in the database")
	}
	// Killed with SIGKILL, the daemon leaves no server behind.
	pid2 := readPid(t, pidFile)
	if pid2 == pid1 {
		t.Fatal("the server was not started again")
	}
	s2.Kill()
	waitGone(t, pid2)
}

func progressMessages(s *lsptest.Server) string {
	var out []string
	for _, m := range s.Notifications("$/progress") {
		var p struct {
			Value struct {
				Message string `json:"message"`
			} `json:"value"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Value.Message != "" {
			out = append(out, p.Value.Message)
		}
	}
	return strings.Join(out, "\n")
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the MCP server's pid: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	return pid
}

// waitGone waits for a process to end (or become a zombie of init).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	if !proctest.Gone(pid, 10*time.Second) {
		t.Fatalf("the MCP server (pid %d) outlived the daemon", pid)
	}
}

// TestWorkspaceMCPTrust: a workspace's .mcp.json is used only once the
// user trusted it (asked once with window/showMessageRequest), and asked
// about again when it changes; distrusted, its servers are not offered.
func TestWorkspaceMCPTrust(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	serverDir := t.TempDir()
	cfg := filepath.Join(root, ".mcp.json")
	os.WriteFile(cfg, testmcp.Config(map[string]map[string]any{"w": testmcp.Server(t, "w", serverDir)}), 0o644)
	answers := &permissionAnswers{answers: []string{"Trust", "Allow once"}}
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.OnServerRequest(answers.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
	}})
	var list api.MCPListResult
	s.MustCommand(api.MCPList, map[string]any{}, &list)
	if len(list.WorkspaceFiles) != 1 || list.WorkspaceFiles[0].State != api.TrustUndecided || len(list.Servers) != 0 {
		t.Fatalf("before: %+v", list)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w1", Name: "mcp__w__echo", Arguments: `{"text":"trusted"}`}}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "use the workspace's tool"}, nil)
	if got := fake.LastStreamed().ToolResults()["w1"]; got != "echo: trusted" {
		t.Errorf("the trusted file's tool: %q", got)
	}
	q := answers.asked()
	if len(q) != 2 || !strings.Contains(q[0], cfg+" configures MCP servers") || !strings.Contains(q[0], "w: "+testmcp.Binary(t)) {
		t.Errorf("questions: %q", q)
	}
	s.MustCommand(api.MCPList, map[string]any{}, &list)
	if list.WorkspaceFiles[0].State != api.TrustTrusted || len(list.Servers) != 1 || !list.Servers[0].Running {
		t.Errorf("after: %+v", list)
	}
	// Changed: asked again; not trusted, its servers are not offered.
	fake.WaitRequests(3, 10*time.Second) // the title's
	os.WriteFile(cfg, testmcp.Config(map[string]map[string]any{"w": testmcp.Server(t, "w", serverDir, "-many")}), 0o644)
	answers.mu.Lock()
	answers.answers = []string{"Don't trust"}
	answers.mu.Unlock()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"No tools."}})
	s.MustCommand(api.Chat, map[string]any{"message": "again"}, nil)
	if q := answers.asked(); len(q) != 3 || !strings.Contains(q[2], "configures MCP servers") {
		t.Errorf("not asked again after the change: %q", q)
	}
	for _, tool := range fake.LastStreamed().Parsed.Tools {
		if strings.HasPrefix(tool.Function.Name, "mcp__w__") {
			t.Errorf("a distrusted file's tool is offered: %s", tool.Function.Name)
		}
	}
}

// TestWorkspaceSettingsMCPTrust: MCP servers the editor sends as coming from
// the workspace's settings (initializationOptions.workspaceMcpServers, a
// repository's .vscode/settings.json) are not started until the user
// trusted them, as a workspace's .mcp.json; once trusted they run, and
// changed (settings workspaceMcpServers) they are asked about again.
func TestWorkspaceSettingsMCPTrust(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	root, rootURI := workspace(t)
	serverDir := t.TempDir()
	answers := &permissionAnswers{}
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.OnServerRequest(answers.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider":            map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"workspaceMcpServers": map[string]any{"w": testmcp.Server(t, "w", serverDir)},
	}})
	var list api.MCPListResult
	s.MustCommand(api.MCPList, map[string]any{}, &list)
	if len(list.Servers) != 0 || len(list.WorkspaceFiles) != 1 || list.WorkspaceFiles[0].State != api.TrustUndecided ||
		!strings.Contains(list.WorkspaceFiles[0].Path, "workspace settings") || !strings.Contains(list.WorkspaceFiles[0].Path, root) {
		t.Fatalf("before trust, the workspace settings' server is listed as usable or not as undecided: %+v", list)
	}
	// Not trusted: the turn offers none of its tools, and it is not started.
	answers.mu.Lock()
	answers.answers = []string{"Don't trust"}
	answers.mu.Unlock()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"No tools."}})
	s.MustCommand(api.Chat, map[string]any{"message": "first"}, nil)
	for _, tool := range fake.LastStreamed().Parsed.Tools {
		if strings.HasPrefix(tool.Function.Name, "mcp__w__") {
			t.Errorf("an untrusted workspace setting's tool is offered: %s", tool.Function.Name)
		}
	}
	if q := answers.asked(); len(q) != 1 || !strings.Contains(q[0], "workspace settings") || !strings.Contains(q[0], "w: "+testmcp.Binary(t)) {
		t.Errorf("questions: %q", q)
	}
	s.MustCommand(api.MCPList, map[string]any{}, &list)
	if len(list.Servers) != 0 || list.WorkspaceFiles[0].State != api.TrustDistrusted {
		t.Errorf("after distrust: %+v", list)
	}
	// Changed: asked again; trusted, it runs.
	fake.WaitRequests(2, 10*time.Second) // the title's
	answers.mu.Lock()
	answers.answers = []string{"Trust", "Allow once"}
	answers.mu.Unlock()
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{
		"workspaceMcpServers": map[string]any{"w": testmcp.Server(t, "w", serverDir, "-many")},
	}}})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w1", Name: "mcp__w__echo", Arguments: `{"text":"trusted"}`}}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "use the workspace's tool"}, nil)
	if got := fake.LastStreamed().ToolResults()["w1"]; got != "echo: trusted" {
		t.Errorf("the trusted setting's tool: %q (questions %q)", got, answers.asked())
	}
	s.MustCommand(api.MCPList, map[string]any{}, &list)
	if len(list.Servers) != 1 || !list.Servers[0].Running || list.WorkspaceFiles[0].State != api.TrustTrusted {
		t.Errorf("after trust: %+v", list)
	}
}
