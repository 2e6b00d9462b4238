package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestMentionsAndWorkspaceFiles: ctxls.workspace.files offers the
// workspace's files for a completion after "@" (best match first; the
// open file first with no query; no ignored, secret-named, .git or
// outside file), and a question's "@PATH" mentions send those files with
// the turn (lines too), while a mention of a secret-named file, a .git
// file, a file outside the workspace (by "..", an absolute path or a link)
// or no file sends nothing; the question is stored as typed.
func TestMentionsAndWorkspaceFiles(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	for name, text := range map[string]string{
		"auth/login.go":   "package auth\n\nfunc loginRedirect() {}\n",
		"auth/handler.go": "package auth\n\nfunc handle() {}\n",
		"build/login.out": "BUILD OUTPUT\n",
		".gitignore":      "build/\n",
		".env":            "API_TOKEN=SECRET-ENV-VALUE\n",
		".git/config":     "[core] GIT-CONFIG-TEXT\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(outside, []byte("OUTSIDE-TEXT\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	fake := openaitest.New(t)
	s := binaryChat(t, fake, t.TempDir(), rootURI, 16000, 1000)

	paths := func(q string, limit int) ([]string, bool) {
		t.Helper()
		var r api.WorkspaceFilesResult
		s.MustCommand(api.WorkspaceFiles, map[string]any{"query": q, "limit": limit}, &r)
		var out []string
		for _, f := range r.Files {
			out = append(out, f.Path)
		}
		return out, r.Truncated
	}
	if got, more := paths("log", 0); strings.Join(got, " ") != "auth/login.go" || more {
		t.Errorf("query log: %q (truncated %v)", got, more)
	}
	if got, _ := paths("hndlr", 0); strings.Join(got, " ") != "auth/handler.go" {
		t.Errorf("query hndlr: %q", got)
	}
	// No query: the open file first, then the others; never .env, .git's,
	// the ignored build/ or the link out of the workspace.
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file://" + filepath.Join(root, "docs", "spec.md"), "languageId": "markdown", "version": 1, "text": "spec\n"}})
	all, more := paths("", 0)
	if len(all) == 0 || all[0] != "docs/spec.md" || more {
		t.Errorf("no query: %q (truncated %v), want docs/spec.md first", all, more)
	}
	for _, p := range all {
		if p == ".env" || strings.HasPrefix(p, ".git/") || strings.HasPrefix(p, "build/") || p == "link.txt" {
			t.Errorf("no query lists %s: %q", p, all)
		}
	}
	if len(all) != 6 { // docs/spec.md, then main.go README.md auth/login.go auth/handler.go .gitignore
		t.Errorf("no query listed %q, want six files", all)
	}
	if two, more := paths("", 2); len(two) != 2 || !more {
		t.Errorf("limit 2: %q (truncated %v)", two, more)
	}

	question := "@auth/login.go:3 why does it redirect? Compare @main.go, and see @.env @.git/config @../" +
		filepath.Base(filepath.Dir(outside)) + "/outside.txt @" + outside + " @link.txt @build/login.out @nothing.go mail@auth/handler.go"
	fake.Enqueue(openaitest.Reply{Chunks: []string{"because"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": question}, &res)
	req := fake.WaitRequests(1, 0)[0]
	turn := req.TurnContext()
	for _, want := range []string{"func loginRedirect()", "package main", "BUILD OUTPUT"} {
		if !strings.Contains(turn, want) {
			t.Errorf("the turn's context lacks %q:\n%s", want, turn)
		}
	}
	for _, not := range []string{"SECRET-ENV-VALUE", "GIT-CONFIG-TEXT", "OUTSIDE-TEXT", "func handle()"} {
		if strings.Contains(turn, not) || strings.Contains(req.SystemPrompt(), not) {
			t.Errorf("a mention sent %q:\n%s", not, turn)
		}
	}
	if !strings.Contains(turn, "login.go (the user selected line 3)") {
		t.Errorf("the mention's line is not told:\n%s", turn)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	if show.Messages[0].Content != question {
		t.Errorf("the question was stored as %q", show.Messages[0].Content)
	}
}
