package emacs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsMentionScreenshot renders, in a light and a dark theme, an
// Emacs in a terminal (tmux) where a question is typed at the ctxls-ask
// prompt (C-c x a): "@main.go", then "@log" and TAB list the workspace's
// files that match (auth/login.go, auth/logout.go, docs/login.md) in
// *Completions*, rendered to CTXLS_SCREENSHOT_DIR/emacs-mention-light.png
// and -dark.png; then "in.g" and TAB complete auth/login.go, the question
// is sent and answered, the chat showing "_with main.go, auth/login.go_"
// under it; and the next question, typed in the question buffer (C-c x w),
// shows its @auth/logout.go as a mention: rendered to
// emacs-mention-chat-light.png and -dark.png. It runs only when that
// variable is set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run MentionScreenshot
func TestEmacsMentionScreenshot(t *testing.T) {
	dir := screenshot.Dir(t, "emacs")
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		for _, theme := range termThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Login redirect"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"`main` never calls ", "`loginRedirect`: ", "the redirect comes from ", "`auth/login.go` alone."}})
				work := workspace(t)
				for name, text := range map[string]string{
					"auth/login.go":  "package auth\n\nfunc loginRedirect() {}\n",
					"auth/logout.go": "package auth\n\nfunc logout() {}\n",
					"docs/login.md":  "# Logging in\n",
				} {
					p := filepath.Join(work, name)
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				setup := terminalSetup(t, emacs, bin, scratchDir(t), fake.URL, theme.emacsTheme, "")
				term := startTerminal(t, emacs, "ctxls-emacs-mention-"+emacs.tmuxName()+"-"+theme.name, 110, 40, work, setup, filepath.Join(work, "main.go"))
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				// At the prompt (C-c x a): "@main.go" typed, then "@log" and TAB.
				keys("C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls (with main.go):") })
				keys("-l", "Why does @main.go not call @log")
				keys("Tab")
				waitFor("the files that match", func(s string) bool {
					return strings.Contains(s, "*Completions*") && strings.Contains(s, "auth/login.go") &&
						strings.Contains(s, "auth/logout.go") && strings.Contains(s, "docs/login.md")
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-mention-"+theme.name+".png"), 1000, 740)
				keys("-l", "in.g")
				keys("Tab")
				waitFor("the file completed", func(s string) bool {
					return strings.Contains(screenshot.LastLine(s), "Why does @main.go not call @auth/login.go")
				})
				keys("-l", "directly?")
				keys("Enter")
				waitFor("the answer", func(s string) bool {
					return strings.Contains(s, "_with main.go, auth/login.go_") && strings.Contains(s, "`auth/login.go` alone.") &&
						strings.Contains(s, "_tokens: ")
				})
				waitFor("the title", func(s string) bool { return strings.Contains(s, "# Login redirect") })
				// The next question in the question buffer (C-c x w): its
				// mention shows as one once it names a file.
				keys("C-c", "x", "w")
				waitFor("the question buffer", func(s string) bool {
					return strings.Contains(s, "ctxls: your question (with main.go)   RET new line   C-c C-c send   C-c C-k abort   M-p history")
				})
				keys("-l", "And what does @auth/logout.go do?")
				waitFor("the typed question", func(s string) bool { return strings.Contains(s, "And what does @auth/logout.go do?") })
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-mention-chat-"+theme.name+".png"), 1000, 740)
				keys("C-c", "C-k")
				if q := fake.LastStreamed().Question(); q != "Why does @main.go not call @auth/login.go directly?" {
					t.Errorf("the model was asked %q", q)
				}
			})
		}
	})
}
