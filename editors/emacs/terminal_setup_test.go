package emacs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/editors/screenshot"
)

// termTheme is a theme a terminal Emacs of the tests is shown in: the
// Emacs theme, and the terminal's background and foreground for render.
type termTheme struct{ name, emacsTheme, bg, fg string }

// termThemes are the light and the dark theme the screenshots are taken in.
var termThemes = []termTheme{
	{"light", "modus-operandi", "#ffffff", "#000000"},
	{"dark", "modus-vivendi", "#000000", "#ffffff"},
}

// terminalSetup writes the init file a terminal Emacs of the tests loads
// (emacs -nw -Q -l FILE), as a person's init file would set ctxls up: the
// elpa packages, ctxls against the test's daemon binary, data directory
// and provider, the theme, the C-c x prefix, then extra Lisp, then
// ctxls-mode. It returns the file's path.
func terminalSetup(t *testing.T, emacs emacsVersion, bin, dataDir, providerURL, theme, extra string) string {
	t.Helper()
	here, _ := filepath.Abs(".")
	setup := filepath.Join(t.TempDir(), "setup.el")
	text := fmt.Sprintf(`
;; No native compilation in the background (Emacs 30 would compile each
;; package it loads whose source is at hand, in every test's fresh HOME).
(setq native-comp-jit-compilation nil native-comp-deferred-compilation nil)
;; Emacs 28's own term/xterm.el, compiled in the background as the terminal
;; starts (before this file): a failure there pops *Warnings* over the
;; window the test looks at; it is Emacs's, not ctxls's.
(setq native-comp-async-report-warnings-errors nil)
;; The elpa packages (markdown-mode, when installed), as emacs without -Q.
(require 'package)
(add-to-list 'package-directory-list %q)
(package-initialize)
(add-to-list 'load-path %q)
(require 'ctxls)
(setq ctxls-command '(%q "serve") ctxls-data-dir %q
      ctxls-provider '(:baseURL %q :model "test-model"))
(load-theme '%s t)
(setq inhibit-startup-screen t)
(menu-bar-mode -1)
(global-set-key (kbd "C-c x") 'ctxls-command-map)
%s
(ctxls-mode 1)
`, emacs.Elpa, here, bin, dataDir, providerURL, theme, extra)
	if err := os.WriteFile(setup, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return setup
}

// startTerminal starts emacs in a terminal (tmux session name, cols by
// rows) in work, with the init file setup and file visited, as a person
// would (their HOME empty, no API key), and waits for ctxls's mode line.
func startTerminal(t *testing.T, emacs emacsVersion, name string, cols, rows int, work, setup, file string) *screenshot.Tmux {
	t.Helper()
	term := screenshot.StartTmux(t, name, cols, rows, work,
		[]string{"OPENAI_API_KEY=", "TERM=xterm-256color", "HOME=" + t.TempDir()},
		emacs.Path, "-nw", "-Q", "-l", setup, file)
	term.WaitFor("the mode line", func(s string) bool { return strings.Contains(s, " ctxls") && !strings.Contains(s, "starting") })
	return term
}
