package emacs_test

import (
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsUndo: a turn (review mode auto) edits main.go, visited with
// unsaved text, and sync.txt, and creates pkg/new.go; the user types in
// sync.txt; C-c x u (ctxls-undo) puts main.go's buffer back to its
// unsaved text exactly, removes new.go and kills its buffer, leaves
// sync.txt and names it, in the chat and the echo area; C-/ takes the
// undo back; ctxls-redo makes the changes again; a second redo says
// there is nothing to redo. Asked again (ctxls-regenerate), the
// question whose turn made the changes offers to undo them too: y undoes
// them before the question goes; a turn without changes offers nothing.
// ctxls-test-undo in test/ctxls-test.el.
func TestEmacsUndo(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Undo session"}}))
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "u1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"héllo\")","new_string":"héllo, undo\")"}`},
				{ID: "u2", Name: "edit_file", Arguments: `{"path":"sync.txt","old_string":"first line","new_string":"FIRST line"}`},
				{ID: "u3", Name: "create_file", Arguments: `{"path":"pkg/new.go","content":"package pkg\n"}`},
			}},
			openaitest.Reply{Chunks: []string{"Done."}},
			openaitest.Reply{Chunks: []string{"Again."}},
			openaitest.Reply{Chunks: []string{"Once more."}},
		)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-undo")
	})
}
