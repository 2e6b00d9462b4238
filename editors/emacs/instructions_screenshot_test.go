package emacs_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsInstructionsScreenshot renders, in a light and a dark theme, the
// project's instructions files in the *ctxls context* buffer of an Emacs in
// a terminal (tmux): AGENTS.md typed in (unsaved), pkg/util.go added to the
// context (C-c x +), which brings pkg/AGENTS.md (over 32 KiB: cut), a
// question asked (C-c x a); then the chat alone from its top and c in it
// (ctxls-show-context): "instructions: AGENTS.md (unsaved), pkg/AGENTS.md
// (cut)" under the chat, to CTXLS_SCREENSHOT_DIR/emacs-instructions-light.png
// and -dark.png. It runs only when that variable is set:
// CTXLS_SCREENSHOT_DIR=$PWD/docs go test ./editors/emacs -run InstructionsScreenshot
func TestEmacsInstructionsScreenshot(t *testing.T) {
	dir := screenshot.Dir(t, "emacs")
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		for _, theme := range termThemes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Which rules apply"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"Two files: ", "`AGENTS.md` (answer briefly, name the files used) ",
					"and `pkg/AGENTS.md` (keep pkg small), ", "the nearer one first for `pkg/util.go`."}})
				work := instructionsWorkspace(t)
				setup := terminalSetup(t, emacs, bin, scratchDir(t), fake.URL, theme.emacsTheme, "")
				term := startTerminal(t, emacs, "ctxls-emacs-instr-"+emacs.tmuxName()+"-"+theme.name, 110, 40, work, setup, filepath.Join(work, "main.go"))
				keys, screen, waitFor := term.Keys, term.Screen, term.WaitFor

				// AGENTS.md typed in, not saved.
				keys("C-x", "C-f")
				keys("-l", "AGENTS.md")
				keys("Enter")
				waitFor("AGENTS.md", func(s string) bool { return strings.Contains(s, "Answer briefly; name the files you used.") })
				keys("M->")
				keys("-l", "Say which rules you followed.")
				waitFor("the typed rule", func(s string) bool { return strings.Contains(s, "Say which rules you followed.") })
				// pkg/util.go into the context, then the question from it.
				keys("C-x", "C-f")
				keys("-l", "pkg/util.go")
				keys("Enter")
				waitFor("util.go", func(s string) bool { return strings.Contains(s, "func Twice") })
				keys("C-c", "x", "+")
				waitFor("added", func(s string) bool { return strings.Contains(s, "added util.go to the context") })
				keys("C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Which rules apply to this file?")
				keys("Enter")
				waitFor("the answer", func(s string) bool {
					return strings.Contains(s, "for `pkg/util.go`.") && strings.Contains(s, "_tokens: ")
				})
				waitFor("the title", func(s string) bool { return strings.Contains(s, "ctxls · Which rules apply") })
				// The chat alone from its top, the context buffer under it.
				keys("C-x", "o", "C-x", "1", "M-<", "c")
				waitFor("the instructions", func(s string) bool {
					return strings.Contains(s, "instructions: AGENTS.md (unsaved), pkg/AGENTS.md (cut)") &&
						strings.Contains(s, "Session: Which rules apply") && strings.Contains(s, "Which rules apply to this file?") &&
						strings.Contains(s, "*ctxls context*")
				})
				render(t, emacs, screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-instructions-"+theme.name+".png"), 1000, 740)
			})
		}
	})
}
