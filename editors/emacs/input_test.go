package emacs_test

import (
	"slices"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsInputHistory: M-p and M-n bring back earlier questions in the
// *ctxls question* buffer and at the ctxls-ask prompt, one history for
// both; what they brought back, changed, reaches the model as sent.
func TestEmacsInputHistory(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"first ", "answer"}},
			openaitest.Reply{Chunks: []string{"second ", "answer"}},
			openaitest.Reply{Chunks: []string{"third ", "answer"}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-input-history")
		var asked []string
		for _, req := range fake.Streamed() { // the turns, not the title
			asked = append(asked, req.Question())
		}
		if want := []string{"first question", "first question again", "first question, once more"}; !slices.Equal(asked, want) {
			t.Errorf("the model was asked %q, want %q", asked, want)
		}
	})
}
