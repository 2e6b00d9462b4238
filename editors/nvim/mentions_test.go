package nvim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimMentions runs Neovim in a terminal (tmux) as a person types in
// the compose window: "@log" opens Neovim's own completion menu with the
// workspace's files matching it (ctxls.workspace.files), auth/login.go
// first and selected; typing on narrows it; Ctrl-N and Ctrl-P move in it,
// Ctrl-Y takes the file (the user's 'completeopt', menu,menuone,noselect,
// set aside while the compose window is in Insert mode), typing on opens
// no menu again; sent, the question reaches the provider as typed with
// auth/login.go's text, and the chat shows the file above the question.
// Then Ctrl-E closes a menu, Ctrl-X Ctrl-O opens it again and Enter takes
// a file. With CTXLS_SCREENSHOT_DIR set, the menu is rendered in a light
// and a dark background to nvim-mention-light.png and -dark.png (in the
// first Neovim):
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/nvim -run Mentions
func TestNeovimMentions(t *testing.T) {
	t.Parallel()
	needTmux(t)
	shots := os.Getenv("CTXLS_SCREENSHOT_DIR")
	themes := nvimThemes[:1]
	if shots != "" {
		screenshot.Dir(t)
		themes = nvimThemes
	}
	bin := lsptest.BuildBinary(t)
	eachNeovim(t, func(t *testing.T, nvim string) {
		dir := ""
		if shots != "" {
			dir = shotsDir(t, shots, nvim)
		}
		for _, theme := range themes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Login flow"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"`main` starts the server ", "and hands `/login` to `auth.Login`."}},
					openaitest.Reply{Chunks: []string{"`Login` checks the password ", "and sets the session cookie."}})
				work := t.TempDir()
				for name, text := range map[string]string{
					"main.go":           "package main\n\nimport \"example.com/app/auth\"\n\nfunc main() {\n\thttp.HandleFunc(\"/login\", auth.Login)\n}\n",
					"auth/login.go":     "package auth\n\n// Login checks the password. LOGIN_GO_MARKER\nfunc Login(w http.ResponseWriter, r *http.Request) {}\n",
					"auth/logout.go":    "package auth\n\nfunc Logout(w http.ResponseWriter, r *http.Request) {}\n",
					"docs/changelog.md": "# Changes\n",
					"server/http.go":    "package server\n",
				} {
					os.MkdirAll(filepath.Dir(filepath.Join(work, name)), 0o755)
					os.WriteFile(filepath.Join(work, name), []byte(text), 0o644)
				}
				rtp, _ := filepath.Abs(".")
				setup := filepath.Join(t.TempDir(), "setup.lua")
				os.WriteFile(setup, []byte(fmt.Sprintf(`require("ctxls").setup({
  cmd = { %q, "serve", "--data-dir", %q },
  provider = { baseURL = %q, model = "test-model" },
  log_file = false,
})
`, bin, t.TempDir(), fake.URL)), 0o644)
				term := startTmux(t, tmuxName(t, "ctxls-mention-"+theme.name), 110, 32, work,
					[]string{"OPENAI_API_KEY=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
					nvimArgs(t, nvim, "--clean", "-c", "set background="+theme.name, "-c", "set rtp+="+rtp, "-c", "runtime plugin/ctxls.lua",
						"-c", "set number laststatus=2 completeopt=menu,menuone,noselect", "-c", `set statusline=\ %t%=%{v:lua.require'ctxls'.statusline()}\ `, "-c", "luafile "+setup, "main.go")...)
				keys, waitFor := term.Keys, term.WaitFor
				waitFor("the daemon", func(s string) bool { return strings.Contains(s, " ctxls\n") })
				keys(":CtxlsAsk What does main do?", "Enter")
				waitFor("the first answer", func(s string) bool {
					return strings.Contains(s, "auth.Login") && strings.Contains(s, "ctxls: Login flow")
				})
				keys(":CtxlsChat", "Enter")
				keys("What does @log")
				// The menu: the files whose path holds l, o, g in order, the
				// name starting with it first (and selected, not typed).
				menu := func(s string) []string {
					var out []string
					for _, l := range strings.Split(s, "\n") {
						if i := strings.Index(l, "[file]"); i > 0 {
							f := strings.Fields(l[:i])
							out = append(out, f[len(f)-1])
						}
					}
					return out
				}
				s := waitFor("the menu", func(s string) bool { return len(menu(s)) >= 2 })
				if got := menu(s); got[0] != "auth/login.go" || got[1] != "auth/logout.go" || !strings.Contains(s, "What does @log\n") && !strings.Contains(s, "What does @log ") {
					t.Fatalf("the menu %q; the screen:\n%s", got, s)
				}
				if strings.Contains(s, "server/http.go") || strings.Contains(s, "main.go [file]") {
					t.Fatalf("the menu lists files that do not match: the screen:\n%s", s)
				}
				if dir != "" {
					png := filepath.Join(dir, "nvim-mention-"+theme.name+".png")
					if err := screenshot.HTML(screenshot.TerminalColors(strings.TrimRight(term.Screen(true), "\n"), theme.bg, theme.fg), png, 1000, 580); err != nil {
						t.Fatal(err)
					}
					t.Logf("wrote %s", png)
				}
				// Typed on, the menu narrows: "@logi" holds auth/login.go alone.
				keys("i")
				waitFor("the narrower menu", func(s string) bool { m := menu(s); return len(m) == 1 && m[0] == "auth/login.go" })
				keys("BSpace")
				waitFor("the menu again", func(s string) bool { return len(menu(s)) >= 2 })
				keys("C-n")
				waitFor("Ctrl-N's file", func(s string) bool { return strings.Contains(s, "What does @auth/logout.go") && len(menu(s)) >= 2 })
				keys("C-p")
				waitFor("Ctrl-P's file", func(s string) bool { return strings.Contains(s, "What does @auth/login.go") && len(menu(s)) >= 2 })
				keys("C-y")
				keys(" do?")
				s = waitFor("the question typed", func(s string) bool { return strings.Contains(s, "What does @auth/login.go do?") })
				if m := menu(term.Screen(false)); len(m) > 0 {
					t.Fatalf("a menu after the file was taken: %q\n%s", m, s)
				}
				keys("C-s")
				waitFor("the answer", func(s string) bool {
					return strings.Contains(s, "checks the password and sets the session") && strings.Contains(s, "with main.go, auth/login.go")
				})
				// Ctrl-X Ctrl-O (the compose buffer's omnifunc) lists them too.
				keys("see @lo")
				waitFor("the menu for @lo", func(s string) bool { return len(menu(s)) >= 2 })
				keys("C-e")
				waitFor("the menu closed", func(s string) bool { return len(menu(s)) == 0 && strings.Contains(s, "see @lo") })
				keys("C-x", "C-o")
				waitFor("Ctrl-X Ctrl-O's menu", func(s string) bool { m := menu(s); return len(m) >= 2 && m[0] == "auth/login.go" })
				// Enter takes the selected file (no new line).
				keys("Enter")
				waitFor("the file Enter took", func(s string) bool { return strings.Contains(s, "see @auth/login.go\n") && len(menu(s)) == 0 })
				keys("Escape")
				// Out of Insert mode the user's 'completeopt' is theirs again.
				keys(":setglobal completeopt?", "Enter")
				waitFor("the user's completeopt", func(s string) bool { return screenshot.LastLine(s) == "  completeopt=menu,menuone,noselect" })
				reqs := fake.Streamed()
				last := reqs[len(reqs)-1]
				if q := last.Question(); q != "What does @auth/login.go do?" {
					t.Errorf("the question asked: %q", q)
				}
				if c := last.ModelContext(); !strings.Contains(c, "LOGIN_GO_MARKER") {
					t.Errorf("auth/login.go did not go with the question:\n%s", c)
				}
				quitTmux(t, term)
			})
		}
	})
}
