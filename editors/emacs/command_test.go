package emacs_test

import (
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsCommand: the model's run_command calls. The user allows the
// first through the chat's question (y typed in the chat's window); while
// it sleeps, its output so far is drawn in a fenced block under the call's
// line ("▸ run_command `printf …` — running"), shown, not hidden, point
// in the user's buffer and the selected window left alone; at its end the
// block has the whole output with "[exit status 2]" and the line says
// "failed: exit status 2" in the failed face. The second (always allowed)
// prints 40 lines: the block shows the last ones under "… N lines above",
// RET on the line shows them all. A resumed session shows both the same.
// ctxls-test-command in test/ctxls-test.el.
func TestEmacsCommand(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Command session"}}))
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r1", Name: "run_command",
				Arguments: `{"command":"printf 'line one\\nline two\\n'; sleep 1; echo done; exit 2"}`}}},
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r2", Name: "run_command",
				Arguments: `{"command":"seq 1 40"}`}}},
			openaitest.Reply{Chunks: []string{"Ran them."}},
		)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-command")
		r.run(t, "ctxls-test-command-resume")
	})
}
