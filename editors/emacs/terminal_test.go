package emacs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsLiveElsewhere runs Emacs in a terminal (tmux) with its real
// command loop and the local (SQLite) store: a question asked in Emacs, then
// one asked in the same session from the command line (ctxls chat -c, on the
// same data directory). The chat shows the turn made elsewhere by itself, no
// key pressed (the daemon looks at the sessions' activity every half
// second), and its header line the session's total with the key hints that
// fit in 110 columns, none cut off. With CTXLS_SCREENSHOT_DIR set it runs in
// a light and a dark theme and renders the chat then to
// emacs-elsewhere-light.png and emacs-elsewhere-dark.png.
func TestEmacsLiveElsewhere(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CTXLS_SCREENSHOT_DIR")
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed: .ci/run must call editors/emacs/ci-install.sh")
		}
		t.Skip("tmux is not installed")
	}
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		readLisp(t)
		bin := lsptest.BuildBinary(t)
		themes := termThemes[:1]
		if dir != "" {
			themes = termThemes
		}
		for _, theme := range themes {
			t.Run(theme.name, func(t *testing.T) {
				fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Where main starts"}}))
				fake.Enqueue(openaitest.Reply{Chunks: []string{"At `func main`, ", "line 5."}},
					openaitest.Reply{Chunks: []string{"It prints `héllo` ", "and returns."}})
				work := workspace(t)
				data := scratchDir(t)
				setup := terminalSetup(t, emacs, bin, data, fake.URL, theme.emacsTheme, "")
				term := startTerminal(t, emacs, "ctxls-emacs-comeback-"+emacs.tmuxName()+"-"+theme.name, 110, 40, work, setup, filepath.Join(work, "main.go"))
				keys, waitFor := term.Keys, term.WaitFor
				keys("C-c", "x", "a")
				waitFor("the prompt", func(s string) bool { return strings.Contains(screenshot.LastLine(s), "Ask ctxls") })
				keys("-l", "Where does the program start?")
				keys("Enter")
				waitFor("the answer", func(s string) bool { return strings.Contains(s, "line 5.\n\n_tokens: 10 in · 2 out_") })
				waitFor("the title", func(s string) bool { return strings.Contains(s, "ctxls · Where main starts") })

				// Asked elsewhere: the command line, on the same data directory.
				cli := exec.Command(bin, "chat", "-c", "And what does it print?")
				cli.Env = append(os.Environ(), "CTXLS_DATA_DIR="+data, "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=",
					"CTXLS_MODEL=test-model", "CTXLS_STORE=", "HOME="+t.TempDir())
				if out, err := cli.CombinedOutput(); err != nil || !strings.Contains(string(out), "and returns.") {
					t.Fatalf("ctxls chat -c: %v\n%s", err, out)
				}
				// No key pressed: the chat shows it by itself.
				shown := waitFor("the turn made elsewhere", func(s string) bool {
					return strings.Contains(s, "And what does it print?\n\n## ctxls\n\nIt prints `héllo` and returns.\n\n_tokens: 10 in · 2 out_") &&
						strings.Contains(s, "ctxls · Where main starts · test-model · 20 in · 4 out") // the session's total with it
				})
				if strings.Count(shown, "And what does it print?") != 1 {
					t.Errorf("the turn made elsewhere is not shown once:\n%s", shown)
				}
				// The header line ends with its last key hint, not cut off at
				// the terminal's edge (110 columns).
				header := headerLine(shown, " ctxls · Where main starts")
				if want := " ctxls · Where main starts · test-model · 20 in · 4 out   a ask  w write  r resume  n new  s search  ? keys"; header != want {
					t.Errorf("the chat's header line is\n%q, want\n%q", header, want)
				}
				keys("C-x", "o")
				if dir != "" {
					// The chat alone, from its top: both turns.
					keys("C-x", "1", "M-<")
					waitFor("the whole chat", func(s string) bool {
						return strings.HasPrefix(s, " ctxls · ") && strings.Contains(s, "# Where main starts") && strings.Contains(s, "It prints `héllo` and returns.") &&
							chatAllLine.MatchString(s)
					})
					render(t, emacs, term.Screen(true), theme.bg, theme.fg, filepath.Join(dir, "emacs-elsewhere-"+theme.name+".png"), 1000, 740)
				}
			})
		}
	})
}

// scratchDir is a temporary directory for a daemon that outlives the test's
// terminal: tmux is killed as the test ends, and the daemon, its stdin
// closed, may still write into the directory as t.TempDir's clean-up
// removes it. This one is removed once the daemon has let it be (tries for
// 5 s). Call it before screenshot.StartTmux, so it is removed after.
func scratchDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctxls-emacs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var err error
		for range 50 {
			if err = os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("removing %s: %v", dir, err)
	})
	return dir
}
