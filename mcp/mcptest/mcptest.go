// Package mcptest is what the tests of `ctxls mcp serve` share: a data
// directory with a session, and the server started over HTTP.
package mcptest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// Fixture is a data directory with one session: two messages, a files set
// and a file in its folder.
func Fixture(t *testing.T) (dir, id string) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	st, err := backend.Open(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := st.Create(ctx, "Fix login redirect")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*session.Message{
		{SessionID: sess.ID, Role: session.RoleUser, Content: "Why does login redirect twice?"},
		{SessionID: sess.ID, Role: session.RoleAssistant, Content: "Because the middleware runs twice.", Status: session.StatusComplete},
	} {
		if err := st.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.UpdateContext(ctx, sess.ID, session.SetFiles, []string{"/w/login.go"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddFile(ctx, sess.ID, "notes.md", strings.NewReader("# Notes\nthe cookie path")); err != nil {
		t.Fatal(err)
	}
	return dir, sess.ID
}

// ServeHTTP starts `ctxls mcp serve --http 127.0.0.1:0` on dir with token
// as CTXLS_MCP_TOKEN, stopped when the test ends, and returns its URL as it
// says it on stderr.
func ServeHTTP(t *testing.T, dir, token string) string {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), "mcp", "serve", "--data-dir", dir, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CTXLS_STORE=", "CTXLS_MCP_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1]
		}
	}
	t.Fatal("no address on stderr")
	return ""
}
