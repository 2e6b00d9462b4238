package nvim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/internal/editortest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// nvimThemes are the terminal's backgrounds the screenshots are taken on
// (Neovim's 'background' set to match).
var nvimThemes = []struct{ name, bg, fg string }{
	{"light", "#ffffff", "#000000"},
	{"dark", "#1e1e1e", "#d4d4d4"},
}

// shotsDir is where the screenshots taken in nvim go: shots in the first
// Neovim (the one on PATH, Debian's, which the docs show), "" (none taken)
// in the others, which play the same steps and checks.
func shotsDir(t *testing.T, shots, nvim string) string {
	if nvim == editortest.Editors(t, "nvim")[0].Path {
		return shots
	}
	return ""
}

// TestNeovimScreenshot runs Neovim in tmux, in a light and a dark
// background: it adds the file, asks a question (the model calls a tool of
// an MCP server first: the permission question is rendered to
// CTXLS_SCREENSHOT_DIR/nvim-permission-light.png and -dark.png, then
// answered), asks a second one and compacts the session, and renders the
// screen after the first answer (the tool call's line, folded, then the
// answer) to nvim-light.png and nvim-dark.png, and after the compaction
// (the line that marks where the model's view starts) to
// nvim-compact-light.png and nvim-compact-dark.png; then the model edits
// the file, which has an unsaved line, while the user types on: the edit
// announced, the keyboard left where it is, is rendered to
// nvim-review-waiting-light.png and -dark.png, then the review tab opened
// with :CtxlsReview (the current text beside the proposed one, in diff
// mode) to nvim-review-light.png and nvim-review-dark.png. It runs only when that
// variable is set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run Screenshot
func TestNeovimScreenshot(t *testing.T) {
	shots := screenshot.Dir(t)
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := shotsDir(t, shots, nvim)
		for _, theme := range nvimThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t)
				fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mcp__docs__echo", Arguments: `{"text": "/healthz"}`}},
					Usage: &openai.Usage{PromptTokens: 1180, CompletionTokens: 12, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 900}}})
				fake.Enqueue(openaitest.Reply{Delay: 40 * time.Millisecond, Chunks: []string{
					"`main` reads ", "the port from ", "`PORT` and ", "starts the server.\n\n",
					"It also registers ", "a **health check**:\n\n", "```go\n", "http.HandleFunc(\"/healthz\", ok)\n", "```\n\n",
					"It answers 200 ", "without touching the database.",
				}, Usage: &openai.Usage{PromptTokens: 1250, CompletionTokens: 152, PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 900}}},
					openaitest.Reply{Chunks: []string{"Server health check"}})
				work := t.TempDir()
				file := filepath.Join(work, "main.go")
				os.WriteFile(file, []byte("package main\n\nimport (\n\t\"net/http\"\n\t\"os\"\n)\n\nfunc main() {\n\thttp.HandleFunc(\"/healthz\", ok)\n\thttp.ListenAndServe(\":\"+os.Getenv(\"PORT\"), nil)\n}\n"), 0o644)
				rtp, _ := filepath.Abs(".")
				// The test MCP server as "docs", in Lua (the setup is a file: tmux
				// need not pass the environment).
				mcp := testmcp.Server(t, "docs", t.TempDir())
				setup, dataDir := filepath.Join(t.TempDir(), "setup.lua"), t.TempDir()
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
  mcp_servers = { docs = { command = %q, args = { "-name", "docs" }, env = { TESTMCP_DIR = %q } } },
})
`, bin, dataDir, fake.URL, mcp["command"], mcp["env"].(map[string]string)["TESTMCP_DIR"])), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-shot-"+theme.name), 110, 36, work,
					[]string{"OPENAI_API_KEY=", "TERM=xterm-256color"},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup, file)...)
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				shoot := func(name string) {
					if dir == "" {
						return
					}
					png := filepath.Join(dir, name+"-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(screen(true), "\n"), theme.bg, theme.fg), png, 1000, 660); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", png)
				}
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })
				keys(":CtxlsAdd", "Enter")
				keys(":CtxlsAsk What does main do now?", "Enter")
				// The model calls docs · echo: its line waits while the question
				// is on screen.
				// (The chat window is narrow: its lines wrap.)
				waitFor("the permission question", func(s string) bool {
					// (Neovim 0.12 hides the code span's backticks, as the chat's
					// conceallevel asks; the folded lines below show them.)
					// (The question is in the chat, its lines wrapped there; its
					// message on the command line too.)
					return strings.Contains(strings.ReplaceAll(s, "`", ""), "• docs · echo {\"text\": \"/healthz\"}") && strings.Contains(s, "— waiting for") &&
						strings.Contains(s, `the model wants to call docs · echo (read-only) with {"text": "/healthz"}. Allow it?`) &&
						strings.Contains(strings.NewReplacer("[", "", "]", "").Replace(s), "a allow once  d deny") // (0.12 conceals the brackets)
				})
				shoot("nvim-permission")
				// Answered in the chat, with its key, then back to the file.
				keys("C-w", "l")
				keys("a")
				keys("C-w", "p")
				waitFor("the answer", func(s string) bool { return strings.Contains(s, "without touching the database.") })
				waitFor("the call's folded line", func(s string) bool {
					// (Its arguments cut to fit the window, not its status.)
					return strings.Contains(s, "▸ docs · echo `{\"text\": \"/hea…` — done  [1 line]")
				})
				// Both windows' status lines show the model's title, the file's
				// too though it is not the current window; the chat's second line
				// the model and the session's tokens, the answer's under it.
				waitFor("the model's title", func(s string) bool { return strings.Count(s, "ctxls: Server health check") == 2 })
				waitFor("the usage", func(s string) bool {
					// (the header line wraps in the narrow chat window)
					return strings.Contains(s, "model: test-model (default) · this session: 2,430") &&
						strings.Count(s, "in (1,800 cached) · 164 out") == 2 && strings.Contains(s, "tokens: 2,430 in (1,800 cached) · 164 out")
				})
				shoot("nvim")

				// :CtxlsChat: a question of several lines in the compose window.
				keys(":CtxlsChat", "Enter")
				keys("Does the health check need", "Enter", "the database?")
				waitFor("the compose window", func(s string) bool {
					return strings.Contains(s, "ctxls · Ctrl-S sends · Enter: new line · with main.go") && strings.Contains(s, "the database?")
				})
				shoot("nvim-compose")
				keys("Escape", ":q", "Enter")
				waitFor("the compose window closed", func(s string) bool { return !strings.Contains(s, "Ctrl-S sends") })

				// A second turn, then :CtxlsCompact: the chat buffer marks where
				// the model's view of the session now starts.
				fake.Enqueue(openaitest.Reply{Chunks: []string{"Nothing else: ", "it blocks in ListenAndServe."}},
					openaitest.Reply{Chunks: []string{"The user asked what main does: it serves on $PORT with a /healthz check."}})
				keys(":CtxlsAsk Anything else?", "Enter")
				waitFor("the second answer", func(s string) bool { return strings.Contains(s, "it blocks in ListenAndServe.") })
				// The chat window alone, from its fifth line once compacted.
				keys(":wincmd b | only", "Enter")
				keys(":CtxlsCompact", "Enter")
				waitFor("the compaction's message", func(s string) bool { return strings.Contains(s, "are summarised for the model") })
				keys("5", "z", "t")
				shown := waitFor("the mark", func(s string) bool {
					return strings.Contains(s, "summarised for the model: the first question and its answer") && strings.Contains(s, "Anything else?")
				})
				if a, m, b := strings.Index(shown, "without touching the database."), strings.Index(shown, "summarised for the model"), strings.Index(shown, "Anything else?"); a < 0 || !(a < m && m < b) {
					t.Errorf("the mark is not between the first answer and the second question:\n%s", shown)
				}
				shoot("nvim-compact")

				// The model edits main.go, which has an unsaved line: the edit
				// is announced while the user types on (nvim-review-waiting),
				// opened with :CtxlsReview in a tab of its own (the current text
				// beside the proposed one: nvim-review), then accepted with ga.
				fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file", Arguments: `{"path": "main.go", ` +
					`"old_string": "\thttp.ListenAndServe(\":\"+os.Getenv(\"PORT\"), nil)\n", ` +
					`"new_string": "\tif err := http.ListenAndServe(\":\"+os.Getenv(\"PORT\"), nil); err != nil {\n\t\tpanic(err)\n\t}\n"}`}}, HoldAt: []int{0}},
					openaitest.Reply{Chunks: []string{"`main` now stops ", "when it cannot listen."}})
				keys(":topleft vsplit main.go", "Enter")
				keys("G", "O", "// TODO: read the port from flags", "Escape")
				keys(":CtxlsAsk Stop when the server cannot listen.", "Enter")
				keys("o", "// the user types on")
				fake.Release()
				waitFor("the review announced", func(s string) bool {
					return strings.Contains(s, "> ctxls: the model wants to edit main.go (+3 −1") && strings.Contains(s, "— waiting for") &&
						strings.Contains(s, "// the user types on") && !strings.Contains(s, "ga accept")
				})
				shoot("nvim-review-waiting")
				keys("Escape", ":CtxlsReview", "Enter")
				waitFor("the review", func(s string) bool {
					return strings.Contains(s, "the model wants to edit main.go (+3 −1 lines)") && strings.Contains(s, "ga accept · gA accept all in this turn · gr reject") &&
						strings.Contains(s, "panic(err)") && strings.Contains(s, "// TODO: read the port from flags")
				})
				shoot("nvim-review")
				keys("g", "a")
				waitFor("the edit in the buffer", func(s string) bool {
					return strings.Contains(s, "when it cannot listen.") && strings.Contains(s, "panic(err)") && !strings.Contains(s, "the model wants to edit") &&
						strings.Contains(s, "// the user types on")
				})
				// Neovim quits and its daemon ends before the data directory is
				// removed (it may still be writing the session's folder).
				keys(":qa!", "Enter")
				deadline := time.Now().Add(15 * time.Second)
				for exec.Command("pgrep", "-f", "--", "--data-dir "+dataDir).Run() == nil {
					if time.Now().After(deadline) {
						t.Fatal("the daemon did not end after Neovim quit")
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	})
}

// TestNeovimImageScreenshot renders, in a light and a dark background, the
// chat of a question asked with an image (:CtxlsAttach: the question's
// image line) and the compose window with another image attached (its
// status line says so) to CTXLS_SCREENSHOT_DIR/nvim-image-light.png and
// -dark.png. It runs only when that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run ImageScreenshot
func TestNeovimImageScreenshot(t *testing.T) {
	shots := screenshot.Dir(t)
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := shotsDir(t, shots, nvim)
		for _, theme := range nvimThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t)
				fake.Enqueue(openaitest.Reply{Chunks: []string{"The page shows ", "a login form ", "whose **Sign in** button ", "overlaps the password field: ",
					"its `margin-top` is negative."}}, openaitest.Reply{Chunks: []string{"Login button overlap"}})
				work := t.TempDir()
				file := filepath.Join(work, "login.css")
				os.WriteFile(file, []byte(".login button {\n  margin-top: -12px;\n}\n"), 0o644)
				square := image.NewRGBA(image.Rect(0, 0, 16, 16))
				for _, name := range []string{"screenshot.png", "after.png"} {
					var b bytes.Buffer
					png.Encode(&b, square)
					os.WriteFile(filepath.Join(work, name), b.Bytes(), 0o644)
				}
				rtp, _ := filepath.Abs(".")
				setup, dataDir := filepath.Join(t.TempDir(), "setup.lua"), t.TempDir()
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
})
`, bin, dataDir, fake.URL)), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-image-shot-"+theme.name), 160, 30, work,
					[]string{"OPENAI_API_KEY=", "TERM=xterm-256color"},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup, file)...)
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })
				keys(":CtxlsAttach screenshot.png", "Enter")
				keys(":CtxlsAsk Why does the button overlap?", "Enter")
				waitFor("the answer", func(s string) bool { return strings.Contains(s, "is negative.") })
				waitFor("the image's line", func(s string) bool { return strings.Contains(s, "image: screenshot.png") })
				keys(":CtxlsAttach after.png", "Enter")
				keys(":CtxlsChat", "Enter")
				keys("Is it fixed now?")
				waitFor("the compose window", func(s string) bool {
					return strings.Contains(s, "with login.css · with image: after.png") && strings.Contains(s, "Is it fixed now?")
				})
				if dir != "" {
					shot := filepath.Join(dir, "nvim-image-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(screen(true), "\n"), theme.bg, theme.fg), shot, 1440, 550); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", shot)
				}
				keys("Escape", ":qa!", "Enter")
				deadline := time.Now().Add(15 * time.Second)
				for exec.Command("pgrep", "-f", "--", "--data-dir "+dataDir).Run() == nil {
					if time.Now().After(deadline) {
						t.Fatal("the daemon did not end after Neovim quit")
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	})
}

// TestNeovimSearchScreenshot renders, in a light and a dark background,
// the chat after the model searched the workspace: grep's line opened
// (<CR>) to its matches, the unsaved one marked, find_files' and
// list_directory's lines folded, and the quickfix list gq filled, to
// CTXLS_SCREENSHOT_DIR/nvim-search-light.png and -dark.png. It runs only
// when that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run SearchScreenshot
func TestNeovimSearchScreenshot(t *testing.T) {
	shots := screenshot.Dir(t)
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := shotsDir(t, shots, nvim)
		for _, theme := range nvimThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t)
				fake.Enqueue(searchReplies()...)
				work := searchWorkspace(t)
				rtp, _ := filepath.Abs(".")
				setup, dataDir := filepath.Join(t.TempDir(), "setup.lua"), t.TempDir()
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
})
`, bin, dataDir, fake.URL)), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-search-shot-"+theme.name), 150, 32, work,
					[]string{"OPENAI_API_KEY=", "TERM=xterm-256color"},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup,
						"auth/handler.go")...)
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })
				// Typed, not saved: the buffer calls loginRedirect.
				keys("3G", "S")
				keys("-l", "func handle() { loginRedirect() }")
				keys("Escape")
				keys(":CtxlsAsk Where is loginRedirect called?", "Enter")
				waitFor("the answer", func(s string) bool { return strings.Contains(s, "It is called from handle.") })
				waitFor("the search lines", func(s string) bool {
					return strings.Contains(s, "▸ grep `loginRedirect` — 2 matches in 2 files  [3 lines]") &&
						strings.Contains(s, "▸ list_directory `auth` — 2 entries")
				})
				// In the chat, <CR> on grep's line shows its matches; gq lists
				// them in the quickfix window.
				keys(":lua vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr('ctxls://chat/'))); vim.fn.search('^. grep ')", "Enter")
				keys("Enter")
				waitFor("grep's matches", func(s string) bool {
					return strings.Contains(s, "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)") && strings.Contains(s, "auth/login.go:3: func loginRedirect() {}")
				})
				keys("g", "q")
				keys(":echo", "Enter") // the command line cleared
				waitFor("the quickfix list", func(s string) bool {
					return strings.Contains(s, "auth/login.go|3| func loginRedirect() {}") && strings.Contains(s, "ctxls: grep `loginRedirect` — 2 matches in 2 files") &&
						!strings.Contains(s, ":lua")
				})
				if dir != "" {
					shot := filepath.Join(dir, "nvim-search-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(screen(true), "\n"), theme.bg, theme.fg), shot, 1340, 600); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", shot)
				}
				keys(":qa!", "Enter")
				deadline := time.Now().Add(15 * time.Second)
				for exec.Command("pgrep", "-f", "--", "--data-dir "+dataDir).Run() == nil {
					if time.Now().After(deadline) {
						t.Fatal("the daemon did not end after Neovim quit")
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	})
}

// TestNeovimCardsScreenshot renders, in a light and a dark background, the
// chat's cards of ctxls's own tools, beside the file: the model's plan (a
// task list under "• plan — 1 of 3 done") to
// CTXLS_SCREENSHOT_DIR/nvim-plan-light.png and -dark.png; a run_command
// allowed with the chat's key a, ended with exit status 1 (its line "• run
// `for i in …` — failed: exit status 1", the tail of its output under it, "… N lines above") to
// nvim-command-light.png and -dark.png; and, after a turn that edited the
// file in the auto review mode and the user typed in another, :CtxlsUndo's
// note in the chat to nvim-undo-light.png and -dark.png. It runs only when
// that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run CardsScreenshot
func TestNeovimCardsScreenshot(t *testing.T) {
	shots := screenshot.Dir(t)
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := shotsDir(t, shots, nvim)
		for _, theme := range nvimThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Flaky test fix"}}))
				fake.Enqueue(
					openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "update_plan", Arguments: `{"items":[` +
						`{"content":"Read calc.go and its test","status":"completed"},` +
						`{"content":"Run the tests","status":"in_progress","priority":"high"},` +
						`{"content":"Fix the rounding in Mean","status":"pending"}]}`}}},
					openaitest.Reply{Chunks: []string{"I read the code; ", "next I run the tests."}},
				)
				work := t.TempDir()
				file := filepath.Join(work, "calc.go")
				os.WriteFile(file, []byte("package calc\n\n// Mean is the average of xs.\nfunc Mean(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s / len(xs)\n}\n"), 0o644)
				os.WriteFile(filepath.Join(work, "notes.txt"), []byte("todo\n"), 0o644)
				rtp, _ := filepath.Abs(".")
				setup, dataDir := filepath.Join(t.TempDir(), "setup.lua"), t.TempDir()
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
})
`, bin, dataDir, fake.URL)), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-cards-shot-"+theme.name), 160, 34, work,
					[]string{"OPENAI_API_KEY=", "TERM=xterm-256color"},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup, file)...)
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				shoot := func(name string) {
					if dir == "" {
						return
					}
					png := filepath.Join(dir, name+"-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(screen(true), "\n"), theme.bg, theme.fg), png, 1440, 620); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", png)
				}
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })

				// 1. The plan.
				keys(":CtxlsAsk Mean is flaky: make a plan.", "Enter")
				waitFor("the plan", func(s string) bool {
					return strings.Contains(s, "• plan — 1 of 3 done") && strings.Contains(s, "Run the tests  (high priority)") &&
						strings.Contains(s, "next I run the tests.")
				})
				shoot("nvim-plan")

				// 2. The command, allowed in the chat with a; its output's tail
				// under its line, the exit status at its end.
				command := `for i in $(seq 1 24); do echo "=== RUN   TestMean/$i"; done; ` +
					`echo '    calc_test.go:31: Mean([1 2]) = 1, want 1.5'; echo 'FAIL'; exit 1`
				args, _ := json.Marshal(map[string]string{"command": command})
				fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r1", Name: "run_command", Arguments: string(args)}}},
					openaitest.Reply{Chunks: []string{"The test fails: ", "`Mean` divides integers, ", "so 3/2 is 1."}})
				keys(":CtxlsAsk Run the tests.", "Enter")
				waitFor("the permission question", func(s string) bool {
					return strings.Contains(strings.NewReplacer("[", "", "]", "").Replace(s), "a allow once  d deny")
				})
				keys("C-w", "l")
				keys("a")
				keys("C-w", "p")
				waitFor("the command's end", func(s string) bool {
					return strings.Contains(s, "[exit status 1]") && strings.Contains(s, "so 3/2 is 1.")
				})
				// The chat from the command's line on.
				keys(":lua vim.api.nvim_win_call(vim.fn.bufwinid(vim.fn.bufnr('ctxls://chat/')), function() vim.fn.search('^. run `'); vim.cmd('normal! zt') end)", "Enter")
				keys(":echo", "Enter")
				waitFor("the command's card", func(s string) bool {
					return strings.Contains(s, "— failed: exit status 1") && strings.Contains(s, "… 7 lines above") && strings.Contains(s, "[exit status 1]") && !strings.Contains(s, ":lua")
				})
				shoot("nvim-command")

				// 3. An edit in the auto review mode, the user types in
				// notes.txt, then :CtxlsUndo: the chat's note names both.
				fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{
					{ID: "e1", Name: "edit_file", Arguments: `{"path":"calc.go","old_string":"func Mean(xs []int) int {","new_string":"func Mean(xs []int) float64 {"}`},
					{ID: "e2", Name: "edit_file", Arguments: `{"path":"calc.go","old_string":"\treturn s / len(xs)","new_string":"\treturn float64(s) / float64(len(xs))"}`},
					{ID: "e3", Name: "edit_file", Arguments: `{"path":"notes.txt","old_string":"todo","new_string":"todo: Mean returns float64"}`},
				}}, openaitest.Reply{Chunks: []string{"`Mean` now returns ", "a `float64`."}})
				keys(":CtxlsReviewMode auto", "Enter")
				keys(":CtxlsAsk Fix it.", "Enter")
				waitFor("the edits", func(s string) bool {
					return strings.Contains(s, "now returns") && strings.Contains(s, "float64(s) / float64(len(xs))")
				})
				keys(":split notes.txt", "Enter")
				waitFor("notes.txt", func(s string) bool { return strings.Contains(s, "todo: Mean returns float64") })
				keys("G", "o", "- check the callers", "Escape")
				keys(":wincmd p", "Enter")
				keys(":CtxlsUndo", "Enter")
				waitFor("the undo's note", func(s string) bool {
					return strings.Contains(s, "undid the model's changes") && strings.Contains(s, "return s / len(xs)")
				})
				keys(":echo", "Enter")
				shoot("nvim-undo")

				keys(":qa!", "Enter")
				deadline := time.Now().Add(15 * time.Second)
				for exec.Command("pgrep", "-f", "--", "--data-dir "+dataDir).Run() == nil {
					if time.Now().After(deadline) {
						t.Fatal("the daemon did not end after Neovim quit")
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	})
}

// TestNeovimInstructionsScreenshot renders, in a light and a dark
// background, the chat of a question asked in a workspace with
// instructions files (AGENTS.md at its root, another in api/, the folder
// of the file added to the context): the line under the chat's header
// naming them, "_instructions: AGENTS.md, api/AGENTS.md_", to
// CTXLS_SCREENSHOT_DIR/nvim-instructions-light.png and -dark.png. It runs
// only when that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run InstructionsScreenshot
func TestNeovimInstructionsScreenshot(t *testing.T) {
	shots := screenshot.Dir(t)
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := shotsDir(t, shots, nvim)
		for _, theme := range nvimThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Handler test names"}}))
				fake.Enqueue(openaitest.Reply{Delay: 20 * time.Millisecond, Chunks: []string{
					"As `api/AGENTS.md` asks, ", "name them after the route ", "and the case:\n\n",
					"```go\n", "func TestHealthzOK(t *testing.T)\n", "func TestHealthzDatabaseDown(t *testing.T)\n", "```\n\n",
					"and run `go vet ./...` ", "before you commit, ", "as the root's `AGENTS.md` says.",
				}})
				work := t.TempDir()
				os.MkdirAll(filepath.Join(work, "api"), 0o755)
				os.WriteFile(filepath.Join(work, "AGENTS.md"), []byte("# Working on this repository\n\nRun `go vet ./...` before every commit.\n"), 0o644)
				os.WriteFile(filepath.Join(work, "api", "AGENTS.md"), []byte("# api/\n\nName a handler's tests Test<Route><Case>.\n"), 0o644)
				file := filepath.Join(work, "api", "healthz.go")
				os.WriteFile(file, []byte("package api\n\nimport \"net/http\"\n\n// Healthz answers 200 while the database answers.\nfunc Healthz(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n}\n"), 0o644)
				rtp, _ := filepath.Abs(".")
				setup, dataDir := filepath.Join(t.TempDir(), "setup.lua"), t.TempDir()
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
})
`, bin, dataDir, fake.URL)), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-instr-shot-"+theme.name), 150, 32, work,
					[]string{"OPENAI_API_KEY=", "TERM=xterm-256color"},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup,
						"api/healthz.go")...)
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })
				keys(":CtxlsAdd", "Enter")
				keys(":CtxlsAsk How should I name the tests of Healthz?", "Enter")
				waitFor("the answer", func(s string) bool { return strings.Contains(s, "says.") })
				waitFor("the instructions line", func(s string) bool {
					return strings.Contains(s, "instructions: AGENTS.md, api/AGENTS.md")
				})
				keys(":echo", "Enter") // the command line cleared: the status lines end the screen
				waitFor("the command line cleared", func(s string) bool {
					return strings.HasSuffix(screenshot.LastLine(s), "ctxls: Handler test names")
				})
				if dir != "" {
					shot := filepath.Join(dir, "nvim-instructions-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(screen(true), "\n"), theme.bg, theme.fg), shot, 1340, 600); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", shot)
				}
				keys(":qa!", "Enter")
				deadline := time.Now().Add(15 * time.Second)
				for exec.Command("pgrep", "-f", "--", "--data-dir "+dataDir).Run() == nil {
					if time.Now().After(deadline) {
						t.Fatal("the daemon did not end after Neovim quit")
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
		}
	})
}

// TestNeovimFirstRunScreenshot runs Neovim in tmux, in a light and a dark
// background, as a new user would: nothing configured (no provider in
// setup(), no key, no server in the environment), a question asked. The
// chat saying what to set (the key, or another server's address and model)
// under the one-line notice is rendered to
// CTXLS_SCREENSHOT_DIR/nvim-firstrun-light.png and -dark.png; then
// :CtxlsSetup, what is set and what the daemon makes of it, to
// nvim-setup-light.png and -dark.png. It runs only when that variable is
// set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run FirstRunScreenshot
func TestNeovimFirstRunScreenshot(t *testing.T) {
	shots := screenshot.Dir(t)
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := shotsDir(t, shots, nvim)
		for _, theme := range nvimThemes {
			t.Run(theme.name, func(t *testing.T) {
				work := t.TempDir()
				file := filepath.Join(work, "main.go")
				os.WriteFile(file, []byte("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"), 0o644)
				rtp, _ := filepath.Abs(".")
				setup := filepath.Join(t.TempDir(), "setup.lua")
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({ cmd = { %q, "serve", "--data-dir", %q }, log_file = false })
`, bin, t.TempDir())), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-firstrun-"+theme.name), 110, 40, work,
					[]string{"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "ANTHROPIC_API_KEY=", "CTXLS_MODEL=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup, file)...)
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				shoot := func(name string) {
					if dir == "" {
						return
					}
					png := filepath.Join(dir, name+"-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(screen(true), "\n"), theme.bg, theme.fg), png, 1000, 740); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", png)
				}
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })
				keys(":CtxlsAsk Why does main print twice?", "Enter")
				s := waitFor("the first-run message", func(s string) bool {
					return strings.Contains(s, "CtxlsSetup` shows what is set.") || strings.Contains(s, "CtxlsSetup shows what is set.")
				})
				if last := screenshot.LastLine(s); last != "ctxls: no model provider yet: the chat says what to set" || strings.Contains(s, "Press ENTER") {
					t.Fatalf("the command line: %q\n%s", last, s)
				}
				shoot("nvim-firstrun")
				keys(":CtxlsSetup", "Enter")
				waitFor("the set-up", func(s string) bool {
					return strings.Contains(s, "daemon:  no model provider yet") && strings.Contains(s, ":help ctxls-setup")
				})
				keys(":echo", "Enter") // the command line cleared
				waitFor("the command line cleared", func(s string) bool { return strings.HasSuffix(screenshot.LastLine(s), " ctxls") })
				shoot("nvim-setup")
				quitTmux(t, term)
			})
		}
	})
}
