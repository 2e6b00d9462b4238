package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestChatRunCommand: "ctxls chat" runs the model's run_command in the
// folder it is started in when --allow-tool names run_command; --allow-tool
// * (every MCP tool) does not allow it, and with no terminal to ask on it
// is declined, the user told how to allow it.
func TestChatRunCommand(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	work := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "CTXLS_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY=sk-test-not-real"}
	base := []string{"chat", "--base-url", fake.URL, "--model", "test-model"}

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "run_command", Arguments: `{"command":"touch made"}`}}},
		openaitest.Reply{Chunks: []string{"No."}},
	)
	_, errOut, code := lsptest.Run(t, work, env, append(base, "--allow-tool", "*", "make it")...)
	if res := fake.LastStreamed().ToolResults(); code != 0 || !strings.Contains(res["c1"], "did not run") ||
		!strings.Contains(errOut, "[run_command: declined, since there is no terminal to ask on; allow it with --allow-tool run_command]") {
		t.Errorf("--allow-tool *: %d %q\n%s", code, res, errOut)
	}
	if _, err := os.Stat(filepath.Join(work, "made")); err == nil {
		t.Error("the command ran")
	}
	fake.WaitRequests(3, 10*time.Second) // the title's

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "d1", Name: "run_command", Arguments: `{"command":"touch made; pwd"}`}}},
		openaitest.Reply{Chunks: []string{"Made."}},
	)
	out, errOut, code := lsptest.Run(t, work, env, append(base, "--allow-tool", "run_command", "--continue", "make it")...)
	real, _ := filepath.EvalSymlinks(work)
	if res := fake.LastStreamed().ToolResults(); code != 0 || !strings.Contains(out, "Made.") || res["d1"] != real+"\n[exit status 0]" {
		t.Errorf("--allow-tool run_command: %d %q\n%s", code, res, errOut)
	}
	if _, err := os.Stat(filepath.Join(work, "made")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}
