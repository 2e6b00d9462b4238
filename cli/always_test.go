package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestAlwaysAllowIsTheServers: "always" allows the tool of the server the
// user answered about, as it ran then: a server named my.server (whose
// tool the model calls by the same name as my_server's) and my_server run
// otherwise are asked about again (with no terminal: declined); the same
// server as before still runs unasked.
func TestAlwaysAllowIsTheServers(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	config, serverDir := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(config, "ctxls"), 0o755)
	configure := func(name string, args ...string) {
		os.WriteFile(filepath.Join(config, "ctxls", "mcp.json"), testmcp.Config(map[string]map[string]any{name: testmcp.Server(t, "s", serverDir, args...)}), 0o644)
	}
	env := []string{"XDG_CONFIG_HOME=" + config, "CTXLS_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY=sk-test-not-real"}
	base := []string{"chat", "--base-url", fake.URL, "--model", "test-model"}
	call := func(id string) {
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "mcp__my_server__add", Arguments: `{"a":2,"b":3}`}}},
			openaitest.Reply{Chunks: []string{"Done."}},
		)
	}

	configure("my_server")
	call("a1")
	screen := onTerminal(t, "", env, "a\n", append(base, "add them")...)
	if got := fake.LastStreamed().ToolResults()["a1"]; got != `{"sum":5}` {
		t.Fatalf("always: %q\n%s", got, screen)
	}
	fake.WaitRequests(3, 10*time.Second) // the title's

	for _, c := range []struct {
		what, name string
		args       []string
		runs       bool
	}{
		{"another server of the same model name", "my.server", nil, false},
		{"the server run otherwise", "my_server", []string{"-many"}, false},
		{"the same server", "my_server", nil, true},
	} {
		configure(c.name, c.args...)
		call(c.what)
		_, errOut, code := lsptest.Run(t, "", env, append(base, "--continue", "again")...)
		got := fake.LastStreamed().ToolResults()[c.what]
		if ran := got == `{"sum":5}`; code != 0 || ran != c.runs {
			t.Errorf("%s: ran %v, want %v: %q\n%s", c.what, ran, c.runs, got, errOut)
		}
		if !c.runs && !strings.Contains(errOut, "declined, since there is no terminal to ask on") {
			t.Errorf("%s: not asked:\n%s", c.what, errOut)
		}
	}
}
