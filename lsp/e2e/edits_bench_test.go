package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/benchutil"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// BenchmarkEditApply10MB measures what an edit of a 10 MB open buffer costs
// the daemon (auto review mode): from the end of the provider's answer
// holding the edit_file call to the workspace/applyEdit the editor
// receives: finding old_string in the editor's text, the new text, the
// diff, the range in UTF-16 and the message. Metric: apply-ms (median; the
// target is 5 ms).
func BenchmarkEditApply10MB(b *testing.B) {
	fake := openaitest.New(b, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"ok"}}))
	root := b.TempDir()
	s := lsptest.Binary(b, []string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_CPUPROFILE=" + os.Getenv("EDIT_BENCH_PROFILE")}, "serve", "--data-dir", b.TempDir())
	var mu sync.Mutex
	var got time.Time
	s.OnServerRequest(func(method string, params json.RawMessage) (any, *lsptest.RPCError) {
		if method == "workspace/applyEdit" {
			mu.Lock()
			got = time.Now()
			mu.Unlock()
			return map[string]any{"applied": false, "failureReason": "a benchmark applies nothing"}, nil
		}
		return lsptest.DefaultServerRequests(method, params)
	})
	s.Initialize(lsptest.InitOptions{RootURI: "file://" + root, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
	s.SetTimeout(60 * time.Second)
	line := "\tfmt.Println(\"a line of some Go code, é\") // 😀\n"
	text := "package main\n\nfunc main() {\n" + strings.Repeat(line, 10<<20/len(line)) + "\tmarker()\n}\n"
	uri := "file://" + filepath.Join(root, "big.go")
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	// A session with its title given: a title request made in the background
	// after the first turn would take the reply enqueued for the next (and
	// that turn would edit nothing, leaving the last figure in place).
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "big edits"}, &created)
	s.MustCommand(api.SetReviewMode, map[string]any{"sessionId": created.Session.ID, "mode": "auto"}, nil)
	var times []time.Duration
	for b.Loop() {
		fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e", Name: "edit_file",
			Arguments: `{"path":"big.go","old_string":"\tmarker()\n","new_string":"\tmarker(1)\n"}`}}})
		n := len(fake.Streamed())
		s.MustCommand(api.Chat, map[string]any{"sessionId": created.Session.ID, "message": "edit the big file"}, nil)
		reqs := fake.Streamed()
		mu.Lock()
		at := got
		mu.Unlock()
		if !strings.Contains(fake.LastStreamed().ToolResults()["e"], "a benchmark applies nothing") {
			b.Fatalf("the edit: %q", fake.LastStreamed().ToolResults()["e"])
		}
		if reqs[n].FinishedAt.IsZero() || !at.After(reqs[n].FinishedAt) {
			b.Fatalf("the turn's first round finished at %v, the edit reached the editor at %v", reqs[n].FinishedAt, at)
		}
		times = append(times, at.Sub(reqs[n].FinishedAt))
	}
	if all, streamed := len(fake.Requests()), len(fake.Streamed()); all != streamed {
		b.Fatalf("%d requests besides the turns' (a title request?)", all-streamed)
	}
	b.ReportMetric(benchutil.MS(benchutil.Percentile(times, 50)), "apply-ms")
	b.ReportMetric(0, "ns/op")
}
