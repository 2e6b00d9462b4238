package nvim_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimUndo: in the auto review mode a turn edits main.go (open,
// with an unsaved line) and typed.go and creates pkg/new.go (shown in a
// window); the user types in typed.go. :CtxlsUndo puts main.go's buffer
// back to the unsaved text exactly, wipes new.go's buffer (its window
// stays, showing another buffer) and leaves typed.go, named in the chat's
// note; the cursor stays in the user's window. u in main.go takes the undo
// back, <C-r> makes it again; :CtxlsRedo applies the turn again, a second
// says there is nothing to redo. :CtxlsRetry offers to undo the file
// changes of the turn it takes back, and does before asking again (the
// model's answer then is the default reply). test/undo.lua is the person at the
// keyboard.
func TestNeovimUndo(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimUndo)
}

func testNeovimUndo(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Undo session"}}))
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "u1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"println(\"hello\")","new_string":"println(\"hello, world\")"}`},
			{ID: "u2", Name: "edit_file", Arguments: `{"path":"typed.go","old_string":"var n = 1","new_string":"var n = 2"}`},
			{ID: "u3", Name: "create_file", Arguments: `{"path":"pkg/new.go","content":"package pkg\n"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	mainText := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	os.WriteFile(file, []byte(mainText), 0o644)
	os.WriteFile(filepath.Join(work, "typed.go"), []byte("package typed\n\nvar n = 1\n"), 0o644)

	runNvim(t, nvim, work, "undo.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+t.TempDir(), "CTXLS_TEST_FILE="+file,
		"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir()), 90*time.Second, "undo")

	if b, _ := os.ReadFile(file); string(b) != mainText {
		t.Errorf("main.go on disk: %q", b)
	}
	if _, err := os.Stat(filepath.Join(work, "pkg", "new.go")); err == nil {
		t.Error("pkg/new.go is on disk")
	}
}
