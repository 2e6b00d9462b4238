// Package vscode_test runs the extension's tests: the protocol layer and the
// parts that need no VS Code (node --test, in TypeScript compiled by tsc)
// against the built binary and the in-repo OpenAI-compatible test server, and
// (e2e_test.go) the packaged extension inside code-server.
package vscode_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

func TestExtensionProtocol(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("node_modules/.bin/tsc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("editors/vscode/node_modules is missing; .ci/run runs npm ci")
		}
		t.Skip("run npm ci in editors/vscode first")
	}
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(
		openaitest.Reply{Chunks: []string{"x is ", "one."}},
		openaitest.Reply{Chunks: []string{"About x"}}, // the title, asked after the first answer
		openaitest.Reply{Chunks: []string{"partial ", "never sent"}, Fault: openaitest.FaultStall, FaultAfter: 1},
		// The MCP test: two calls of the test server's tools, then the answer.
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "node_echo", Name: "mcp__t__echo", Arguments: `{"text":"hi from node"}`},
			{ID: "node_add", Name: "mcp__t__add", Arguments: `{"a":2,"b":3}`},
		}},
		openaitest.Reply{Chunks: []string{"Echoed."}},
	)
	// The edits test: two edits of calc.ts (one accepted, one rejected), then one in the auto mode.
	edits := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"(no scripted reply)"}}))
	edits.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "node_e1", Name: "edit_file", Arguments: `{"path":"calc.ts","old_string":"return a - b;","new_string":"return b - a;"}`},
			{ID: "node_e2", Name: "edit_file", Arguments: `{"path":"calc.ts","old_string":"// unsaved","new_string":"// rejected"}`},
		}},
		openaitest.Reply{Chunks: []string{"Edited."}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "node_e3", Name: "edit_file", Arguments: `{"path":"calc.ts","old_string":"function sub(","new_string":"function minus("}`},
		}},
		openaitest.Reply{Chunks: []string{"Renamed."}},
	)
	servers, _ := json.Marshal(map[string]any{"t": testmcp.Server(t, "t", t.TempDir())})
	// npm test is tsc -p . && node --test out/test/: the compile is the
	// package's (packageExtension), shared with the e2e suite.
	packageExtension(t)
	cmd := exec.Command("node", "--test", "out/test/")
	cmd.Env = append(os.Environ(), "CTXLS_BIN="+bin, "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TESTMCP="+string(servers), "CTXLS_EDITS_BASE_URL="+edits.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test out/test/: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "pass 38") || !strings.Contains(string(out), "fail 0") {
		t.Fatalf("the node tests did not all run:\n%s", out)
	}
	reqs := fake.WaitRequests(3, 5*time.Second)
	if sys := reqs[0].ModelContext(); !strings.Contains(sys, "// UNSAVED FROM VSCODE") {
		t.Errorf("the provider did not get the unsaved text:\n%s", sys)
	}
	// The workspace's AGENTS.md (written by the node test) ends the system prompt.
	if sys := reqs[0].SystemPrompt(); !strings.Contains(sys, "## Project Instructions") || !strings.Contains(sys, "Answer in one sentence.") {
		t.Errorf("the provider did not get the project's instructions:\n%s", sys)
	}
	fake.WaitCancelled(2, 5*time.Second)
	// The allowed call's result reached the model; the denied one did not run.
	reqs = fake.WaitRequests(5, 5*time.Second)
	var results []string
	for _, m := range reqs[4].Parsed.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || results[0] != "echo: hi from node" || !strings.Contains(results[1], "declined") {
		t.Errorf("the model got back %q, want the echo and the refusal", results)
	}
	// The model was told which edit was applied and which the user rejected.
	ereqs := edits.WaitRequests(4, 5*time.Second)
	told := ereqs[1].ToolResults()
	if !strings.Contains(told["node_e1"], "edited ") || !strings.Contains(told["node_e1"], "unsaved until the user saves it") ||
		!strings.Contains(told["node_e2"], "The user rejected this edit") {
		t.Errorf("the model was told %q", told)
	}
	if got := ereqs[3].ToolResults()["node_e3"]; !strings.Contains(got, "edited ") {
		t.Errorf("auto mode: the model was told %q", got)
	}
}
