package emacs_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestEmacsMentions: "@log" completed (C-M-i) in the question buffer to
// auth/login.go, and "@sy" (TAB) at the prompt to sync.txt: each question
// reaches the model as typed, with the mentioned file's text.
func TestEmacsMentions(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"It ", "redirects."}},
			openaitest.Reply{Chunks: []string{"They ", "differ."}})
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		if err := os.MkdirAll(filepath.Join(r.work, "auth"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.work, "auth", "login.go"), []byte("package auth\n\nfunc loginRedirect() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.run(t, "ctxls-test-mentions")
		turns := fake.Streamed()
		if len(turns) != 2 {
			t.Fatalf("%d turns reached the model, want 2", len(turns))
		}
		for i, want := range []struct{ question, file string }{
			{"what does @auth/login.go do?", "func loginRedirect() {}"},
			{"compare @sync.txt to it", "third line with tabs\tand spaces"},
		} {
			if q := turns[i].Question(); q != want.question {
				t.Errorf("turn %d: the model was asked %q, want %q", i+1, q, want.question)
			}
			if c := turns[i].TurnContext(); !strings.Contains(c, want.file) {
				t.Errorf("turn %d: the mentioned file did not go with the question:\n%s", i+1, c)
			}
		}
	})
}
