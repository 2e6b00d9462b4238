package nvim_test

import (
	"os"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimPlan: the model's plan (its update_plan call) is shown in the
// chat as a task list under the call's line ("• plan — 1 of 3 done"),
// open, not folded like other outputs; a new Neovim shows it the same in
// the resumed session.
func TestNeovimPlan(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimPlan)
}

func testNeovimPlan(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Plan session"}}))
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "update_plan", Arguments: `{"items":[` +
			`{"content":"Read main.go","status":"completed"},` +
			`{"content":"Fix the handler","status":"in_progress","priority":"high"},` +
			`{"content":"Run the tests","status":"pending"}]}`}}},
		openaitest.Reply{Chunks: []string{"Planned."}},
	)
	work, dataDir := t.TempDir(), t.TempDir()
	for _, phase := range []string{"plan", "plan-resume"} {
		runNvim(t, nvim, work, "plan.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir,
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir()), 60*time.Second, phase)
	}
}
