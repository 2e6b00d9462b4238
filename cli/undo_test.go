package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestSessionsUndoRedo: "ctxls sessions undo" takes back the files on disk
// as the session's last turn left them (a created file removed, a file
// changed since left and named, exit 0), "redo" makes the changes again,
// --json gives the result as is, and nothing to undo is an error.
func TestSessionsUndoRedo(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	work := t.TempDir()
	write := func(name, text string) { os.WriteFile(filepath.Join(work, name), []byte(text), 0o644) }
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(work, name)); return string(b) }
	write("main.go", "package main\n\nfunc main() {}\n")
	write("kept.go", "package main\n\nvar k = 1\n")
	env := []string{"CTXLS_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY=sk-test-not-real"}
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{
		{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { run() }"}`},
		{ID: "e2", Name: "edit_file", Arguments: `{"path":"kept.go","old_string":"var k = 1","new_string":"var k = 2"}`},
		{ID: "e3", Name: "create_file", Arguments: `{"path":"new.go","content":"package main\n"}`},
	}}, openaitest.Reply{Chunks: []string{"Done."}})
	if _, errOut, code := lsptest.Run(t, work, env, "chat", "--base-url", fake.URL, "--model", "test-model", "--edits", "auto", "change things"); code != 0 {
		t.Fatalf("chat: %d\n%s", code, errOut)
	}
	out, _, _ := lsptest.Run(t, work, env, "sessions", "list", "--json")
	var list struct{ Sessions []struct{ ID string } }
	if json.Unmarshal([]byte(out), &list); len(list.Sessions) != 1 {
		t.Fatalf("sessions: %s", out)
	}
	id := list.Sessions[0].ID
	write("kept.go", read("kept.go")+"// mine\n") // the user's change since

	out, errOut, code := lsptest.Run(t, work, env, "sessions", "undo", id[:8])
	main, kept, created := filepath.Join(work, "main.go"), filepath.Join(work, "kept.go"), filepath.Join(work, "new.go")
	want := "Undid the model's changes to 2 files:\n- " + created + "\n- " + main + "\nLeft as it is:\n- " + kept + ": it changed since the turn, after the model's change\n"
	if code != 0 || out != want {
		t.Errorf("undo: %d\n%q\nwant\n%q\n%s", code, out, want, errOut)
	}
	if read("main.go") != "package main\n\nfunc main() {}\n" || read("kept.go") != "package main\n\nvar k = 2\n// mine\n" {
		t.Errorf("after undo: %q %q", read("main.go"), read("kept.go"))
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Errorf("the created file: %v", err)
	}

	out, _, code = lsptest.Run(t, work, env, "sessions", "redo", id, "--json")
	var res struct {
		SessionID string
		Restored  []string
		Left      []struct{ Path, Reason string }
	}
	if json.Unmarshal([]byte(out), &res); code != 0 || res.SessionID != id || strings.Join(res.Restored, ",") != main+","+created || len(res.Left) != 0 {
		t.Errorf("redo --json: %d %s", code, out)
	}
	if read("main.go") != "package main\n\nfunc main() { run() }\n" || read("new.go") != "package main\n" {
		t.Errorf("after redo: %q %q", read("main.go"), read("new.go"))
	}
	lsptest.Run(t, work, env, "sessions", "undo", id)
	lsptest.Run(t, work, env, "sessions", "undo", id) // kept.go is left again: nothing else
	if _, errOut, code := lsptest.Run(t, work, env, "sessions", "redo", id); code != 0 {
		t.Errorf("redo after two undos: %d %s", code, errOut)
	}
	if _, errOut, code := lsptest.Run(t, work, env, "sessions", "redo", id); code == 0 || !strings.Contains(errOut, "nothing to redo") {
		t.Errorf("nothing to redo: %d %q", code, errOut)
	}
}
