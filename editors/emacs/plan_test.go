package emacs_test

import (
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsPlan: the model's plan (its update_plan call) is a task list in
// the chat under the call's line ("• plan — 1 of 3 done"), shown, not
// hidden like other outputs; a resumed session shows it the same.
func TestEmacsPlan(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Plan session"}}))
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "update_plan", Arguments: `{"items":[` +
				`{"content":"Read main.go","status":"completed"},` +
				`{"content":"Fix the handler","status":"in_progress","priority":"high"},` +
				`{"content":"Run the tests","status":"pending"}]}`}}},
			openaitest.Reply{Chunks: []string{"Planned."}},
		)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: t.TempDir(), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-plan")
		r.run(t, "ctxls-test-plan-resume")
	})
}
