package e2e_test

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
)

// BenchmarkInputReuse is issue 23's "input reuse" benchmark: a scripted
// session of 20 turns over LSP (answers of about 1,200 bytes) with five
// relevant files of 20 KB open in the editor, in which the user edits one
// relevant file (the next in turn, unsaved) before every third turn. For each
// turn after the first it takes the share of the model input, in bytes of
// the request's JSON messages, that is a common prefix with the previous
// turn's input: what a provider's prompt cache can serve at a discount.
// Metrics: reuse-median-pct (over the 19 turns), reuse-quiet-min-pct (the
// least on a turn no edit preceded) and reuse-edit-median-pct (the turns
// an edit preceded).
func BenchmarkInputReuse(b *testing.B) {
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
		var files, texts []string
		for i := range 5 {
			p := filepath.Join(root, fmt.Sprintf("f%d.go", i))
			// 20 KB: 640 lines of 32 bytes.
			text := strings.Repeat(fmt.Sprintf("func f%d() { /* some code */ }\n", i), 640)
			os.WriteFile(p, []byte(text), 0o644)
			files, texts = append(files, p), append(texts, text)
			s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + p, "languageId": "go", "version": 1, "text": text}})
		}
		s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": files}, nil)
		edited := map[int]bool{}
		for turn := range 20 {
			if turn%3 == 2 {
				// The user edits the next relevant file, unsaved, then asks.
				k := (turn / 3) % len(files)
				texts[k] = strings.Replace(texts[k], "/* some code */", fmt.Sprintf("/* edit %d */", turn), 1)
				s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file://" + files[k], "version": turn + 2},
					"contentChanges": []any{map[string]any{"text": texts[k]}}})
				edited[turn] = true
			}
			s.MustCommand(api.Chat, map[string]any{"message": fmt.Sprintf("question %d about the code", turn)}, nil)
		}
		turns := fake.Streamed()
		if len(turns) != 20 {
			b.Fatalf("%d requests, want 20", len(turns))
		}
		var all, quiet, afterEdit []float64
		for i := 1; i < len(turns); i++ {
			pct := sharedPrefix(turns[i-1].Parsed.Messages, turns[i].Parsed.Messages)
			all = append(all, pct)
			if edited[i] {
				afterEdit = append(afterEdit, pct)
			} else {
				quiet = append(quiet, pct)
			}
			if os.Getenv("CTXLS_BENCH_VERBOSE") != "" {
				b.Logf("turn %2d edited=%v reuse %.1f%%", i, edited[i], pct)
			}
		}
		b.ReportMetric(medianPct(all), "reuse-median-pct")
		b.ReportMetric(slices.Min(quiet), "reuse-quiet-min-pct")
		b.ReportMetric(medianPct(afterEdit), "reuse-edit-median-pct")
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

// medianPct is the median of v.
func medianPct(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
