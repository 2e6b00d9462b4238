package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// BenchmarkDaemonGrepMemory: the daemon's peak resident memory while the
// model searches the Go toolchain's source tree (the workspace folder is
// $GOROOT/src, ~10,000 files): a literal grep, a regular expression, a
// pattern matching on most lines, and find_files **/*.go, in one turn.
// Metric: peak-above-idle-MB, VmHWM during the turn less VmRSS at
// the daemon's idle between turns (after a first turn, which loads the
// tokenizer; issue 31's target: 20 MB).
func BenchmarkDaemonGrepMemory(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(filepath.Join(src, "net", "http")); err != nil {
		b.Skipf("no Go source tree at %s", src)
	}
	var above []float64
	for b.Loop() {
		fake := openaitest.New(b, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
		env := []string{"OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY="}
		s := lsptest.Binary(b, env, "serve", "--data-dir", b.TempDir())
		s.Initialize(lsptest.InitOptions{RootURI: "file://" + src})
		// Idle between turns: after a first turn (its tokenizer loaded, its
		// session made and titled), the peak reset once it has settled.
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Hello."}})
		var first api.ChatResult
		s.MustCommand(api.Chat, map[string]any{"message": "hello"}, &first)
		time.Sleep(2 * time.Second)
		runtimeSettle(s)
		_, idle := procMem(b, s.Pid)
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.Pid), []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the daemon's peak memory: %v", err)
		}
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "g1", Name: "grep", Arguments: `{"pattern":"func main"}`},
				{ID: "g2", Name: "grep", Arguments: `{"pattern":"func \\w+Handler\\("}`},
				{ID: "g3", Name: "grep", Arguments: `{"pattern":"e"}`},
				{ID: "f1", Name: "find_files", Arguments: `{"pattern":"**/*.go"}`},
			}},
			openaitest.Reply{Chunks: []string{"Found."}},
		)
		var res api.ChatResult
		s.MustCommand(api.Chat, map[string]any{"sessionId": first.SessionID, "message": "where is the handler?"}, &res)
		found := 0
		for _, r := range fake.Requests() {
			for _, m := range r.Parsed.Messages {
				if m.Role == "tool" && !strings.HasPrefix(m.Content, "error") {
					found++
				}
			}
		}
		if found != 4 {
			b.Fatalf("%d of 4 searches gave a result", found)
		}
		hwm, _ := procMem(b, s.Pid)
		above = append(above, float64(hwm-idle)/(1<<20))
		s.Shutdown()
		s.Exit()
	}
	slices.Sort(above)
	b.ReportMetric(above[len(above)/2], "peak-above-idle-MB")
	b.ReportMetric(0, "ns/op")
}
