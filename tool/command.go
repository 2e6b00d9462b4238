package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
)

// run_command: a shell command line the model asks to run, always with the
// user's permission (once, or this exact command line always in the
// session), by sh -c in a workspace folder, in a process group of its own
// (command_linux.go), stdin closed, the environment without the provider's
// keys, its output streamed as the call's progress and given to the model
// with the exit status, cut to its head and tail.

// Limits of run_command.
const (
	DefaultCommandTimeout = 120 * time.Second
	MaxCommandTimeout     = 600 * time.Second
	// maxCommandOutput is how much of a command's output the model gets:
	// its first and last half of it, with the count of bytes cut between.
	maxCommandOutput = MaxCommandOutput
	// MaxCommandOutput bounds what a client's terminal keeps of a
	// command's output (ACP's outputByteLimit).
	MaxCommandOutput = 30 << 10
	// maxCommandProgress is how much of the output so far a progress
	// report carries (its tail).
	maxCommandProgress = 4 << 10
	// commandProgressEvery is how often the output so far is reported
	// while it grows.
	commandProgressEvery = 100 * time.Millisecond
	// termGrace is how long a timed-out command's group has between
	// SIGTERM and SIGKILL; cancelGrace the same for a cancelled turn's.
	termGrace   = 2 * time.Second
	cancelGrace = 500 * time.Millisecond
)

// secretEnv are the daemon's variables a command never gets (beside the
// turn's provider's key variable, chat.ToolTurn.KeyEnv).
var secretEnv = []string{api.OpenAIKeyEnv, api.AnthropicKeyEnv, api.MCPTokenEnv}

type commandArgs struct {
	Command        string  `json:"command" jsonschema:"the shell command line, run by sh -c"`
	Cwd            *string `json:"cwd,omitempty" jsonschema:"the folder to run it in: a path relative to the first workspace folder, or an absolute path inside a workspace folder (default: the first workspace folder)"`
	TimeoutSeconds *int    `json:"timeout_seconds,omitempty" jsonschema:"seconds before the command is killed (default 120, at most 600)"`
}

var runCommandTool = define(Tool{
	Name: "run_command",
	Description: "Run a shell command line (sh -c) in the workspace, with the user's permission for each command line, " +
		"and get its output (stdout and stderr interleaved; at most about 30 KB: its head and tail) and exit status. " +
		"stdin is closed; the command is killed after timeout_seconds. Prefer commands that end on their own " +
		"(no watchers, servers or pagers).",
	Asks: true,
	Kind: "execute",
	// Offered where the door can ask (a call nobody can allow never runs).
	Offered: func(ctx context.Context, t *TurnTools) bool {
		t.box.mu.Lock()
		defer t.box.mu.Unlock()
		return t.box.asker != nil
	},
}, nil, runCommand)

func runCommand(ctx context.Context, c *Call, a commandArgs) (string, error) {
	if strings.TrimSpace(a.Command) == "" {
		return "", fmt.Errorf("command is empty")
	}
	timeout := DefaultCommandTimeout
	if a.TimeoutSeconds != nil {
		if *a.TimeoutSeconds <= 0 {
			return "", fmt.Errorf("timeout_seconds is %d; give a number of seconds from 1 to %d", *a.TimeoutSeconds, int(MaxCommandTimeout/time.Second))
		}
		timeout = time.Duration(min(*a.TimeoutSeconds, int(MaxCommandTimeout/time.Second))) * time.Second
	}
	var roots []string
	keyEnv := ""
	if c.TT != nil {
		roots, keyEnv = c.TT.Roots, c.TT.KeyEnv
	}
	dir, err := commandDir(roots, a.Cwd)
	if err != nil {
		return "", err
	}
	sessionID := ""
	if c.TT != nil {
		sessionID = c.TT.SessionID
	}
	if ok, why := c.TurnTools.permittedCommand(ctx, sessionID, c.Call, a.Command, dir, timeout); !ok {
		return "", Declined(why)
	}
	c.emit(chat.ToolAllowed{Call: c.Call})
	sc := ShellCommand{Line: a.Command, Dir: dir, Timeout: timeout, Env: commandEnv(keyEnv),
		Progress: func(tail string) { c.emit(chat.ToolProgress{Call: c.Call, Message: tail}) }}
	var res ShellResult
	ran := false
	if td := c.box.terminalDoor(); td != nil {
		// The client's terminal: its environment is the client's, with the
		// provider's key variables emptied.
		res, ran = td.RunInTerminal(ctx, sessionID, c.Call.ID, TerminalCommand{ShellCommand: sc, Blank: blankedEnv(keyEnv)})
	}
	if !ran {
		res = runShell(ctx, sc)
	}
	c.Summarize(res.Status())
	if res.Err != nil {
		return "", res.Err
	}
	out := res.Text()
	if res.TimedOut || res.Cancelled || res.ExitCode != 0 {
		return "", Refused(out)
	}
	return out, nil
}

// TerminalDoor runs run_command's command lines in the client's own
// terminal (ACP terminal/create, wait_for_exit raced against the timeout,
// kill, release), so the client shows it live. RunInTerminal reports
// false when the client offers no terminal (ctxls then runs the command
// itself).
type TerminalDoor interface {
	RunInTerminal(ctx context.Context, sessionID, callID string, tc TerminalCommand) (ShellResult, bool)
}

// TerminalCommand is a command for the client's terminal: the line, its
// folder and timeout, and the variables to set empty there (the
// provider's keys: the client's environment is its own).
type TerminalCommand struct {
	ShellCommand
	Blank []string
}

// TerminalExit is how a command in a client's terminal ended, as the
// client says it (both nil: it did not say).
type TerminalExit struct {
	Code   *int
	Signal *string
}

// Into records the exit in res.
func (e TerminalExit) Into(res *ShellResult) {
	switch {
	case e.Signal != nil && *e.Signal != "":
		res.ExitCode, res.Signal = -1, *e.Signal
	case e.Code != nil:
		res.ExitCode = *e.Code
	case !res.TimedOut && !res.Cancelled:
		res.ExitCode, res.Signal = -1, "an unknown end (the client did not say)"
	}
}

// blankedEnv are the variables a command in the client's terminal gets
// set empty.
func blankedEnv(keyEnv string) []string {
	out := slices.Clone(secretEnv)
	if keyEnv != "" && !slices.Contains(out, keyEnv) {
		out = append(out, keyEnv)
	}
	return out
}

// commandDir is the folder a command runs in: the first workspace folder,
// or cwd under it (relative) or under any workspace folder (absolute).
func commandDir(roots []string, cwd *string) (string, error) {
	if len(roots) == 0 {
		return "", fmt.Errorf("run_command needs a workspace folder, and this turn has none")
	}
	if cwd == nil || *cwd == "" {
		return roots[0], nil
	}
	dir := *cwd
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(roots[0], dir)
	}
	dir = filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("cwd %q: %v", *cwd, err)
	}
	inside := slices.ContainsFunc(roots, func(r string) bool {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			rr = r
		}
		rel, err := filepath.Rel(rr, real)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	})
	if !inside {
		return "", fmt.Errorf("cwd %q is not inside a workspace folder", *cwd)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("cwd %q is not a folder", *cwd)
	}
	return real, nil
}

// commandEnv is a command's environment: the daemon's, without the
// provider's keys (secretEnv and keyEnv, the variable the turn's provider
// key is read from).
func commandEnv(keyEnv string) []string {
	return scrubEnv(os.Environ(), append(slices.Clone(secretEnv), keyEnv))
}

// scrubEnv is env without the variables named in drop.
func scrubEnv(env, drop []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(drop, name)
	})
}

// CommandKey is the key "allow this command always" is stored under in
// the session's tool decisions: the exact command line's.
func CommandKey(line string) string {
	sum := sha256.Sum256([]byte(line))
	return "run_command@" + hex.EncodeToString(sum[:10])
}

// ShellCommand is one command line to run.
type ShellCommand struct {
	Line    string
	Dir     string
	Timeout time.Duration
	Env     []string
	// Progress, when set, is given the output so far (its tail, valid
	// UTF-8) as it grows, at most every commandProgressEvery.
	Progress func(tail string)
}

// ShellResult is how a command ended.
type ShellResult struct {
	Line      string
	Output    []byte // the head, when Cut > 0
	Tail      []byte // the tail, when Cut > 0
	Cut       int64  // bytes of output left out between Output and Tail
	ExitCode  int    // -1 when killed by a signal
	Signal    string // the signal that ended it, if one did
	TimedOut  bool
	Timeout   time.Duration
	Cancelled bool
	Err       error // it could not be started
	// HeadCut: the start of the output was cut where the command ran (the
	// client's terminal keeps its last bytes).
	HeadCut bool
}

// Status says how the command ended, in a few words.
func (r ShellResult) Status() string {
	switch {
	case r.Err != nil:
		return "not started"
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s", r.Timeout)
	case r.Cancelled:
		return "cancelled"
	case r.Signal != "":
		return "killed by " + r.Signal
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// Text is what the model is told: the output (valid UTF-8; its head and
// tail with the count of bytes cut between) and how the command ended.
func (r ShellResult) Text() string {
	var b strings.Builder
	if r.HeadCut {
		b.WriteString("[… the start of the output was cut; its last part follows …]\n")
	}
	out := strings.ToValidUTF8(string(r.Output), "\uFFFD")
	b.WriteString(out)
	if r.Cut > 0 {
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[… %d bytes of output cut here …]\n", r.Cut)
		b.WriteString(strings.ToValidUTF8(string(r.Tail), "\uFFFD"))
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		b.WriteString("(no output)\n")
	}
	switch {
	case r.TimedOut:
		fmt.Fprintf(&b, "[the command timed out after %s and was killed (its process group: SIGTERM, then SIGKILL); the output above is what it wrote until then]", r.Timeout)
	case r.Cancelled:
		b.WriteString("[the turn was cancelled and the command killed]")
	case r.Signal != "":
		fmt.Fprintf(&b, "[killed by %s]", r.Signal)
	default:
		fmt.Fprintf(&b, "[exit status %d]", r.ExitCode)
	}
	return b.String()
}

// output keeps a command's output: its first half of maxCommandOutput
// whole, then the last half in a ring.
type output struct {
	head  []byte
	tail  []byte // a ring of at most half once full
	start int    // where the ring's oldest byte is
	total int64
}

func (o *output) write(p []byte) {
	o.total += int64(len(p))
	half := maxCommandOutput / 2
	if n := min(half-len(o.head), len(p)); n > 0 {
		o.head = append(o.head, p[:n]...)
		p = p[n:]
	}
	for len(p) > 0 {
		if len(o.tail) < half {
			n := min(half-len(o.tail), len(p))
			o.tail = append(o.tail, p[:n]...)
			p = p[n:]
			continue
		}
		if len(p) >= half {
			copy(o.tail, p[len(p)-half:])
			o.start = 0
			return
		}
		n := copy(o.tail[o.start:], p)
		p = p[n:]
		o.start = (o.start + n) % half
	}
}

// ordered is the ring's bytes oldest first.
func (o *output) ordered() []byte {
	return append(slices.Clone(o.tail[o.start:]), o.tail[:o.start]...)
}

// last is the output's last n bytes (or fewer), valid UTF-8. (Once
// output was cut, the ring alone holds more than n.)
func (o *output) last(n int) string {
	all := append(slices.Clone(o.head), o.ordered()...)
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return strings.ToValidUTF8(string(all), "\uFFFD")
}

// result fills r's output.
func (o *output) result(r *ShellResult) {
	kept := int64(len(o.head) + len(o.tail))
	if kept == o.total {
		r.Output = append(slices.Clone(o.head), o.ordered()...)
		return
	}
	r.Output, r.Tail, r.Cut = slices.Clone(o.head), o.ordered(), o.total-kept
}
