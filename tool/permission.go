package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
func (t *Turn) permitted(ctx context.Context, sessionID string, call chat.ToolCall, bt boundTool) (bool, string) {
	s := t.box
	declined := fmt.Sprintf("The user declined this call of %s · %s; it did not run. Do not call it again unless the user asks.", call.Server, call.Tool)
	// A standing decision is kept under the name the model called and the
	// server's and tool's identity: another server's tool given the same
	// name, or this server run otherwise, is asked about again (and a
	// decision kept under the name alone, as before, no longer matches).
	key := call.Name + "@" + bt.identity()
	if sess, err := s.cfg.Store.Get(ctx, sessionID); err == nil {
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
	if readOnly && bt.tool.ReadOnly {
		return true, ""
	}
	if ask == nil {
		return false, fmt.Sprintf("The call of %s · %s did not run: the user was not asked (this client cannot ask) and has not allowed it.", call.Server, call.Tool)
	}
	d, err := ask(ctx, PermissionRequest{SessionID: sessionID, Call: call})
	if err != nil {
		s.log.Info("permission not given", "tool", call.Name, "err", err)
		return false, unanswered(ctx, err, "the permission question", "the call did not run")
	}
	switch d {
	case AllowAlways, RejectAlways:
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
