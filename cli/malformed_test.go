package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestMCPListMalformedTools (issue 37): `ctxls mcp list --tools` shows a
// server's tools beside how many of the entries it lists were left out as
// malformed, and why.
func TestMCPListMalformedTools(t *testing.T) {
	t.Parallel()
	config := t.TempDir()
	os.MkdirAll(filepath.Join(config, "ctxls"), 0o755)
	os.WriteFile(filepath.Join(config, "ctxls", "mcp.json"), testmcp.Config(map[string]map[string]any{"m": testmcp.Server(t, "m", t.TempDir(), "-malformed")}), 0o644)
	env := []string{"XDG_CONFIG_HOME=" + config, "CTXLS_DATA_DIR=" + t.TempDir()}
	out, errOut, code := lsptest.Run(t, "", env, "mcp", "list", "--tools")
	want := regexp.MustCompile(`✗ 2 of the tools it lists are left out: entry \d+ \("name": 42\): its name is not a string; entry \d+: it is null, not a tool\n`)
	if code != 0 || !want.MatchString(out) || !strings.Contains(out, "- echo (read-only): Echoes its text.") {
		t.Errorf("%d, want %s:\n%s\n%s", code, want, out, errOut)
	}
}
