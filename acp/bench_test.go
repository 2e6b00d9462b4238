package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/benchutil"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// BenchmarkACPInitialize measures `ctxls acp` from spawn to the initialize
// answer, with a store of its own each time (so a store's first open, with
// its migrations), and the first command, session/list, sent the moment
// that answer arrives: the store opens after the answer, and what a client
// that asks at once waits for it shows here. Metrics (medians): start-ms
// (the LSP door's target is 10 ms), first-ms (session/list from its send)
// and first-spawn-ms (from spawn to session/list's answer).
func BenchmarkACPInitialize(b *testing.B) {
	bin := lsptest.BuildBinary(b)
	var times, first, firstSpawn []time.Duration
	for b.Loop() {
		dir := b.TempDir()
		start := time.Now()
		c := acptest.Start(b, bin, []string{"acp", "--data-dir", dir}, nil)
		if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		sent := time.Now()
		if err := c.Call("session/list", map[string]any{}, nil); err != nil {
			b.Fatal(err)
		}
		first, firstSpawn = append(first, time.Since(sent)), append(firstSpawn, time.Since(start))
		c.Close()
	}
	b.ReportMetric(benchutil.MS(benchutil.Percentile(times, 50)), "start-ms")
	b.ReportMetric(benchutil.MS(benchutil.Percentile(first, 50)), "first-ms")
	b.ReportMetric(benchutil.MS(benchutil.Percentile(firstSpawn, 50)), "first-spawn-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkACPFirstChunkOverhead measures the time from session/prompt to
// the first agent_message_chunk against the same first chunk asked for
// directly with go-openai, alternately, on a session with history and two
// relevant files (one embedded as the editor's text). Metrics: acp-ms,
// direct-ms (medians) and overhead-ms (the difference; the LSP door's
// target is 2 ms).
func BenchmarkACPFirstChunkOverhead(b *testing.B) {
	fake := openaitest.New(b, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"first", " second", " third"}}))
	bin := lsptest.BuildBinary(b)
	cwd := b.TempDir()
	c := acptest.Start(b, bin, []string{"acp", "--data-dir", b.TempDir(), "--base-url", fake.URL, "--model", "test-model"},
		[]string{"OPENAI_API_KEY=sk-test-not-real"})
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		b.Fatal(err)
	}
	var ns struct{ SessionID string }
	if err := c.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &ns); err != nil {
		b.Fatal(err)
	}
	var files []string
	for i := range 2 {
		p := filepath.Join(cwd, "f"+string(rune('0'+i))+".go")
		if err := os.WriteFile(p, []byte(strings.Repeat("package main // some code\n", 400)), 0o600); err != nil {
			b.Fatal(err)
		}
		files = append(files, p)
	}
	if err := c.Call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{
		map[string]any{"type": "text", "text": "/add " + strings.Join(files, " ")}}}, nil); err != nil {
		b.Fatal(err)
	}
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = fake.URL
	client := openai.NewClientWithConfig(cfg)
	ctx := context.Background()
	turn := func() time.Duration {
		from := len(c.Updates(""))
		start := time.Now()
		reply := c.Async("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{
			map[string]any{"type": "text", "text": "question"},
			map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + files[0], "text": "package main // unsaved\n"}},
		}})
		c.WaitUpdateFrom(from, "first chunk", func(u acptest.Update) bool {
			return u.SessionID == ns.SessionID && u.Kind == "agent_message_chunk"
		})
		d := time.Since(start)
		if m := <-reply; m.Error != nil {
			b.Fatalf("prompt: %+v", m.Error)
		}
		return d
	}
	turn() // warm both paths (connections, the tokenizer's first load)
	if _, err := benchutil.FirstChunkDirect(ctx, client); err != nil {
		b.Fatal(err)
	}
	var viaACP, direct []time.Duration
	for b.Loop() {
		viaACP = append(viaACP, turn())
		// The same request, sent directly (see benchutil.FirstChunkOf).
		req, err := benchutil.LastAsked(parsed(fake.Streamed()), "question")
		if err != nil {
			b.Fatal(err)
		}
		d, err := benchutil.FirstChunkOf(ctx, client, req)
		if err != nil {
			b.Fatal(err)
		}
		direct = append(direct, d)
	}
	b.StopTimer()
	if reqs := fake.Requests(); !strings.Contains(reqs[len(reqs)-2].ModelContext(), "package main // unsaved") {
		b.Fatal("the agent's request did not carry the relevant files")
	}
	am, dm := benchutil.Percentile(viaACP, 50), benchutil.Percentile(direct, 50)
	b.ReportMetric(benchutil.MS(am), "acp-ms")
	b.ReportMetric(benchutil.MS(dm), "direct-ms")
	b.ReportMetric(benchutil.MS(am-dm), "overhead-ms")
	b.ReportMetric(0, "ns/op")
}

// parsed is the requests' parsed bodies.
func parsed(reqs []openaitest.Request) []openai.ChatCompletionRequest {
	out := make([]openai.ChatCompletionRequest, len(reqs))
	for i, r := range reqs {
		out[i] = r.Parsed
	}
	return out
}
