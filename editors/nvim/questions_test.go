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
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimQuestionSurvivesTyping reproduces issue 35's defect in a real
// terminal (tmux): the model asks to call a tool while the user is typing
// `total = x2` and Enter in the file they edit. The typing stays in the
// file, exactly; the tool does not run and the question stays open in the
// chat, until the user goes to the chat and answers it there on purpose
// (a); then the tool runs, and the question's line says it was allowed.
// (Before: Neovim asked with inputlist(), which took the typed "2" and
// Enter as "2. Always in this session".)
func TestNeovimQuestionSurvivesTyping(t *testing.T) {
	t.Parallel()
	needTmux(t)
	eachNeovim(t, testNeovimQuestionSurvivesTyping)
}

// questionState is what the Neovim under test writes down every 100 ms.
type questionState struct {
	Source []string `json:"source"` // the lines of the file the user types in
	Open   int      `json:"open"`   // the questions open in the chat
	Chat   string   `json:"chat"`   // the chat buffer's text
	Mode   string   `json:"mode"`
}

func testNeovimQuestionSurvivesTyping(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	// The tool call waits until the user is typing.
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`}}, HoldAt: []int{0}},
		openaitest.Reply{Chunks: []string{"Echoed."}},
	)
	servers, _ := json.Marshal(map[string]any{"t": testmcp.Server(t, "t", t.TempDir())})
	work := t.TempDir()
	file := filepath.Join(work, "notes.txt")
	os.WriteFile(file, nil, 0o644)
	rtp, _ := filepath.Abs(".")
	statePath := filepath.Join(t.TempDir(), "state.json")
	setup := filepath.Join(t.TempDir(), "setup.lua")
	os.WriteFile(setup, []byte(fmt.Sprintf(`local ctxls = require("ctxls")
ctxls.setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
  mcp_servers = vim.json.decode(%q),
  tool_permission_timeout_seconds = 60,
  log_file = false,
})
-- What the test reads: the file's lines, the open questions, the chat.
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local st = { source = {}, open = 0, chat = "", mode = vim.api.nvim_get_mode().mode }
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name:find("notes.txt$") then
      st.source = vim.api.nvim_buf_get_lines(b, 0, -1, false)
    elseif name:find("ctxls://chat/", 1, true) then
      st.chat = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
    end
  end
  if ctxls.questions then
    st.open = #ctxls.questions()
  elseif ctxls.asking() then
    st.open = 1
  end
  vim.fn.writefile({ vim.json.encode(st) }, %q)
end))
`, bin, t.TempDir(), fake.URL, string(servers), statePath)), 0o644)
	session := tmuxName(t, "ctxls-nvim-question")
	term := startTmux(t, session, 200, 40, work,
		[]string{"OPENAI_API_KEY=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
		nvimArgs(t, nvim, "--clean", "-n", "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua", "-c", "luafile "+setup, file)...)
	term.WaitFor("Neovim", func(s string) bool { return strings.Contains(s, "notes.txt") })
	read, waitState := stateWatch(t, statePath, term, func(st questionState) bool { return st.Mode != "" })
	term.Keys(":CtxlsAsk echo hi", "Enter")
	waitState("the chat", func(st questionState) bool { return strings.Contains(st.Chat, "echo hi") })
	// The cursor stays in the file: the user starts typing there.
	term.Keys("i")
	waitState("insert mode", func(st questionState) bool { return st.Mode == "i" })
	fake.Release()
	term.WaitFor("the question", func(s string) bool { return strings.Contains(s, "Allow it?") })
	// As a person types, a key at a time.
	for _, k := range strings.Split("total = x2", "") {
		term.Keys("-l", k)
		time.Sleep(30 * time.Millisecond)
	}
	term.Keys("Enter")
	time.Sleep(1500 * time.Millisecond) // the tool would have run by now
	st := read()
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the typed keys answered the question: the model was asked %d times (tool results %q)", n, fake.LastStreamed().ToolResults())
	}
	if strings.Join(st.Source, "\n") != "total = x2\n" {
		t.Errorf("the file holds %q, want exactly what was typed: %q", st.Source, []string{"total = x2", ""})
	}
	if st.Open != 1 || !strings.Contains(st.Chat, "t · echo `{\"text\":\"hi\"}` — waiting for your permission") {
		t.Fatalf("the question is not open any more (%d open):\n%s\nthe screen:\n%s", st.Open, st.Chat, term.Screen(false))
	}
	// Answered on purpose: in the chat window, its key.
	term.Keys("Escape")
	term.Keys("C-w", "l")
	term.Keys("a")
	st = waitState("the answer", func(st questionState) bool {
		return st.Open == 0 && strings.Contains(st.Chat, "Echoed.")
	})
	if r := fake.LastStreamed().ToolResults(); r["c1"] != "echo: hi" {
		t.Errorf("the tool's result: %q", r)
	}
	if !strings.Contains(st.Chat, "→ allowed once_") || strings.Contains(st.Chat, "[a] allow once") {
		t.Errorf("the closed question's line:\n%s", st.Chat)
	}
	if strings.Join(st.Source, "\n") != "total = x2\n" {
		t.Errorf("the file holds %q after the answer", st.Source)
	}
	quitTmux(t, term)
}
