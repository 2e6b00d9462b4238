package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// noProvider is an environment with no provider, key or data directory.
func noProvider(home string) []string {
	return []string{"HOME=" + home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "CTXLS_MODEL=", "CTXLS_DATA_DIR=", "XDG_DATA_HOME="}
}

// TestREADMEFirstCommandShowsThePrompt runs README's first command as a new
// user would on a machine with no provider: it prints the assembled model
// input with the file's text, and creates no data directory.
func TestREADMEFirstCommandShowsThePrompt(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no sh block")
	}
	build, rest, ok := strings.Cut(string(block[1]), " && ")
	// The build may be static (CGO_ENABLED=0, as README.md builds it).
	if build = strings.TrimPrefix(build, "CGO_ENABLED=0 "); !ok || build != "go build -o bin/ctxls ./cmd/ctxls" || !strings.HasPrefix(rest, "bin/ctxls chat --dry-run ") {
		t.Fatalf("README's first command is not build-then-dry-run: %q", block[1])
	}
	home := t.TempDir()
	cmd := exec.Command("sh", "-c", strings.Replace(rest, "bin/ctxls", lsptest.BuildBinary(t), 1))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), noProvider(home)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"dry run: nothing sent, nothing stored", "Tokens: ", "With the question: " + filepath.Join(root, "README.md") + "\n", "── system · ", "## Relevant Files",
		filepath.Join(root, "README.md"), "ctxls is an editor-integration daemon", "── user · ", "── tools offered (", "read_file (", " tokens): Read a file", "grep (", "find_files (", "list_directory ("} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("the dry run wrote into HOME: %v", entries)
	}
}

// TestDryRunWithSession previews the next turn of a stored session: its
// history is in the input, and nothing is stored.
func TestDryRunWithSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, _ := st.Create(ctx, "Deploy pipeline")
	st.AppendMessage(ctx, &session.Message{SessionID: s.ID, Role: session.RoleUser, Content: "why is the canary failing"})
	st.AppendMessage(ctx, &session.Message{SessionID: s.ID, Role: session.RoleAssistant, Content: "the health check times out"})
	st.Close()
	env := append(noProvider(t.TempDir()), "CTXLS_DATA_DIR="+dir)
	out, errOut, code := run(t, env, "chat", "--dry-run", "--session", s.ID, "--model", "gpt-4o", "and now?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Model input for gpt-4o", "why is the canary failing", "the health check times out", "── assistant · ", "and now?"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	st, _ = backend.Open(context.Background(), dir, "")
	defer st.Close()
	if msgs, _ := st.Messages(ctx, s.ID); len(msgs) != 2 {
		t.Errorf("the dry run stored messages: %d", len(msgs))
	}
}
