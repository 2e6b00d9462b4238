package cli_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// onTerminal runs the built binary with args on a pseudo-terminal (its
// stdin, stdout and stderr, and so its /dev/tty), in dir, typing answers
// into it, and returns every byte it wrote to the terminal.
func onTerminal(t *testing.T, dir string, env []string, answers string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(lsptest.BuildBinary(t), args...)
	cmd.Dir, cmd.Env = dir, lsptest.Env(t, env)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	// The answers wait in the terminal's input, a line at a time, until the
	// questions read them (nothing else reads the terminal).
	io.WriteString(tty, answers)
	var screen bytes.Buffer
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(&screen, tty)
		read <- err
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("on a terminal: %v", err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("on a terminal it did not end")
	}
	select {
	case err := <-read:
		var pe *os.PathError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("reading the terminal: %v", err)
		}
	case <-time.After(10 * time.Second):
	}
	return screen.Bytes()
}

// TestChatTerminalEscapes: what came from outside (a .mcp.json's
// arguments, a tool's name and output, an edit's text, the model's answer)
// reaches the user's terminal with its escape sequences shown, not
// obeyed: no byte ESC is written, so no question can be redrawn, no diff
// line erased, no clipboard written.
func TestChatTerminalEscapes(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	work, serverDir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o600)
	os.WriteFile(filepath.Join(work, ".mcp.json"), testmcp.Config(map[string]map[string]any{
		"w": testmcp.Server(t, "w", serverDir, "-hostile", "\x1b[2J\x1b[H"),
	}), 0o644)
	env := []string{"CTXLS_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY=sk-test-not-real"}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file",
			Arguments: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { evil() }\u001b[2K\u001b[1A"}`}}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "h1", Name: "mcp__w__evil_52_c_ZXZpbA_", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Done\x1b]0;title\x07 \u009b2J."}},
	)
	// Trust the file, accept the edit, allow the call.
	screen := onTerminal(t, work, env, "t\ny\ny\n", "chat", "--base-url", fake.URL, "--model", "test-model", "change main")
	shown := string(screen)
	if i := bytes.IndexByte(screen, 0x1b); i >= 0 {
		t.Errorf("a raw ESC reached the terminal at %d: %q", i, shown[max(i-60, 0):min(i+40, len(shown))])
	}
	if strings.Contains(shown, "\u009b") {
		t.Errorf("a raw CSI (U+009B) reached the terminal:\n%q", shown)
	}
	for _, want := range []string{
		"^[[2J^[[H",                  // the .mcp.json's argument, in the trust question
		"evil() }^[[2K^[[1A",         // the edit's text, in the review's diff
		`evil^J^[]52;c;ZXZpbA==^G`,   // the tool's name, in the permission question
		`Done^[]0;title^G \u009b2J.`, // the model's answer
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, shown)
		}
	}
	if got := fake.LastStreamed().ToolResults()["h1"]; !strings.Contains(got, "ran") {
		t.Errorf("the call: %q\n%q", got, shown)
	}
}
