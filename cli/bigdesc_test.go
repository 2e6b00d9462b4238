package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestChatLongToolDescription: a server's tool with a 2 MB description is
// offered with its description cut (TestBindToolsLongDescription: with a
// note saying so), so the tools cost a few thousand tokens of the context
// window, not half a million.
func TestChatLongToolDescription(t *testing.T) {
	t.Parallel()
	config := t.TempDir()
	os.MkdirAll(filepath.Join(config, "ctxls"), 0o755)
	os.WriteFile(filepath.Join(config, "ctxls", "mcp.json"), testmcp.Config(map[string]map[string]any{"t": testmcp.Server(t, "t", t.TempDir(), "-bigdesc", "2000000")}), 0o644)
	env := []string{"XDG_CONFIG_HOME=" + config, "CTXLS_DATA_DIR=" + t.TempDir()}
	out, errOut, code := lsptest.Run(t, "", env, "chat", "--dry-run", "use the tools")
	m := regexp.MustCompile(`history \d+, tools (\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("dry run: %d\n%.2000s\n%s", code, out, errOut)
	}
	if n, _ := strconv.Atoi(m[1]); n > 5000 {
		t.Errorf("the tools cost %d tokens", n)
	}
}
