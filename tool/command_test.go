//go:build linux

package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ctxls/ctxls/internal/proctest"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/workspace"
)

func shell(ctx context.Context, t *testing.T, line string, timeout time.Duration) ShellResult {
	t.Helper()
	r := runShell(ctx, ShellCommand{Line: line, Dir: t.TempDir(), Timeout: timeout, Env: os.Environ()})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return r
}

// TestCommandOutputCut: 3 MB of output reaches the model as its head and
// tail, about 30 KB, saying how many bytes were cut; the exit status
// follows.
func TestCommandOutputCut(t *testing.T) {
	t.Parallel()
	r := shell(t.Context(), t, `printf START; head -c 3000000 /dev/zero | tr '\0' x; printf END; exit 3`, time.Minute)
	text := r.Text()
	cut := int64(3000008 - maxCommandOutput)
	if r.Cut != cut || !strings.HasPrefix(text, "STARTxxx") || !strings.Contains(text, "[… "+strconv.FormatInt(cut, 10)+" bytes of output cut here …]") ||
		!strings.HasSuffix(text, "xxxEND\n[exit status 3]") || len(text) > maxCommandOutput+200 {
		t.Errorf("cut %d (want %d), %d bytes: %q … %q", r.Cut, cut, len(text), text[:40], text[len(text)-200:])
	}
	small := shell(t.Context(), t, `echo out; echo err >&2; echo out2`, time.Minute)
	if got := small.Text(); got != "out\nerr\nout2\n[exit status 0]" {
		t.Errorf("stdout and stderr interleaved: %q", got)
	}
}

// TestCommandTimeoutKillsGroup: past its timeout the command's group is
// killed, a sleeping grandchild too, SIGTERM first and SIGKILL ~2 s later
// for processes that ignore it; the model is told with the output so far.
func TestCommandTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	begun := time.Now()
	r := shell(t.Context(), t, `trap '' TERM; echo started; sleep 300 & echo $! > `+pidFile+`; sleep 301`, time.Second)
	took := time.Since(begun)
	if !r.TimedOut || !strings.HasPrefix(r.Text(), "started\n[the command timed out after 1s and was killed") {
		t.Errorf("timed out %v: %q", r.TimedOut, r.Text())
	}
	if took < time.Second+termGrace-200*time.Millisecond || took > 6*time.Second {
		t.Errorf("took %v: want the timeout, then %v for SIGTERM, then SIGKILL", took, termGrace)
	}
	if pid := proctest.PidIn(t, pidFile, 5*time.Second); !proctest.Gone(pid, time.Second) {
		t.Errorf("the grandchild %d is still running", pid)
	}
	// A command that ends on SIGTERM ends at once.
	begun = time.Now()
	r = shell(t.Context(), t, `sleep 300`, time.Second)
	if took := time.Since(begun); !r.TimedOut || took > time.Second+termGrace-500*time.Millisecond {
		t.Errorf("SIGTERM honoured: timed out %v after %v", r.TimedOut, took)
	}
}

// TestCommandCancelKills: cancelling the turn kills the command's group
// within a second.
func TestCommandCancelKills(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		proctest.PidIn(t, pidFile, 5*time.Second)
		cancel()
	}()
	r := shell(ctx, t, `trap '' TERM; sleep 300 & echo $! > `+pidFile+`; sleep 301`, time.Minute)
	if !r.Cancelled {
		t.Errorf("not cancelled: %q", r.Text())
	}
	if pid := proctest.PidIn(t, pidFile, 5*time.Second); !proctest.Gone(pid, time.Second) {
		t.Errorf("the grandchild %d is still running", pid)
	}
}

// TestCommandStdinClosed: a command reading stdin gets EOF at once.
func TestCommandStdinClosed(t *testing.T) {
	t.Parallel()
	begun := time.Now()
	r := shell(t.Context(), t, `cat; echo "read: $?"`, 10*time.Second)
	if took := time.Since(begun); r.Text() != "read: 0\n[exit status 0]" || took > 2*time.Second {
		t.Errorf("after %v: %q", took, r.Text())
	}
}

// TestCommandEnvWithoutKeys: a command gets the daemon's environment
// without the provider's keys: OPENAI_API_KEY, ANTHROPIC_API_KEY,
// CTXLS_MCP_TOKEN and the variable the turn's provider key is read from.
func TestCommandEnvWithoutKeys(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CTXLS_MCP_TOKEN", "MY_PROVIDER_KEY"} {
		t.Setenv(k, "secret-"+k)
	}
	t.Setenv("KEEP_ME", "kept")
	r := runShell(t.Context(), ShellCommand{Line: "env", Dir: t.TempDir(), Timeout: 10 * time.Second, Env: commandEnv("MY_PROVIDER_KEY")})
	out := r.Text()
	if strings.Contains(out, "secret-") || !strings.Contains(out, "KEEP_ME=kept") || !strings.Contains(out, "PATH=") {
		t.Errorf("the environment: %q", out)
	}
}

// TestCommandNotUTF8: output that is not UTF-8 reaches the model valid.
func TestCommandNotUTF8(t *testing.T) {
	t.Parallel()
	r := shell(t.Context(), t, `printf 'a\377\376b\n'`, 10*time.Second)
	if out := r.Text(); !utf8.ValidString(out) || out != "a\uFFFDb\n[exit status 0]" {
		t.Errorf("%q", out)
	}
}

// TestCommandProgress: the output so far is reported while the command
// runs.
func TestCommandProgress(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 100)
	r := runShell(t.Context(), ShellCommand{Line: "echo first; sleep 1; echo second", Dir: t.TempDir(), Timeout: 10 * time.Second, Env: os.Environ(),
		Progress: func(tail string) { seen <- tail }})
	close(seen)
	var got []string
	for s := range seen {
		got = append(got, s)
	}
	if len(got) == 0 || got[0] != "first\n" || r.Text() != "first\nsecond\n[exit status 0]" {
		t.Errorf("progress %q, result %q", got, r.Text())
	}
}

// TestCommandDir: cwd is under the first workspace folder when relative,
// under any when absolute; outside them it is refused.
func TestCommandDir(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(a, "sub"), 0o755)
	str := func(s string) *string { return &s }
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	for _, c := range []struct {
		cwd  *string
		want string
	}{{nil, a}, {str("sub"), real(filepath.Join(a, "sub"))}, {str(b), real(b)}} {
		if got, err := commandDir([]string{a, b}, c.cwd); err != nil || got != c.want {
			t.Errorf("cwd %v: %q %v, want %q", c.cwd, got, err, c.want)
		}
	}
	for _, bad := range []string{"..", "/", "sub/../../x", "missing"} {
		if got, err := commandDir([]string{a, b}, str(bad)); err == nil {
			t.Errorf("cwd %q allowed: %q", bad, got)
		}
	}
	if _, err := commandDir(nil, nil); err == nil {
		t.Error("no workspace folder: allowed")
	}
}

// TestCommandQuestion: the permission question names the command line
// exactly, escaped on one line, cut with its count in a short question;
// a client that shows one line gets the output's last line as progress.
func TestCommandQuestion(t *testing.T) {
	t.Parallel()
	r := PermissionRequest{Command: &CommandRequest{Line: "make test\nrm -rf \x1b[2J~", Dir: "/w", Timeout: 2 * time.Minute}}
	if q, _ := PermissionQuestion(r, 0); q != "ctxls: the model wants to run the command make test^Jrm -rf ^[[2J~ in /w (killed after 2m0s). Allow it?" {
		t.Errorf("the question: %q", q)
	}
	r.Command.Line = strings.Repeat("x", 1500)
	if q, more := PermissionQuestion(r, AskArguments); more != 500 || !strings.Contains(q, "x… (500 more characters) in /w") {
		t.Errorf("short: %d more: %q", more, q[len(q)-80:])
	}
	line := ToolCallLine(api.ToolCallParams{Tool: "run_command", Status: api.ToolRunning, Progress: "building\nok  pkg 0.1s\n\n"})
	if line != "run_command: ok  pkg 0.1s" {
		t.Errorf("the one-line progress: %q", line)
	}
}

// TestCommandNotAnswered: a question not answered in time runs nothing and
// tells the model so, never that the user declined.
func TestCommandNotAnswered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := New(BoxConfig{})
	b.SetAsker(func(ctx context.Context, r PermissionRequest) (Decision, error) {
		if r.Command == nil || r.Command.Line != "touch x" || r.Command.Dir != dir {
			t.Errorf("asked %+v", r.Command)
		}
		return RejectOnce, fmt.Errorf("no answer in 1s: %w", ErrNotAnswered)
	})
	c := &Call{TurnTools: b.Turn("", true), TT: &chat.ToolTurn{Guard: workspace.Guard{Roots: []string{dir}}}, Call: chat.ToolCall{Name: "run_command", Tool: "run_command"}}
	out, err := runCommand(t.Context(), c, commandArgs{Command: "touch x"})
	if _, statErr := os.Stat(filepath.Join(dir, "x")); statErr == nil || out != "" ||
		err == nil || err.Error() != "The user did not answer the permission question in time; the call did not run. You may ask the user." {
		t.Errorf("%q %v (ran: %v)", out, err, statErr == nil)
	}
}

// TestCommandTimeoutArgument: timeout_seconds over 600 is 600 (a huge one
// too, never a negative duration); 0 or less is an error the model gets.
func TestCommandTimeoutArgument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		seconds int
		want    time.Duration
	}{{5, 5 * time.Second}, {601, MaxCommandTimeout}, {1 << 62, MaxCommandTimeout}, {0, 0}, {-3, 0}} {
		var got time.Duration
		b := New(BoxConfig{})
		b.SetAsker(func(ctx context.Context, r PermissionRequest) (Decision, error) {
			got = r.Command.Timeout
			return RejectOnce, nil
		})
		c0 := &Call{TurnTools: b.Turn("", true), TT: &chat.ToolTurn{Guard: workspace.Guard{Roots: []string{dir}}}, Call: chat.ToolCall{Name: "run_command", Tool: "run_command"}}
		_, err := runCommand(t.Context(), c0, commandArgs{Command: "true", TimeoutSeconds: &c.seconds})
		if got != c.want || (c.want == 0) != !errors.As(err, new(Declined)) {
			t.Errorf("timeout_seconds %d: asked with %v (want %v), %v", c.seconds, got, c.want, err)
		}
	}
}
