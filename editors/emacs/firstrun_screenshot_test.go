package emacs_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsFirstRunScreenshot runs Emacs in a terminal (tmux), in a light
// and a dark theme, as a new user: nothing set (no ctxls-provider, no key,
// no server in the environment), a question asked (C-c x a). The chat
// saying what to set (the key in ~/.authinfo.gpg or ctxls-api-key, or
// another server's address and model), the echo area's one line under it,
// is rendered to CTXLS_SCREENSHOT_DIR/emacs-firstrun-light.png and
// -dark.png. Then M-x ctxls-setup: the server's base URL, the key (saved
// to ~/.authinfo), and the model prompt with the server's models listed
// (TAB), rendered to emacs-setup-light.png and -dark.png; the model taken,
// the question asked again is answered. It runs only when that variable
// is set: CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run FirstRunScreenshot
func TestEmacsFirstRunScreenshot(t *testing.T) {
	dir := screenshot.Dir(t, "emacs")
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		for _, theme := range termThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithAPIKey(testKey), openaitest.WithModels("qwen2.5-coder", "llama3.1", "mistral-nemo"),
					openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Printing twice"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"`main` calls ", "`fmt.Println` once: ", "it prints once."}})
				work := workspace(t)
				home := t.TempDir()
				// As a person's Emacs: an init file (customize saves there).
				setup := terminalSetup(t, emacs, bin, scratchDir(t), fake.URL, theme.emacsTheme, fmt.Sprintf(`(setq ctxls-provider nil
      user-init-file %q custom-file %q)`, filepath.Join(home, ".emacs.d", "init.el"), filepath.Join(home, ".emacs.d", "custom.el")))
				term := screenshot.StartTmux(t, "ctxls-emacs-firstrun-"+emacs.tmuxName()+"-"+theme.name, 110, 46, work,
					[]string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "OPENAI_BASE_URL=", "CTXLS_MODEL=", "TERM=xterm-256color", "HOME=" + home},
					emacs.Path, "-nw", "-Q", "-l", setup, filepath.Join(work, "main.go"))
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor
				waitFor("the mode line", func(s string) bool { return strings.Contains(s, " ctxls") && !strings.Contains(s, "starting") })
				keys("C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Why does main print twice?")
				keys("Enter")
				waitFor("the first-run message", func(s string) bool {
					return strings.Contains(s, "M-x ctxls-setup asks for them") &&
						screenshot.LastLine(s) == "ctxls: no model provider yet: M-x ctxls-setup, or see the chat"
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-firstrun-"+theme.name+".png"), 1000, 840)

				keys("M-x")
				keys("-l", "ctxls-setup")
				keys("Enter")
				waitFor("the server's prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Base URL of the model server") })
				keys("-l", fake.URL)
				keys("Enter")
				waitFor("the key's prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Key for 127.0.0.1") })
				keys("-l", testKey)
				keys("Enter")
				waitFor("the question to save it", func(s string) bool {
					return strings.Contains(screenshot.LastLine(s), "Save auth info to file ~/.authinfo?")
				})
				keys("y")
				waitFor("the model's prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Model (default qwen2.5-coder)") })
				keys("Tab")
				s := waitFor("the server's models", func(s string) bool {
					return strings.Contains(s, "*Completions*") && strings.Contains(s, "mistral-nemo")
				})
				if strings.Contains(s, testKey) {
					t.Fatalf("the key is on the screen:\n%s", s)
				}
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-setup-"+theme.name+".png"), 1000, 840)
				keys("-l", "qwen2.5-coder")
				keys("Enter")
				waitFor("saved", func(s string) bool { return strings.Contains(s, "saved in `ctxls-provider'") })
				// Asked again (M-p brings the question back): answered.
				keys("C-c", "x", "a", "M-p", "Enter")
				waitFor("the answer", func(s string) bool { return strings.Contains(s, "it prints once.") })
				if reqs := fake.Requests(); len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer "+testKey || reqs[0].Parsed.Model != "qwen2.5-coder" {
					t.Errorf("the provider did not get the question with the key and the model")
				}
			})
		}
	})
}
