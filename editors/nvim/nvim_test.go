// Package nvim_test runs the Neovim plugin headless against the built ctxls
// binary and the in-repo OpenAI-compatible test server.
package nvim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/editortest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

func TestNeovimPlugin(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimPlugin)
}

func testNeovimPlugin(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"It prints ", "hello."}}, openaitest.Reply{Chunks: []string{"Hello program"}})
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
	dataDir := t.TempDir()
	run := func(phase string) {
		runNvim(t, nvim, "", "e2e.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir, "CTXLS_TEST_FILE="+file,
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir()), 60*time.Second, phase)
	}
	run("ask")
	reqs := fake.WaitRequests(1, 5*time.Second)
	if sys := reqs[0].ModelContext(); !strings.Contains(sys, "// UNSAVED LINE FROM NEOVIM") {
		t.Errorf("the provider did not get the unsaved buffer:\n%s", sys)
	}
	// The resume phase's second turn, then the summary :CtxlsCompact asks for.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Then it ", "exits."}, Delay: 300 * time.Millisecond}, openaitest.Reply{Chunks: []string{"## Goal\n\nExplain main.go."}})
	run("resume")
	reqs = fake.Requests()
	if n := len(reqs); n != 4 || !strings.HasPrefix(reqs[3].ModelContext(), "You are compacting") {
		t.Fatalf("%d requests; want the first turn, its title, the second turn and a summary", n)
	}
	if !strings.Contains(reqs[3].Parsed.Messages[1].Content, "It prints hello.") {
		t.Errorf("the summary request lacks the first answer: %.300s", reqs[3].Parsed.Messages[1].Content)
	}
}

// TestNeovimTools: the model calls tools of the test MCP server; each call
// is a line in the chat buffer, updated in place, its output folded; the
// permission question is answered at its prompt with keys (allow once,
// deny, no answer, always in this session), a slow call shows its progress;
// a new Neovim shows the same
// lines in the resumed session's history.
func TestNeovimTools(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimTools)
}

func testNeovimTools(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(editortest.ToolScenario()...)
	// A last turn, cancelled while its call waits for permission.
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c8", Name: "mcp__t__add", Arguments: `{"a":5,"b":6}`}}})
	servers, _ := json.Marshal(map[string]any{"t": testmcp.Server(t, "t", t.TempDir())})
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n"), 0o644)
	dataDir, lines := t.TempDir(), filepath.Join(t.TempDir(), "lines")
	run := func(phase string) {
		t.Helper()
		runNvim(t, nvim, work, "e2e.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir, "CTXLS_TEST_FILE="+file,
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir(),
			"CTXLS_MCP_SERVERS="+string(servers), "CTXLS_TOOL_LINES="+lines), 90*time.Second, phase)
	}
	run("tools")
	// What the model was told of each call: its result, that the user
	// declined it, or (c4) that the question was not answered in time —
	// never that the user declined it.
	results := map[string]string{}
	for _, r := range fake.Requests() {
		for _, m := range r.Parsed.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = m.Content
			}
		}
	}
	for id, want := range map[string]string{
		"c1": "echo: hi", "c2": "The user declined this call of t · add", "c3": "error: ",
		"c4": "The user did not answer the permission question in time; the call did not run.", "c5": "echo: a", "c6": "echo: b", "c7": "slow done after 3 steps",
	} {
		if !strings.HasPrefix(results[id], want) {
			t.Errorf("the model got %q for %s, want %q…", results[id], id, want)
		}
	}
	run("tools-resume")
}
