package nvim_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimEdits: the model edits main.go, open with an unsaved line:
// each edit is shown in a diff tab, accepted with ga (in the buffer,
// unsaved; u takes it back), rejected with gr, applied beside what the
// user typed in the file during the review, rejected by closing the tab; gA
// accepts the rest of the turn, a new file among them (a buffer, not on
// disk); in the auto mode a file not open is edited unasked, and an
// edit of main.go is an undo step of its own; an edit of two changes is
// accepted with one left out (gs). The model is
// told what became of each edit. test/edits.lua is the person at the
// keyboard.
func TestNeovimEdits(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimEdits)
}

func testNeovimEdits(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	edit := func(id, path, old, new string) openaitest.ToolCall {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		return openaitest.ToolCall{ID: id, Name: "edit_file", Arguments: fmt.Sprintf(`{"path":%s,"old_string":%s,"new_string":%s}`, q(path), q(old), q(new))}
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			edit("e1", "main.go", `println("hello")`, `println("hello, world")`),
			edit("e2", "main.go", "func main() {", "func main() { // rejected"),
		}},
		openaitest.Reply{Chunks: []string{"Done A.\n\n```go\n// from the chat\nvar fromChat = 1\n```\n"}},
		openaitest.Reply{Chunks: []string{"Edit session"}}, // the title
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			edit("e3", "main.go", "package main", "package main // typed over"),
			edit("e4", "main.go", "hello, world", "hello, tab"),
			edit("e5", "main.go", "hello, world", "hello, all"),
			edit("e5b", "main.go", "func main() {", "func main() { // all"),
			{ID: "e6", Name: "create_file", Arguments: `{"path":"pkg/new.go","content":"package pkg\n"}`},
		}},
		openaitest.Reply{Chunks: []string{"Done B."}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			edit("e7", "closed.txt", "two", "2"),
			edit("e8", "closed.txt", "one", "1"),
			edit("e9", "main.go", "hello, all", "hello, auto"),
		}},
		openaitest.Reply{Chunks: []string{"Done C."}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			edit("e10", "letters.txt", "a\nb\nc\nd\ne\nf\ng\nh\n", "A\nb\nc\nd\ne\nf\ng\nH\n"),
			edit("e11", "letters.txt", "i\n", "I\n"),
		}},
		openaitest.Reply{Chunks: []string{"Done D."}},
	)
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	mainText := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	os.WriteFile(file, []byte(mainText), 0o644)
	os.WriteFile(filepath.Join(work, "closed.txt"), []byte("one\ntwo\n"), 0o644)
	os.WriteFile(filepath.Join(work, "letters.txt"), []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\n"), 0o644)

	runNvim(t, nvim, work, "edits.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+t.TempDir(), "CTXLS_TEST_FILE="+file,
		"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir()), 90*time.Second, "edits")

	// What the model was told of each edit.
	results := map[string]string{}
	for _, r := range fake.Requests() {
		for id, c := range r.ToolResults() {
			results[id] = c
		}
	}
	for id, want := range map[string][]string{
		"e1":  {"edited " + file, "unsaved until the user saves it", `+	println("hello, world")`},
		"e2":  {"The user rejected this edit of " + file},
		"e3":  {"edited " + file, "+package main // typed over"},
		"e4":  {"The user rejected this edit of " + file},
		"e5":  {"edited " + file},
		"e5b": {"edited " + file, "+func main() { // all"},
		"e6":  {"created " + filepath.Join(work, "pkg", "new.go"), "+package pkg"},
		"e7":  {"edited " + filepath.Join(work, "closed.txt")},
		"e8":  {"edited " + filepath.Join(work, "closed.txt")},
		"e9":  {"edited " + file},
		"e10": {"edited " + filepath.Join(work, "letters.txt"), "only in part", "+H"},
		"e11": {"was not applied: the text it replaces was changed in the editor while the edit waited", "read it again", "i changed"},
	} {
		for _, w := range want {
			if !strings.Contains(results[id], w) {
				t.Errorf("%s: the model got %q, which lacks %q", id, results[id], w)
			}
		}
	}
	if strings.Contains(results["e10"], "+A") {
		t.Errorf("e10: the change left out was applied: %q", results["e10"])
	}
	// Nothing was written to disk.
	if b, _ := os.ReadFile(file); string(b) != mainText {
		t.Errorf("main.go on disk: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "closed.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("closed.txt on disk: %q", b)
	}
	if _, err := os.Stat(filepath.Join(work, "pkg")); err == nil {
		t.Error("pkg/ was made on disk")
	}
}
