package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/session"
)

// Lengths of a tool call's text on the wire (ctxls/toolCall) and in a
// permission question.
const (
	maxWireArguments = 2000
	maxWireOutput    = 8000
)

// AskArguments is how many characters of a call's arguments a short
// permission question shows (the CLI's) before it says how many more there
// are.
const AskArguments = 1000

// ToolCallUpdate is a turn's tool event as ctxls/toolCall's params; ok is
// false for other events.
func ToolCallUpdate(sessionID string, ev chat.Event) (p api.ToolCallParams, ok bool) {
	var c chat.ToolCall
	switch ev := ev.(type) {
	case chat.ToolStarted:
		c, p.Status = ev.Call, api.ToolRunning
		if ev.Pending {
			p.Status = api.ToolPending
		}
	case chat.ToolAllowed:
		c, p.Status = ev.Call, api.ToolRunning
	case chat.ToolProgress:
		c, p.Status, p.Progress = ev.Call, api.ToolRunning, ev.Message
	case chat.ToolFinished:
		c, p.Status, p.Output, p.Summary = ev.Call, EndStatus(ev), session.Truncate(ev.Output, maxWireOutput), ev.Summary
	default:
		return p, false
	}
	p.SessionID, p.ID, p.Name, p.Server, p.Tool = sessionID, c.ID, c.Name, c.Server, cmp.Or(c.Tool, c.Name)
	p.Arguments = session.Truncate(c.Arguments, maxWireArguments)
	return p, true
}

// EndStatus is how a call ended: cancelled (its turn was cancelled while
// it waited or ran), declined, failed or done.
func EndStatus(ev chat.ToolFinished) api.ToolStatus {
	switch {
	case ev.Cancelled:
		return api.ToolCancelled
	case ev.Declined:
		return api.ToolDeclined
	case ev.Failed:
		return api.ToolFailed
	}
	return api.ToolDone
}

// ToolCallLine is a tool event in one line, for clients that show only a
// line ($/progress messages, the CLI's stderr).
func ToolCallLine(p api.ToolCallParams) string {
	what := p.Tool
	if p.Server != "" {
		what = p.Server + " · " + p.Tool
	}
	switch p.Status {
	case api.ToolPending:
		return what + ": waiting for your permission"
	case api.ToolRunning:
		if line := lastLine(p.Progress); line != "" {
			return what + ": " + line
		}
		return "calling " + what
	case api.ToolFailed:
		return what + " failed: " + session.Truncate(strings.TrimPrefix(p.Output, "error: "), 200)
	case api.ToolDeclined:
		return what + ": declined"
	case api.ToolCancelled:
		return what + ": cancelled"
	}
	return what + ": done"
}

// lastLine is the last line of a progress message that is not blank, at
// most 200 characters (run_command's progress is the output so far).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, " \t\r\n"), "\n")
	return session.Truncate(strings.TrimSpace(lines[len(lines)-1]), 200)
}

// PermissionQuestion is the question a door asks the user, in one line:
// the server, the tool's exact name, what its server says of it, and its
// arguments, whole when limit is 0, else their first limit characters and
// how many more there are ("… (N more characters)"); more is that N.
// Everything that came from the server or the model is shown escaped
// (termsafe.Line): a name cannot break the line or move the cursor.
//
// A run_command question names the command line exactly (escaped the
// same way, cut the same way), its folder and its timeout.
func PermissionQuestion(r PermissionRequest, limit int) (q string, more int) {
	var b strings.Builder
	if c := r.Command; c != nil {
		line := termsafe.Line(c.Line)
		if n := utf8.RuneCountInString(line); limit > 0 && n > limit {
			more = n - limit
			line = string([]rune(line)[:limit]) + fmt.Sprintf("… (%d more characters)", more)
		}
		fmt.Fprintf(&b, "ctxls: the model wants to run the command %s in %s (killed after %s). Allow it?", line, termsafe.Line(c.Dir), c.Timeout)
		return b.String(), more
	}
	fmt.Fprintf(&b, "ctxls: the model wants to call %s · %s", termsafe.Line(r.Call.Server), termsafe.Line(r.Call.Tool))
	switch {
	case r.Call.ReadOnly:
		b.WriteString(" (read-only)")
	case r.Call.Destructive:
		b.WriteString(" (may change or delete things)")
	}
	args := QuestionArguments(r.Call.Arguments)
	if args != "" && args != "{}" {
		if n := utf8.RuneCountInString(args); limit > 0 && n > limit {
			more = n - limit
			args = string([]rune(args)[:limit]) + fmt.Sprintf("… (%d more characters)", more)
		}
		b.WriteString(" with " + args)
	}
	b.WriteString(". Allow it?")
	return b.String(), more
}

// QuestionArguments are a call's arguments as a question shows them, in
// one line: JSON's whitespace between tokens (newlines, tabs) made spaces,
// anything else escaped (termsafe.Line).
func QuestionArguments(args string) string {
	args = strings.TrimSpace(args)
	if json.Valid([]byte(args)) {
		// A valid JSON text has no control character but its whitespace
		// between tokens.
		args = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(args)
	}
	return termsafe.Line(args)
}

// ShownCalls orders a door's questions about a tool call (its permission,
// an edit's review) after the call itself: the question is asked on the
// turn's goroutine while the door's turn loop sends the call's updates, so
// the question waits (Wait) until the loop has shown the call (Shown); the
// client then sees every earlier call's end and this one pending first.
// Ended forgets a call. The zero value is ready; it is safe for concurrent
// use.
type ShownCalls struct {
	mu    sync.Mutex
	calls map[string]chan struct{} // by session and call: closed once shown
}

func (g *ShownCalls) channel(sessionID, callID string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := sessionID + "\x00" + callID
	if g.calls == nil {
		g.calls = map[string]chan struct{}{}
	}
	ch := g.calls[key]
	if ch == nil {
		ch = make(chan struct{})
		g.calls[key] = ch
	}
	return ch
}

// Shown records that the door's loop showed the call.
func (g *ShownCalls) Shown(sessionID, callID string) {
	ch := g.channel(sessionID, callID)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// Wait waits until the call was shown, or ctx ends.
func (g *ShownCalls) Wait(ctx context.Context, sessionID, callID string) {
	select {
	case <-g.channel(sessionID, callID):
	case <-ctx.Done():
	}
}

// Ended forgets a call.
func (g *ShownCalls) Ended(sessionID, callID string) {
	g.mu.Lock()
	delete(g.calls, sessionID+"\x00"+callID)
	g.mu.Unlock()
}
