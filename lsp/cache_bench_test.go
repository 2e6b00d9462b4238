package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/prompts"
)

// BenchmarkCachePrefix measures how much of each turn's model input repeats
// the previous turn's from its beginning (what a provider's prompt cache can
// serve at a discount) in a session of 20 turns (answers of about 1,200
// bytes) with three relevant files of 4.5 KB, one of which the user edits
// before every turn (the common case). It
// compares the layout ctxls sends (the turn's context before the last
// message) with the earlier one (the context in the system prompt), built
// from the same requests. Metrics: shared-pct and shared-pct-old (the
// median share of a turn's input, in bytes of its JSON messages, that is
// the previous turn's prefix).
func BenchmarkCachePrefix(b *testing.B) {
	for b.Loop() {
		// An answer of about 1,200 bytes: some prose and a code block.
		answer := strings.Repeat("The function reads the file, then checks each line. ", 12) + "\n\n```go\n" +
			strings.Repeat("if err != nil {\n\treturn err\n}\n", 15) + "```\n"
		fake := openaitest.New(b, openaitest.WithDefault(openaitest.Reply{Chunks: []string{answer}}))
		root := b.TempDir()
		s := lsptest.Binary(b, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", b.TempDir())
		s.Initialize(lsptest.InitOptions{RootURI: "file://" + root, InitOptions: map[string]any{
			"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"},
		}})
		var files []string
		for i := range 3 {
			p := filepath.Join(root, fmt.Sprintf("f%d.go", i))
			os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("func f%d() { /* some code */ }\n", i), 150)), 0o644)
			files = append(files, p)
		}
		uri := "file://" + files[0]
		text, _ := os.ReadFile(files[0])
		s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": string(text)}})
		s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": files}, nil)
		for turn := range 20 {
			// The user edits the first relevant file, then asks.
			edited := strings.Replace(string(text), "/* some code */", fmt.Sprintf("/* edit %d */", turn), 1)
			s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": turn + 2},
				"contentChanges": []any{map[string]any{"text": edited}}})
			s.MustCommand(api.Chat, map[string]any{"message": fmt.Sprintf("question %d about the code", turn)}, nil)
		}
		turns := fake.Streamed()
		var now, old []float64
		for i := 1; i < len(turns); i++ {
			now = append(now, sharedPrefix(turns[i-1].Parsed.Messages, turns[i].Parsed.Messages))
			old = append(old, sharedPrefix(oldLayout(turns[i-1].Parsed.Messages), oldLayout(turns[i].Parsed.Messages)))
		}
		b.ReportMetric(medianPct(now), "shared-pct")
		b.ReportMetric(medianPct(old), "shared-pct-old")
		b.ReportMetric(now[len(now)-1], "shared-pct-last")
		b.ReportMetric(old[len(old)-1], "shared-pct-old-last")
		s.Shutdown()
		s.Exit()
	}
	b.ReportMetric(0, "ns/op")
}

// sharedPrefix is the share (in percent) of b's messages, as JSON, that
// repeats a's from the beginning.
func sharedPrefix(a, b []openai.ChatCompletionMessage) float64 {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	n := 0
	for n < len(x) && n < len(y) && x[n] == y[n] {
		n++
	}
	return 100 * float64(n) / float64(len(y))
}

// oldLayout is the same input as ctxls laid it out before issue 23: the
// turn's context inside the system prompt, the last message the question.
func oldLayout(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := append([]openai.ChatCompletionMessage{}, msgs...)
	last := len(out) - 1
	ctx, q := prompts.SplitContext(out[last].Content)
	out[0].Content += "\n" + ctx
	out[last].Content = q
	return out
}

// medianPct is the median of v.
func medianPct(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
