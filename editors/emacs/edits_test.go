package emacs_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsEdits: the model edits main.go, visited with an unsaved line
// (its path has a space and a non-ASCII letter, the edit an emoji): each
// edit is shown in a diff-mode buffer, accepted with C-c C-c (in the
// buffer, unsaved; undo takes it back), rejected with q and C-c C-k, refused by
// the editor when the user typed during the review, rejected by killing
// the diff; C-c C-a accepts the rest of the turn, a new file among them (a
// buffer, not on disk); in the auto mode a file not visited is edited
// unasked. The model is told what became of each edit. ctxls-test-edits
// in test/ctxls-test.el is the person at the keyboard.
func TestEmacsEdits(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t)
		edit := func(id, path, old, new string) openaitest.ToolCall {
			q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
			return openaitest.ToolCall{ID: id, Name: "edit_file", Arguments: fmt.Sprintf(`{"path":%s,"old_string":%s,"new_string":%s}`, q(path), q(old), q(new))}
		}
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				edit("e1", "main.go", `fmt.Println("héllo")`, `fmt.Println("héllo, wörld 😀")`),
				edit("e2", "main.go", "func main() {", "func main() { // rejected"),
				edit("e2b", "main.go", `import "fmt"`, `import "os"`),
			}},
			openaitest.Reply{Chunks: []string{"Done A.\n\n```go\n// from the chat\nvar fromChat = 1\n```\n"}},
			openaitest.Reply{Chunks: []string{"Edit session"}}, // the title
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				edit("e3", "main.go", "package main", "package main // typed over"),
				edit("e4", "main.go", "héllo, wörld", "héllo, killed"),
				edit("e5", "main.go", "héllo, wörld", "héllo, all"),
				edit("e5b", "main.go", "func main() {", "func main() { // all"),
				{ID: "e6", Name: "create_file", Arguments: `{"path":"pkg/new.go","content":"package pkg\n"}`},
			}},
			openaitest.Reply{Chunks: []string{"Done B."}},
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				edit("e7", "tool.py", "def greet(name):", "def hello(name):"),
				edit("e8", "tool.py", "'hi '", "'hello '"),
				edit("e9", "main.go", "héllo, all", "héllo, auto"),
			}},
			openaitest.Reply{Chunks: []string{"Done C."}},
		)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		file := filepath.Join(r.work, "main.go")
		mainText, _ := os.ReadFile(file)
		r.run(t, "ctxls-test-edits")

		results := map[string]string{}
		for _, req := range fake.Requests() {
			for id, c := range req.ToolResults() {
				results[id] = c
			}
		}
		for id, want := range map[string][]string{
			"e1":  {"edited " + file, "unsaved until the user saves it", `+	fmt.Println("héllo, wörld 😀")`},
			"e2":  {"The user rejected this edit of " + file},
			"e2b": {"The user rejected this edit of " + file},
			"e3":  {"edited " + file, "+package main // typed over"}, // beside the line typed during its review
			"e4":  {"The user rejected this edit of " + file},
			"e5":  {"edited " + file},
			"e5b": {"edited " + file, "+func main() { // all"},
			"e6":  {"created " + filepath.Join(r.work, "pkg", "new.go"), "+package pkg"},
			"e7":  {"edited " + filepath.Join(r.work, "tool.py")},
			"e8":  {"edited " + filepath.Join(r.work, "tool.py")},
			"e9":  {"edited " + file},
		} {
			for _, w := range want {
				if !strings.Contains(results[id], w) {
					t.Errorf("%s: the model got %q, which lacks %q", id, results[id], w)
				}
			}
		}
		if b, _ := os.ReadFile(file); string(b) != string(mainText) {
			t.Errorf("main.go on disk: %q", b)
		}
		if _, err := os.Stat(filepath.Join(r.work, "pkg")); err == nil {
			t.Error("pkg/ was made on disk")
		}
	})
}
