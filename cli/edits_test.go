package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestChatEdits: "ctxls chat" and the model's edits to the files on disk:
// with no terminal an edit is not made, the user told and the model told
// it could not be asked; on a terminal (a pty from script(1)) its diff is
// shown and "y" applies it; --edits auto applies at once and is kept with
// the session; --edits off offers no edit tools.
func TestChatEdits(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	work := t.TempDir()
	path := filepath.Join(work, "main.go")
	os.WriteFile(path, []byte("package main\n\nfunc main() {}\n"), 0o600)
	env := []string{"CTXLS_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY=sk-test-not-real"}
	base := []string{"chat", "--base-url", fake.URL, "--model", "test-model"}
	edit := func(id, from, to string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "edit_file", Arguments: `{"path":"main.go","old_string":"` + from + `","new_string":"` + to + `"}`}}}
	}
	disk := func() string { b, _ := os.ReadFile(path); return string(b) }

	fake.Enqueue(edit("e1", "func main() {}", "func main() { one() }"), openaitest.Reply{Chunks: []string{"Tried."}})
	_, errOut, code := lsptest.Run(t, work, env, append(base, "edit it")...)
	if code != 0 || !strings.Contains(errOut, "the edit of "+path+" was rejected: there is no terminal to review it on") ||
		!strings.Contains(fake.LastStreamed().ToolResults()["e1"], "could not be asked (no terminal to review on); nothing changed") || disk() != "package main\n\nfunc main() {}\n" {
		t.Errorf("no terminal: %d %q %q\n%s", code, fake.LastStreamed().ToolResults()["e1"], disk(), errOut)
	}
	fake.WaitRequests(3, 10*time.Second)

	// On a terminal: the diff, then "y".
	fake.Enqueue(edit("e2", "func main() {}", "func main() { two() }"), openaitest.Reply{Chunks: []string{"Done."}})
	cmd := exec.Command("script", "-qec", lsptest.BuildBinary(t)+" "+strings.Join(append(base, "--continue", "'edit it again'"), " "), "/dev/null")
	cmd.Dir, cmd.Env = work, lsptest.Env(t, env)
	stdin, _ := cmd.StdinPipe()
	var screen strings.Builder
	cmd.Stdout = &screen
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("y\n")) // waits in the terminal's input for the question
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("on a terminal: %v\n%s", err, screen.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("on a terminal: no end\n%s", screen.String())
	}
	if !strings.Contains(screen.String(), "+func main() { two() }") || !strings.Contains(screen.String(), "the model wants to edit "+path+" (+1 −1 lines)") {
		t.Errorf("the review on the terminal:\n%s", screen.String())
	}
	if disk() != "package main\n\nfunc main() { two() }\n" {
		t.Errorf("after yes: %q", disk())
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode: %v", info.Mode())
	}

	// --edits auto: applied at once, and kept for the next turn.
	fake.Enqueue(edit("e3", "two()", "three()"), openaitest.Reply{Chunks: []string{"Auto."}})
	if _, errOut, code := lsptest.Run(t, work, env, append(base, "--continue", "--edits", "auto", "once more")...); code != 0 || disk() != "package main\n\nfunc main() { three() }\n" ||
		!strings.Contains(errOut, "(the model changed "+path+")") {
		t.Errorf("auto: %d %q\n%s", code, disk(), errOut)
	}
	fake.Enqueue(edit("e4", "three()", "four()"), openaitest.Reply{Chunks: []string{"Auto again."}})
	if _, errOut, code := lsptest.Run(t, work, env, append(base, "--continue", "and again")...); code != 0 || disk() != "package main\n\nfunc main() { four() }\n" {
		t.Errorf("auto, kept: %d %q\n%s", code, disk(), errOut)
	}
	// --edits off: no edit tools.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Off."}})
	lsptest.Run(t, work, env, append(base, "--continue", "--edits", "off", "no edits")...)
	for _, tool := range fake.LastStreamed().Parsed.Tools {
		if tool.Function.Name == "edit_file" {
			t.Error("edit_file offered with --edits off")
		}
	}
	if _, errOut, code := lsptest.Run(t, work, env, append(base, "--edits", "sometimes", "x")...); code == 0 || !strings.Contains(errOut, "--edits is ask, auto or off") {
		t.Errorf("a bad --edits: %d\n%s", code, errOut)
	}
}
