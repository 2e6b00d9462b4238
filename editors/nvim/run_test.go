package nvim_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/internal/editortest"
)

// eachNeovim runs test as a parallel subtest in every installed Neovim
// (editortest.Editors: the one on PATH, named "path", then each newer one
// editors/install-newer.sh put in the cache, named by its version), given
// the program to run.
func eachNeovim(t *testing.T, test func(t *testing.T, nvim string)) {
	t.Helper()
	for _, e := range editortest.Editors(t, "nvim") {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			test(t, e.Path)
		})
	}
}

// nvimArgs is the command line that runs nvim with args, watched for the
// use of deprecated features (test/deprecations.lua, loaded before
// anything else: vim.deprecate's calls, "deprecated" in :messages): when
// the test ends it fails with each one.
func nvimArgs(t *testing.T, nvim string, args ...string) []string {
	t.Helper()
	here, _ := filepath.Abs(".")
	report := filepath.Join(t.TempDir(), "deprecations")
	t.Cleanup(func() {
		if b, err := os.ReadFile(report); err == nil && len(b) > 0 {
			t.Errorf("deprecated features used in Neovim (%s):\n%s", nvim, b)
		}
	})
	hook := "lua dofile(" + strconv.Quote(filepath.Join(here, "test", "deprecations.lua")) + ")(" + strconv.Quote(report) + ")"
	return append([]string{nvim, "--cmd", hook}, args...)
}

// headlessArgs is the command line of a headless Neovim running a test
// script (test/NAME.lua) with the plugin on its runtimepath.
func headlessArgs(t *testing.T, nvim, script string) []string {
	t.Helper()
	here, _ := filepath.Abs(".")
	return nvimArgs(t, nvim, "--headless", "--clean", "-c", "set rtp+="+here, "-c", "luafile "+filepath.Join(here, "test", script))
}

// runNvim runs a test script (test/NAME.lua) in a headless Neovim with the
// plugin on its runtimepath, in dir ("" for this folder), with env, and
// fails the test with the editor's output when the script fails or takes
// longer than timeout. what names the run in the failure.
func runNvim(t *testing.T, nvim, dir, script string, env []string, timeout time.Duration, what string) {
	t.Helper()
	argv := headlessArgs(t, nvim, script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: nvim did not finish:\n%s", what, out)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
}

// tmuxName is a tmux session's name for a test: name, the process and
// the test's Neovim told apart (the versions run at once).
func tmuxName(t *testing.T, name string) string {
	return name + "-" + strconv.Itoa(os.Getpid()) + "-" + strings.NewReplacer("/", "-", ".", "_", " ", "_").Replace(t.Name())
}

// quitTmux quits the Neovim in term (:qa!) and waits for it to end, so
// that its deprecation check (at VimLeavePre) has run.
func quitTmux(t *testing.T, term *screenshot.Tmux) {
	t.Helper()
	term.Keys("Escape", ":qa!", "Enter")
	deadline := time.Now().Add(15 * time.Second)
	for term.Alive() {
		if time.Now().After(deadline) {
			t.Fatal("Neovim did not quit")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startTmux starts Neovim, argv from nvimArgs, in a tmux session (see
// screenshot.StartTmux) with env set for it. tmux starts a session's
// program in the environment of its server, which is the environment of
// whichever test started tmux first, not this test's (one test's Neovim
// read another's HOME, long removed): env is set on the command line too.
// TERM is left to tmux.
func startTmux(t *testing.T, session string, cols, rows int, dir string, env []string, argv ...string) *screenshot.Tmux {
	t.Helper()
	cmd := []string{"env"}
	for _, e := range env {
		if !strings.HasPrefix(e, "TERM=") {
			cmd = append(cmd, e)
		}
	}
	return screenshot.StartTmux(t, session, cols, rows, dir, env, append(cmd, argv...)...)
}

// stateWatch reads the state a test's Neovim in tmux writes down, as JSON
// of T, to path (a timer of its setup script): read returns the latest
// (read again while the file is being written, until complete says it is),
// and wait waits up to 20 s for cond, failing with the state and the screen.
func stateWatch[T any](t *testing.T, path string, term *screenshot.Tmux, complete func(T) bool) (read func() T, wait func(what string, cond func(T) bool) T) {
	read = func() T {
		var st T
		for range 20 {
			b, _ := os.ReadFile(path)
			var zero T
			if st = zero; json.Unmarshal(b, &st) == nil && complete(st) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return st
	}
	wait = func(what string, cond func(T) bool) T {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if st := read(); cond(st) {
				return st
			}
		}
		t.Fatalf("%s: the state %+v\nthe screen:\n%s", what, read(), term.Screen(false))
		var zero T
		return zero
	}
	return read, wait
}
