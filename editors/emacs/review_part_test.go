package emacs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsReviewPart: an edit of two changes (two hunks) is accepted in
// *ctxls review* with one left out (k on its hunk, then C-c C-c): the
// buffer gets the other change only, and the model is told the edit was
// applied only in part, with the diff that was.
func TestEmacsReviewPart(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
		args, _ := json.Marshal(map[string]string{"path": "letters.txt", "old_string": old, "new_string": strings.Replace(strings.Replace(old, "a\n", "A\n", 1), "l\n", "L\n", 1)})
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Letters"}}))
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "h1", Name: "edit_file", Arguments: string(args)}}},
			openaitest.Reply{Chunks: []string{"Done."}},
		)
		work := t.TempDir()
		os.WriteFile(filepath.Join(work, "letters.txt"), []byte(old), 0o644)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: work, dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-review-part")
		var got string
		for _, req := range fake.Requests() {
			if c, ok := req.ToolResults()["h1"]; ok {
				got = c
			}
		}
		if !strings.Contains(got, "only in part") || !strings.Contains(got, "+L") || strings.Contains(got, "+A") {
			t.Errorf("the model was told: %q", got)
		}
		if b, _ := os.ReadFile(filepath.Join(work, "letters.txt")); string(b) != old {
			t.Errorf("letters.txt on disk: %q", b)
		}
	})
}
