package e2e_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/internal/benchutil"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// BenchmarkDaemonStartMCP measures spawn → initialize reply of the daemon
// with three MCP servers configured (the user's file) against none,
// alternately: servers start when a turn first needs them, so the figures
// should match. Metrics: none-ms, three-ms (medians) and ratio.
func BenchmarkDaemonStartMCP(b *testing.B) {
	cfg := b.TempDir()
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(cfg, "ctxls"), 0o755)
	servers := map[string]map[string]any{}
	for _, name := range []string{"one", "two", "three"} {
		servers[name] = testmcp.Server(b, name, dir)
	}
	if err := os.WriteFile(filepath.Join(cfg, "ctxls", "mcp.json"), testmcp.Config(servers), 0o644); err != nil {
		b.Fatal(err)
	}
	lsptest.BuildBinary(b)
	start := func(env []string) time.Duration {
		begun := time.Now()
		s := lsptest.Binary(b, env, "serve", "--data-dir", b.TempDir())
		s.Initialize(lsptest.InitOptions{RootURI: "file://" + dir})
		took := time.Since(begun)
		s.Shutdown()
		s.Exit()
		return took
	}
	var none, three []time.Duration
	for b.Loop() {
		none = append(none, start(nil))
		three = append(three, start([]string{"XDG_CONFIG_HOME=" + cfg}))
	}
	if _, err := os.Stat(filepath.Join(dir, "one.pid")); err == nil {
		b.Fatal("a server was started before a turn needed it")
	}
	n, t := benchutil.Percentile(none, 50), benchutil.Percentile(three, 50)
	b.ReportMetric(benchutil.MS(n), "none-ms")
	b.ReportMetric(benchutil.MS(t), "three-ms")
	b.ReportMetric(float64(t)/float64(n), "ratio")
	b.ReportMetric(0, "ns/op")
}
