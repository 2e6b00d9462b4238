package nvim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimCommand: the model's run_command, allowed with the chat's key
// a: its line names the command ("• run `seq 1 25; …`"); while it runs, the tail of its output so
// far is shown under the line in a fenced block ("… 7 lines above"),
// updated in place, the user's window and cursor left where they are; at
// its end the output's tail with its exit status, open, the line
// "failed: exit status 2" in the failed highlight; a new Neovim shows the
// same in the resumed session. test/command.lua is
// the person at the keyboard.
func TestNeovimCommand(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimCommand)
}

func testNeovimCommand(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Command session"}}))
	args, _ := json.Marshal(map[string]string{"command": `seq 1 25; printf 'line one\nline two\n'; sleep 1; echo done; exit 2`})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r1", Name: "run_command", Arguments: string(args)}}},
		openaitest.Reply{Chunks: []string{"It exited with 2."}},
	)
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n"), 0o644)
	dataDir := t.TempDir()
	for _, phase := range []string{"command", "command-resume"} {
		runNvim(t, nvim, work, "command.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir, "CTXLS_TEST_FILE="+file,
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir()), 60*time.Second, phase)
	}
}
