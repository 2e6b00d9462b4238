package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// mcpServersParam is session/new's mcpServers with the test server as "t"
// and one the agent cannot use.
func mcpServersParam(t *testing.T, dir string) []any {
	return []any{
		map[string]any{"name": "t", "command": testmcp.Binary(t), "args": []string{"-name", "t"},
			"env": []any{map[string]any{"name": "TESTMCP_DIR", "value": dir}}},
		map[string]any{"name": "nothing", "command": "", "args": []string{}, "env": []any{}},
	}
}

func mcpAgent(t *testing.T, fake *openaitest.Server, dataDir, cwd string) *agent {
	t.Helper()
	bin := lsptest.BuildBinary(t)
	c := acptest.Start(t, bin, []string{"acp", "--data-dir", dataDir, "--base-url", fake.URL, "--model", "test-model"},
		[]string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL=", "XDG_CONFIG_HOME=" + t.TempDir()})
	var res struct {
		AgentCapabilities struct {
			McpCapabilities map[string]bool `json:"mcpCapabilities"`
		} `json:"agentCapabilities"`
	}
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if caps := res.AgentCapabilities.McpCapabilities; !caps["http"] || caps["sse"] {
		t.Errorf("mcpCapabilities %v", caps)
	}
	return &agent{Client: c, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
}

// TestMCPServersOfTheClient: the client's mcpServers are used: the model's
// calls are shown pending, asked with session/request_permission (allow
// once, reject, allow always), run, and their results reach the next model
// request; a server that cannot be used is told; "always" holds after the
// agent is started again and the session resumed, and load replays the
// calls.
func TestMCPServersOfTheClient(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	serverDir := t.TempDir()
	a := mcpAgent(t, fake, dataDir, cwd)
	var created struct{ SessionID string }
	if err := a.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": mcpServersParam(t, serverDir)}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID
	a.AnswerPermissions("allow_once", "reject_once", "allow_always")
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`},
			{ID: "c2", Name: "mcp__t__add", Arguments: `{"a":1,"b":2}`},
			{ID: "c3", Name: "mcp__t__picture", Arguments: `{}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	if res, err := a.prompt(id, text("use the tools")); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	results := fake.LastStreamed().ToolResults()
	if results["c1"] != "echo: hi" || !strings.Contains(results["c2"], "declined") || !strings.Contains(results["c3"], "here it is") {
		t.Errorf("results %q", results)
	}
	perms := a.Permissions()
	if len(perms) != 3 {
		t.Fatalf("%d permission requests", len(perms))
	}
	var p struct {
		ToolCall struct {
			ToolCallID, Title, Kind, Status string
			RawInput                        map[string]any
		}
		Options []struct{ OptionID, Kind string }
	}
	json.Unmarshal(perms[0], &p)
	names := byCall(a.Updates(id), "c1", "c2", "c3")
	if names[p.ToolCall.ToolCallID] != "c1" || p.ToolCall.Title != "t · echo" || p.ToolCall.Kind != "read" || p.ToolCall.Status != "pending" || p.ToolCall.RawInput["text"] != "hi" || len(p.Options) != 4 {
		t.Errorf("request_permission: %s", perms[0])
	}
	// Each call: one pending tool_call, then its updates; the pending one
	// came before its question.
	seq := map[string][]string{}
	pendingAt := map[string]int{}
	for _, u := range a.Updates(id) {
		if u.Kind == "tool_call" || u.Kind == "tool_call_update" {
			seq[names[u.ToolCallID()]] = append(seq[names[u.ToolCallID()]], u.Kind+":"+u.Status())
			if u.Kind == "tool_call" {
				pendingAt[u.ToolCallID()] = u.Seq
			}
		}
	}
	for id, want := range map[string]string{
		"c1": "tool_call:pending tool_call_update:in_progress tool_call_update:completed",
		"c2": "tool_call:pending tool_call_update:failed",
		"c3": "tool_call:pending tool_call_update:in_progress tool_call_update:completed",
	} {
		if got := strings.Join(seq[id], " "); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	for _, m := range a.Received() {
		if m.Method == "session/request_permission" {
			var p struct{ ToolCall struct{ ToolCallID string } }
			json.Unmarshal(m.Params, &p)
			if at, ok := pendingAt[p.ToolCall.ToolCallID]; !ok || at > m.Seq {
				t.Errorf("the question of %s came before its pending tool_call", p.ToolCall.ToolCallID)
			}
		}
	}
	if !strings.Contains(a.AgentText(id), `server "nothing"`) {
		t.Errorf("the unusable server was not told: %q", a.AgentText(id))
	}
	a.waitModelTitle(id)
	a.Close()

	// Started again: the session resumed with its servers; picture is
	// allowed always, not asked.
	b := mcpAgent(t, fake, dataDir, cwd)
	if err := b.Call("session/resume", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": mcpServersParam(t, serverDir)}, nil); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "d1", Name: "mcp__t__picture", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Again."}},
	)
	if _, err := b.prompt(id, text("again")); err != nil {
		t.Fatal(err)
	}
	if got := fake.LastStreamed().ToolResults()["d1"]; !strings.Contains(got, "here it is") || len(b.Permissions()) != 0 {
		t.Errorf("after the restart: %q, %d permission requests", got, len(b.Permissions()))
	}
	// Load replays the calls with their servers' names.
	if err := b.Call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	echo := ""
	for live, name := range names {
		if name == "c1" {
			echo = live
		}
	}
	b.WaitUpdate("the replayed echo call", func(u acptest.Update) bool {
		return u.Kind == "tool_call" && u.ToolCallID() == echo && u.Title() == "t · echo"
	})
}

// TestCancelledCallOverACP: a call running when the turn is cancelled ends
// "failed" (ACP's ToolCallStatus has no "cancelled") with
// _meta.ctxls.status "cancelled", live and when session/load replays it.
func TestCancelledCallOverACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := mcpAgent(t, fake, dataDir, cwd)
	var created struct{ SessionID string }
	if err := a.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": mcpServersParam(t, t.TempDir())}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID
	a.AnswerPermissions("allow_once")
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "h1", Name: "mcp__t__hang", Arguments: `{}`}}})
	reply := a.Async("session/prompt", map[string]any{"sessionId": id, "prompt": []any{text("hang")}})
	a.WaitUpdate("the call running", func(u acptest.Update) bool {
		return u.SessionID == id && u.Kind == "tool_call_update" && u.Status() == "in_progress"
	})
	a.Notify("session/cancel", map[string]any{"sessionId": id})
	if m := <-reply; m.Error != nil || !strings.Contains(string(m.Result), `"cancelled"`) {
		t.Fatalf("the cancelled prompt: %+v", m)
	}
	ended := func(updates []acptest.Update) string {
		for _, u := range updates {
			if u.Kind == "tool_call_update" && (u.Status() == "failed" || u.Status() == "completed") {
				var raw struct {
					Meta struct{ Ctxls struct{ Status string } } `json:"_meta"`
				}
				json.Unmarshal(u.Raw, &raw)
				return u.Status() + "/" + raw.Meta.Ctxls.Status
			}
		}
		return ""
	}
	if got := ended(a.Updates(id)); got != "failed/cancelled" {
		t.Errorf("the call ended %q, want failed/cancelled", got)
	}
	// A second connection loads the session: the replay says the same.
	b := mcpAgent(t, fake, dataDir, cwd)
	if err := b.Call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := ended(b.Updates(id)); got != "failed/cancelled" {
		t.Errorf("replayed, the call ended %q, want failed/cancelled", got)
	}
}
