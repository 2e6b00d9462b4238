package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/ctxls/ctxls/service"
)

// acpTerminal runs run_command's commands in the client's terminal when
// it advertises clientCapabilities.terminal: terminal/create (sh -c the
// line, in its folder, the provider's key variables set empty), the
// tool_call carrying {type: "terminal", terminalId} so the client shows it
// live, terminal/wait_for_exit raced against the timeout and the turn's
// cancellation (terminal/kill when either comes first),
// terminal/output for what the model is told, and always
// terminal/release.
type acpTerminal struct{ a *Agent }

// terminalCalls remembers which tool calls ran in a client terminal, so
// their last update keeps showing the terminal, not a text copy of it.
type terminalCalls struct {
	mu  sync.Mutex
	ids map[string]string // tool call id → terminal id
}

func (t *terminalCalls) set(call, term string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ids == nil {
		t.ids = map[string]string{}
	}
	t.ids[call] = term
}

// take returns and forgets the terminal of a call ("" when none).
func (t *terminalCalls) take(call string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	term := t.ids[call]
	delete(t.ids, call)
	return term
}

// terminalGrace bounds the requests made after the turn was cancelled or
// the command timed out (kill, output, release).
const terminalGrace = 5 * time.Second

func (t acpTerminal) RunInTerminal(ctx context.Context, sessionID, callID string, tc service.TerminalCommand) (service.ShellResult, bool) {
	a := t.a
	a.mu.Lock()
	has := a.caps.Terminal
	a.mu.Unlock()
	if !has {
		return service.ShellResult{}, false
	}
	res := service.ShellResult{Line: tc.Line, Timeout: tc.Timeout}
	env := make([]sdk.EnvVariable, 0, len(tc.Blank))
	for _, name := range tc.Blank {
		env = append(env, sdk.EnvVariable{Name: name, Value: ""})
	}
	dir, limit := tc.Dir, service.MaxCommandOutput
	created, err := a.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: sdk.SessionId(sessionID),
		Command: "sh", Args: []string{"-c", tc.Line}, Cwd: &dir, Env: env, OutputByteLimit: &limit})
	if err != nil {
		res.Err = fmt.Errorf("the client's terminal did not start the command: %v", err)
		return res, true
	}
	id := created.TerminalId
	after := context.WithoutCancel(ctx)
	defer func() {
		rctx, cancel := context.WithTimeout(after, terminalGrace)
		defer cancel()
		if _, err := a.conn.ReleaseTerminal(rctx, sdk.ReleaseTerminalRequest{SessionId: sdk.SessionId(sessionID), TerminalId: id}); err != nil {
			a.log.Info("terminal/release failed", "terminal", id, "err", err)
		}
	}()
	a.terminals.set(callID, id)
	a.shownCalls.Wait(ctx, sessionID, callID)
	a.send(ctx, sessionID, sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)})))

	wctx, cancel := context.WithTimeout(ctx, tc.Timeout)
	defer cancel()
	exit, err := a.conn.WaitForTerminalExit(wctx, sdk.WaitForTerminalExitRequest{SessionId: sdk.SessionId(sessionID), TerminalId: id})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			res.Cancelled = true
		case errors.Is(wctx.Err(), context.DeadlineExceeded):
			res.TimedOut = true
		default:
			res.Err = fmt.Errorf("the client's terminal did not say how the command ended: %v", err)
			return res, true
		}
		kctx, kcancel := context.WithTimeout(after, terminalGrace)
		defer kcancel()
		if _, err := a.conn.KillTerminal(kctx, sdk.KillTerminalRequest{SessionId: sdk.SessionId(sessionID), TerminalId: id}); err != nil {
			a.log.Info("terminal/kill failed", "terminal", id, "err", err)
		}
	}
	octx, ocancel := context.WithTimeout(after, terminalGrace)
	defer ocancel()
	out, err := a.conn.TerminalOutput(octx, sdk.TerminalOutputRequest{SessionId: sdk.SessionId(sessionID), TerminalId: id})
	if err != nil {
		a.log.Info("terminal/output failed", "terminal", id, "err", err)
	}
	res.Output, res.HeadCut = []byte(out.Output), out.Truncated
	status := &service.TerminalExit{}
	if exit.ExitCode != nil || exit.Signal != nil {
		status.Code, status.Signal = exit.ExitCode, exit.Signal
	} else if out.ExitStatus != nil {
		status.Code, status.Signal = out.ExitStatus.ExitCode, out.ExitStatus.Signal
	}
	status.Into(&res)
	return res, true
}
