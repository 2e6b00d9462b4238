package nvim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimReviewNeverTakesFocus reproduces issue 35's review defect in a
// real terminal (tmux): the model's edit comes for review while the user is
// typing "gamma grep " in insert mode in the file. The review must not take
// the keyboard: the typing stays in the file exactly, in insert mode, in
// the same window and tab, and nothing is decided; the chat says an edit
// waits for review ("ga" of "gamma" once
// accepted the edit unseen; "gr" of "grep" would have rejected one). The
// user then opens the review on purpose (:CtxlsAccept before looking only
// shows it; :CtxlsReview brings it back after a look at the file), sees the
// diff and accepts it with ga: the edit lands beside what they typed.
func TestNeovimReviewNeverTakesFocus(t *testing.T) {
	t.Parallel()
	needTmux(t)
	eachNeovim(t, testNeovimReviewNeverTakesFocus)
}

// reviewState is what the Neovim under test writes down every 100 ms.
type reviewState struct {
	Source  []string `json:"source"`  // the lines of the file the user types in
	Mode    string   `json:"mode"`    // the mode
	Buf     string   `json:"buf"`     // the current buffer's name
	Tabs    int      `json:"tabs"`    // how many tab pages
	Shown   bool     `json:"shown"`   // a review is on screen
	Waiting int      `json:"waiting"` // reviews waiting for a decision
	Decided int      `json:"decided"` // reviews decided
	Chat    string   `json:"chat"`    // the chat buffer's text
}

func testNeovimReviewNeverTakesFocus(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Title"}}))
	// The edit waits until the user is typing.
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file",
			Arguments: `{"path":"notes.txt","old_string":"beta\n","new_string":"BETA\n"}`}}, HoldAt: []int{0}},
		openaitest.Reply{Chunks: []string{"Edited."}},
	)
	work := t.TempDir()
	file := filepath.Join(work, "notes.txt")
	os.WriteFile(file, []byte("alpha\nbeta\n"), 0o644)
	rtp, _ := filepath.Abs(".")
	statePath := filepath.Join(t.TempDir(), "state.json")
	setup := filepath.Join(t.TempDir(), "setup.lua")
	os.WriteFile(setup, []byte(fmt.Sprintf(`local ctxls = require("ctxls")
ctxls.setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
  tool_permission_timeout_seconds = 60,
  log_file = false,
})
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  local shown, waiting, decided = ctxls.reviewing()
  local st = { source = {}, mode = vim.api.nvim_get_mode().mode, buf = vim.api.nvim_buf_get_name(0),
    tabs = #vim.api.nvim_list_tabpages(), shown = shown ~= nil, waiting = waiting, decided = decided, chat = "" }
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name:find("notes.txt$") then
      st.source = vim.api.nvim_buf_get_lines(b, 0, -1, false)
    elseif name:find("ctxls://chat/", 1, true) then
      st.chat = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
    end
  end
  vim.fn.writefile({ vim.json.encode(st) }, %q)
end))
`, bin, t.TempDir(), fake.URL, statePath)), 0o644)
	session := tmuxName(t, "ctxls-nvim-review")
	term := startTmux(t, session, 200, 40, work,
		[]string{"OPENAI_API_KEY=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
		nvimArgs(t, nvim, "--clean", "-n", "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua", "-c", "luafile "+setup, file)...)
	term.WaitFor("Neovim", func(s string) bool { return strings.Contains(s, "notes.txt") })
	// (A read may meet the file being written: read again.)
	read, waitState := stateWatch(t, statePath, term, func(st reviewState) bool { return st.Mode != "" })
	term.Keys(":CtxlsAsk edit beta", "Enter")
	waitState("the chat", func(st reviewState) bool { return strings.Contains(st.Chat, "edit beta") })
	// The cursor stays in the file: the user starts typing there, at the
	// start of its first line.
	term.Keys("g", "g", "i")
	waitState("insert mode", func(st reviewState) bool { return st.Mode == "i" && strings.HasSuffix(st.Buf, "notes.txt") })
	fake.Release()
	waitState("the review's arrival", func(st reviewState) bool { return st.Waiting == 1 || st.Decided > 0 })
	// As a person types, a key at a time.
	for _, k := range strings.Split("gamma grep ", "") {
		term.Keys("-l", k)
		time.Sleep(30 * time.Millisecond)
	}
	time.Sleep(1000 * time.Millisecond) // an edit accepted by the keys would be applied by now
	st := read()
	if st.Decided != 0 || st.Waiting != 1 {
		t.Errorf("the typed keys decided the review: %d decided, %d waiting (the model was told %q)", st.Decided, st.Waiting, fake.LastStreamed().ToolResults())
	}
	if strings.Join(st.Source, "\n") != "gamma grep alpha\nbeta" {
		t.Errorf("the file holds %q, want exactly what was typed before its text", st.Source)
	}
	if st.Mode != "i" || !strings.HasSuffix(st.Buf, "notes.txt") || st.Tabs != 1 || st.Shown {
		t.Errorf("the review took the focus: mode %q, in %q, %d tabs, shown %v\nthe screen:\n%s", st.Mode, st.Buf, st.Tabs, st.Shown, term.Screen(false))
	}
	if !strings.Contains(st.Chat, "— waiting for your permission") ||
		!strings.Contains(st.Chat, "> _ctxls: the model wants to edit notes.txt (+1 −1 lines) · :CtxlsReview shows it_") {
		t.Errorf("the chat does not say the edit waits for review:\n%s", st.Chat)
	}
	// :CtxlsAccept before looking does not accept: it shows the edit.
	term.Keys("Escape")
	waitState("normal mode", func(st reviewState) bool { return st.Mode == "n" })
	term.Keys(":CtxlsAccept", "Enter")
	waitState("the review on screen", func(st reviewState) bool {
		return st.Shown && st.Tabs == 2 && strings.Contains(st.Buf, "ctxls-review://") && st.Mode == "n"
	})
	if st := read(); st.Decided != 0 {
		t.Errorf(":CtxlsAccept accepted an edit not seen: %d decided", st.Decided)
	}
	// Away and back with :CtxlsReview, as a person looks at the file first.
	term.Keys("g", "T")
	waitState("back in the file", func(st reviewState) bool { return strings.HasSuffix(st.Buf, "notes.txt") && st.Tabs == 2 })
	term.Keys(":CtxlsReview", "Enter")
	waitState("the review on screen again", func(st reviewState) bool {
		return st.Shown && strings.Contains(st.Buf, "ctxls-review://") && st.Decided == 0
	})
	// (Its current side is the text the edit was made against, and says
	// so: the user typed since.)
	term.WaitFor("the diff", func(s string) bool {
		return strings.Contains(s, "the model wants to edit notes.txt") && strings.Contains(s, "BETA") && strings.Contains(s, "ga accept") &&
			strings.Contains(s, "notes.txt — when the edit was made (changed since)")
	})
	term.Keys("g", "a")
	st = waitState("the edit applied", func(st reviewState) bool {
		return st.Decided == 1 && st.Waiting == 0 && strings.Contains(st.Chat, "Edited.")
	})
	if strings.Join(st.Source, "\n") != "gamma grep alpha\nBETA" {
		t.Errorf("the file holds %q, want the typing and the edit", st.Source)
	}
	if !strings.Contains(st.Chat, "> _ctxls reviewed: edit notes.txt (+1 −1 lines) → accepted_") {
		t.Errorf("the review's line in the chat does not say it was accepted:\n%s", st.Chat)
	}
	if st.Tabs != 1 || !strings.HasSuffix(st.Buf, "notes.txt") {
		t.Errorf("not back in the file after the review: %d tabs, in %q", st.Tabs, st.Buf)
	}
	if r := fake.LastStreamed().ToolResults(); !strings.Contains(r["e1"], "edited "+file) {
		t.Errorf("the model was told %q", r["e1"])
	}
	quitTmux(t, term)
}
