package nvim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// searchWorkspace is the workspace of the search tests: auth/login.go has
// loginRedirect on its line 3; auth/handler.go has it only once Neovim
// types it (unsaved) on its line 3.
func searchWorkspace(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	for name, text := range map[string]string{
		"auth/login.go":   "package auth\n\nfunc loginRedirect() {}\n",
		"auth/handler.go": "package auth\n\nfunc handle() {}\n",
		"main.go":         "package main\n\nfunc main() {}\n",
	} {
		p := filepath.Join(work, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// searchReplies: the model searches with grep (the unsaved text's match
// and the saved file's), find_files and list_directory, then answers.
func searchReplies() []openaitest.Reply {
	return []openaitest.Reply{
		{ToolCalls: []openaitest.ToolCall{
			{ID: "g1", Name: "grep", Arguments: `{"pattern":"loginRedirect"}`},
			{ID: "f1", Name: "find_files", Arguments: `{"pattern":"**/*.go"}`},
			{ID: "l1", Name: "list_directory", Arguments: `{"path":"auth"}`},
		}},
		{Chunks: []string{"It is called from handle."}},
		{Chunks: []string{"Login search"}},
	}
}

// TestNeovimSearch: the model's grep, find_files and list_directory are
// lines in the chat ("grep `loginRedirect` — 2 matches in 2 files"); <CR>
// shows grep's results (the unsaved text's match marked); gq on the line
// fills the quickfix list, and :cc lands on each match, the unsaved one in
// the buffer as typed; <CR> on a result line opens the file there;
// :CtxlsQuickfix from a file lists the last search. A new Neovim shows the
// same lines in the resumed session, and gq works on them.
func TestNeovimSearch(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimSearch)
}

func testNeovimSearch(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(searchReplies()...)
	work := searchWorkspace(t)
	dataDir, lines := t.TempDir(), filepath.Join(t.TempDir(), "lines")
	run := func(phase string) {
		t.Helper()
		runNvim(t, nvim, work, "search.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir,
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir(),
			"CTXLS_TOOL_LINES="+lines), 60*time.Second, phase)
	}
	run("search")
	// The model got the unsaved match, marked.
	var grep string
	for _, r := range fake.Requests() {
		for _, m := range r.Parsed.Messages {
			if m.Role == "tool" && m.ToolCallID == "g1" {
				grep = m.Content
			}
		}
	}
	if !strings.Contains(grep, "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)") {
		t.Errorf("grep's result:\n%s", grep)
	}
	run("search-resume")
}
