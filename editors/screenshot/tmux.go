package screenshot

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Dir is CTXLS_SCREENSHOT_DIR, where a screenshot test writes its PNGs:
// without it the test is skipped, and without tmux, Chromium or one of
// tools (the editor) it fails.
func Dir(t testing.TB, tools ...string) string {
	t.Helper()
	dir := os.Getenv("CTXLS_SCREENSHOT_DIR")
	if dir == "" {
		t.Skip("set CTXLS_SCREENSHOT_DIR to take the screenshots")
	}
	for _, tool := range append([]string{"tmux", Chromium}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for the screenshots", tool)
		}
	}
	return dir
}

// Tmux is a terminal editor running in a detached tmux session, driven with
// keys and read from its screen, as a person at that terminal would.
type Tmux struct {
	t       testing.TB
	session string
	socket  string
}

// StartTmux starts argv in a detached tmux session named session, cols×rows,
// in dir with env added to this process's environment; the session is killed
// when the test ends.
//
// Each session has a tmux server of its own (a socket named for it, no
// configuration file read): a session made on a server already running
// takes that server's environment, not the one given here, so a test
// running beside another got the other's HOME (removed when that test
// ended: Emacs 30 then warned it could not create ~/.emacs.d over the
// window under test) and its variables.
func StartTmux(t testing.TB, session string, cols, rows int, dir string, env []string, argv ...string) *Tmux {
	t.Helper()
	// Named by a hash: the socket's path (in /tmp/tmux-UID) must stay short.
	h := fnv.New64a()
	h.Write([]byte(session))
	m := &Tmux{t: t, session: session, socket: fmt.Sprintf("ctxls-%x", h.Sum64())}
	m.command("kill-server").Run()
	args := append([]string{"-f", "/dev/null", "new-session", "-d", "-s", session, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows)}, argv...)
	start := m.command(args...)
	start.Dir = dir
	start.Env = append(os.Environ(), env...)
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { m.command("kill-server").Run() })
	return m
}

// command is tmux run with args on this session's own server.
func (m *Tmux) command(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-L", m.socket}, args...)...)
}

// Alive says whether the program started in the session still runs.
func (m *Tmux) Alive() bool {
	return m.command("has-session", "-t", "="+m.session).Run() == nil
}

// Keys sends keys as tmux send-keys takes them ("-l" then text types it).
func (m *Tmux) Keys(k ...string) {
	m.t.Helper()
	if out, err := m.command(append([]string{"send-keys", "-t", m.session}, k...)...).CombinedOutput(); err != nil {
		m.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// Screen is the screen's text; with colors, with its SGR colour codes (see
// TerminalColors).
func (m *Tmux) Screen(colors bool) string {
	args := []string{"capture-pane", "-p", "-t", m.session}
	if colors {
		args = append(args, "-e")
	}
	out, _ := m.command(args...).Output()
	return string(out)
}

// WaitFor polls the screen until cond holds and returns it; after 15 s the
// test fails with the screen.
func (m *Tmux) WaitFor(what string, cond func(screen string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if s := m.Screen(false); cond(s) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	m.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, m.Screen(false))
	return ""
}

// LastLine is the screen's last line that is not blank: the echo area of
// Emacs, the command line of Neovim.
func LastLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, " \n"), "\n")
	return lines[len(lines)-1]
}
