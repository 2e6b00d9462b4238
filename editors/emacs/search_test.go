package emacs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// searchWorkspace is workspace's folder with auth/login.go, which has
// loginRedirect on its line 3, and auth/handler.go, which has it only once
// Emacs types it (unsaved) on its line 3.
func searchWorkspace(t *testing.T) string {
	t.Helper()
	work := workspace(t)
	for name, text := range map[string]string{
		"auth/login.go":   "package auth\n\nfunc loginRedirect() {}\n",
		"auth/handler.go": "package auth\n\nfunc handle() {}\n",
	} {
		p := filepath.Join(work, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// searchReplies: the model searches with grep, find_files and
// list_directory, then answers (and titles the session).
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

// TestEmacsSearch: the model's grep, find_files and list_directory are
// lines in the chat ("▸ grep `loginRedirect` — 2 matches in 2 files"),
// grep's finding the match only in the buffer's unsaved text; RET on a
// result visits the file at its line (the unsaved buffer as typed); a new
// Emacs shows the same lines in the resumed session (the summaries read
// from the stored results), and its results visit the files too.
func TestEmacsSearch(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t)
		fake.Enqueue(searchReplies()...)
		work := searchWorkspace(t)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: work, dataDir: t.TempDir(), fakeURL: fake.URL}
		env := "CTXLS_TOOL_LINES=" + filepath.Join(t.TempDir(), "lines")
		r.run(t, "ctxls-test-search", env)
		var grep string
		for _, req := range fake.Requests() {
			for _, m := range req.Parsed.Messages {
				if m.Role == "tool" && m.ToolCallID == "g1" {
					grep = m.Content
				}
			}
		}
		if !strings.Contains(grep, "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)") {
			t.Errorf("grep's result:\n%s", grep)
		}
		r.run(t, "ctxls-test-search-resume", env)
	})
}
