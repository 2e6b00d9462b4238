package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/benchutil"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// BenchmarkUndo100Files measures the undo of a turn that changed 100 open
// files (issue 32's target: 100 ms): from the ctxls.session.undo command
// sent to the last workspace/applyEdit the editor receives. The fake
// editor keeps real buffers and applies each edit before it answers (as
// VS Code does, telling the daemon with didChange); a redo after each
// undo, not timed, makes the changes again. Metric: undo-ms (median).
func BenchmarkUndo100Files(b *testing.B) {
	fake := openaitest.New(b, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"ok"}}))
	root := b.TempDir()
	rootURI := "file://" + root
	s := lsptest.Binary(b, []string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_CPUPROFILE=" + os.Getenv("UNDO_BENCH_PROFILE")}, "serve", "--data-dir", b.TempDir())
	ed := &bufferEditor{t: b, s: s, doc: map[string]*fakeDoc{}}
	var mu sync.Mutex
	var last time.Time
	s.OnServerRequest(func(method string, params json.RawMessage) (any, *lsptest.RPCError) {
		res, rerr := ed.handle(method, params)
		if method == "workspace/applyEdit" {
			mu.Lock()
			last = time.Now()
			mu.Unlock()
		}
		return res, rerr
	})
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
	s.SetTimeout(60 * time.Second)
	line := "\tfmt.Println(\"a line of some Go code, é\") // 😀\n"
	var calls []openaitest.ToolCall
	for i := range 100 {
		name := fmt.Sprintf("f%03d.go", i)
		text := "package main\n\nfunc f() {\n" + strings.Repeat(line, 200) + "\tmarker()\n}\n"
		os.WriteFile(root+"/"+name, []byte(text), 0o644)
		ed.open(rootURI+"/"+name, text+"// unsaved\n")
		calls = append(calls, openaitest.ToolCall{ID: fmt.Sprintf("e%d", i), Name: "edit_file",
			Arguments: `{"path":"` + name + `","old_string":"\tmarker()\n","new_string":"\tmarker(1)\n"}`})
	}
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "many edits"}, &created)
	id := created.Session.ID
	s.MustCommand(api.SetReviewMode, map[string]any{"sessionId": id, "mode": "auto"}, nil)
	fake.Enqueue(openaitest.Reply{ToolCalls: calls}, openaitest.Reply{Chunks: []string{"Done."}})
	s.MustCommand(api.Chat, map[string]any{"sessionId": id, "message": "edit them all"}, nil)
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		var res api.UndoResult
		s.MustCommand(api.SessionUndo, map[string]any{"sessionId": id}, &res)
		mu.Lock()
		at := last
		mu.Unlock()
		if len(res.Restored) != 100 || len(res.Left) != 0 {
			b.Fatalf("the undo: %d restored, left %+v", len(res.Restored), res.Left)
		}
		times = append(times, at.Sub(start))
		s.MustCommand(api.SessionRedo, map[string]any{"sessionId": id}, &res)
		if len(res.Restored) != 100 {
			b.Fatalf("the redo: %d restored, left %+v", len(res.Restored), res.Left)
		}
	}
	b.ReportMetric(benchutil.MS(benchutil.Percentile(times, 50)), "undo-ms")
	b.ReportMetric(0, "ns/op")
}
