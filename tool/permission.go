package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Decision is the user's answer to a permission request.
type Decision int

const (
	RejectOnce Decision = iota
	AllowOnce
	AllowAlways  // this tool in this session, from now on
	RejectAlways // this tool in this session, from now on
)

// PermissionRequest asks the user whether the model may call a tool.
type PermissionRequest struct {
	SessionID string
	// Call says what would run (Server, Tool, Arguments) and what its
	// server says of the tool (Title, ReadOnly, Destructive).
	Call chat.ToolCall
	// Trust, when set, asks instead whether to trust a workspace's
	// .mcp.json (allow: trust; reject: do not); no Call then.
	Trust *TrustRequest
	// Command, when set, is the exact command line run_command would run,
	// in Dir, killed after Timeout ("always" is this command line's).
	Command *CommandRequest
}

// CommandRequest is what a run_command question names.
type CommandRequest struct {
	Line    string
	Dir     string
	Timeout time.Duration
}

// Asker asks the user (the door's way: ACP's session/request_permission,
// LSP's window/showMessageRequest, the CLI's prompt). An error, or a
// cancelled ctx, means the call does not run; ErrNotAnswered (wrapped) says
// the user did not answer in time, which the model is told as such, never
// as a rejection.
type Asker func(ctx context.Context, r PermissionRequest) (Decision, error)

// ErrNotAnswered is a door's error (wrapped) for a question the user did
// not answer in time (toolPermissionTimeoutSeconds): the call does not run,
// and the model is told the question was not answered, not that it was
// rejected.
var ErrNotAnswered = errors.New("the user did not answer in time")

// unanswered is what the model is told of a call that did not run because
// its question (what: "the permission question", "the review of this
// edit") got no answer: the turn was cancelled, the user did not answer in
// time, or the question could not be asked (err). "" when the user did
// answer (err nil).
func unanswered(ctx context.Context, err error, what, outcome string) string {
	switch {
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return fmt.Sprintf("The turn was cancelled before the user answered %s; %s.", what, outcome)
	case errors.Is(err, ErrNotAnswered):
		return fmt.Sprintf("The user did not answer %s in time; %s. You may ask the user.", what, outcome)
	}
	return fmt.Sprintf("%s could not be asked (%v); %s.", capitalize(what), err, outcome)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// permitted decides whether a call may run: the session's standing
// decision, the read-only setting, else the user's answer. why is what the
// model is told when it may not.
func (t *TurnTools) permitted(ctx context.Context, sessionID string, call chat.ToolCall, bt boundTool) (bool, string) {
	declined := fmt.Sprintf("The user declined this call of %s · %s; it did not run. Do not call it again unless the user asks.", call.Server, call.Tool)
	// A standing decision is kept under the name the model called and the
	// server's and tool's identity: another server's tool given the same
	// name, or this server run otherwise, is asked about again (and a
	// decision kept under the name alone, as before, no longer matches).
	key := call.Name + "@" + bt.identity()
	return t.decide(ctx, PermissionRequest{SessionID: sessionID, Call: call}, key, bt.tool.ReadOnly, declined)
}

// permittedCommand decides whether run_command may run a command line:
// the session's standing decision for this exact line, else the user's
// answer.
func (t *TurnTools) permittedCommand(ctx context.Context, sessionID string, call chat.ToolCall, line, dir string, timeout time.Duration) (bool, string) {
	declined := "The user declined to run this command; it did not run. Do not run it again unless the user asks."
	r := PermissionRequest{SessionID: sessionID, Call: call, Command: &CommandRequest{Line: line, Dir: dir, Timeout: timeout}}
	return t.decide(ctx, r, CommandKey(line), false, declined)
}

// decide is the permission flow every call that asks shares: the
// session's standing decision under key, the read-only setting (for a
// readOnly tool), else the door's Asker; "always" answers are stored under
// key.
func (t *TurnTools) decide(ctx context.Context, r PermissionRequest, key string, readOnlyTool bool, declined string) (bool, string) {
	s := t.box
	call, sessionID := r.Call, r.SessionID
	if s.cfg.Store == nil {
		// A dry run's box: nothing stored to look up or keep.
	} else if sess, err := s.cfg.Store.Get(ctx, sessionID); err == nil {
		switch sess.Meta.Tools[key] {
		case session.ToolAllow:
			return true, ""
		case session.ToolDeny:
			return false, declined
		}
	}
	s.mu.Lock()
	ask, readOnly := s.asker, s.allowReadOnly
	s.mu.Unlock()
	if readOnly && readOnlyTool {
		return true, ""
	}
	if ask == nil {
		what := call.Server + " · " + call.Tool
		if call.Server == "" {
			what = call.Tool
		}
		return false, fmt.Sprintf("The call of %s did not run: the user was not asked (this client cannot ask) and has not allowed it.", what)
	}
	d, err := ask(ctx, r)
	if err != nil {
		s.log.Info("permission not given", "tool", call.Name, "err", err)
		return false, unanswered(ctx, err, "the permission question", "the call did not run")
	}
	switch d {
	case AllowAlways, RejectAlways:
		if s.cfg.Store == nil {
			break
		}
		decision := session.ToolAllow
		if d == RejectAlways {
			decision = session.ToolDeny
		}
		if err := s.cfg.Store.SetToolPermission(context.WithoutCancel(ctx), sessionID, key, decision); err != nil {
			s.log.Warn("the tool decision was not stored", "tool", call.Name, "err", err)
		}
	}
	if d == AllowOnce || d == AllowAlways {
		return true, ""
	}
	return false, declined
}
