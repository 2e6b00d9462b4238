package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/mcpclient"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/turn"
)

// The model's view of the user's MCP servers: each server's tools offered
// beside ctxls's own under a name of their own, mcp__SERVER__TOOL (the
// scheme Claude Code uses), each call run only with the user's permission.

// MaxTools is the most tools a turn offers (ctxls's own included): OpenAI's
// limit. Tools past it are left out, and the user told.
const MaxTools = 128

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
// cancelled ctx, counts as rejected once.
type Asker func(ctx context.Context, r PermissionRequest) (Decision, error)

// SetAsker sets how the connection asks the user for permission. Without
// one, a tool call the user has not allowed always is declined.
func (s *Service) SetAsker(a Asker) {
	s.mu.Lock()
	s.asker = a
	s.mu.Unlock()
}

// SetAllowReadOnly lets the model call tools whose server says they change
// nothing (readOnlyHint) without asking (the setting allowReadOnlyTools).
func (s *Service) SetAllowReadOnly(allow bool) {
	s.mu.Lock()
	s.allowReadOnly = allow
	s.mu.Unlock()
}

// boundTool is one server's tool as the model sees it.
type boundTool struct {
	server mcpclient.Server
	tool   mcpclient.Tool
}

// toolbox is a turn's MCP tools (chat.Toolbox).
type toolbox struct {
	s         *Service
	sessionID string // "" for a session the turn makes (it has no servers of its own)
	// ask: an undecided workspace .mcp.json is asked about (a turn's); a
	// preview asks nothing and offers what is trusted.
	ask bool
	// roots are the turn's workspace folders: where edits may go.
	roots []string

	mu        sync.Mutex
	bound     map[string]boundTool // by the name the model calls
	edits     bool                 // the edit tools are offered
	acceptAll bool                 // the user accepted the rest of the turn's edits
	edited    []string             // the files the turn's edits changed
}

func (b *toolbox) acceptsAll() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.acceptAll
}

func (b *toolbox) setAcceptAll() {
	b.mu.Lock()
	b.acceptAll = true
	b.mu.Unlock()
}

// changed records a file an edit changed.
func (b *toolbox) changed(path string) {
	b.mu.Lock()
	if !slices.Contains(b.edited, path) {
		b.edited = append(b.edited, path)
	}
	b.mu.Unlock()
}

// Edited are the files the turn's edits changed.
func (b *toolbox) Edited() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.edited)
}

func (s *Service) toolbox(sessionID string, ask bool, roots []string) *toolbox {
	return &toolbox{s: s, sessionID: sessionID, ask: ask, roots: roots}
}

// Tools starts the servers not running (at once), lists their tools and
// offers them; a server that cannot be used is reported to the user and
// left out.
func (b *toolbox) Tools(ctx context.Context, ev chat.Events) []openai.Tool {
	warn := func(key, message string) {
		if b.s.toolNotice(key, message) && ev != nil {
			ev.Emit(chat.Activity{Message: message, Warning: true})
		}
	}
	edits := b.s.editTools(ctx, b.sessionID)
	b.mu.Lock()
	b.edits = len(edits) > 0
	b.mu.Unlock()
	edits = b.s.withDiagnostics(edits) // the diagnostics tool (service/diagnostics.go)
	servers, cfgErrs := b.s.turnServers(ctx, b.sessionID, b.ask)
	for _, e := range cfgErrs {
		warn("config:"+e, "MCP configuration: "+e)
	}
	if len(servers) == 0 {
		return edits
	}
	m := b.s.mcp()
	if ev != nil && m.Running() < len(servers) {
		ev.Emit(chat.Activity{Message: "starting MCP servers"})
	}
	lists := make([][]mcpclient.Tool, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, sv := range servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, mcpclient.StartTimeout)
			defer cancel()
			lists[i], errs[i] = m.Tools(ctx, sv)
		})
	}
	wg.Wait()
	for i, sv := range servers {
		if errs[i] != nil {
			warn(sv.Name, fmt.Sprintf("MCP server %q cannot be used in this turn: %v", sv.Name, errs[i]))
			continue
		}
		b.s.toolNotice(sv.Name, "")
		lists[i] = slices.DeleteFunc(slices.Clone(lists[i]), func(t mcpclient.Tool) bool {
			_, err := schema(t.InputSchema)
			if err != nil {
				warn(sv.Name+"/"+t.Name, fmt.Sprintf("MCP server %q: tool %q is left out: %v", sv.Name, t.Name, err))
			}
			return err != nil
		})
	}
	left := fitTools(lists, MaxTools-chat.OwnTools-len(edits))
	bound := map[string]boundTool{}
	var defs []openai.Tool
	for i, sv := range servers {
		for _, t := range lists[i] {
			params, _ := schema(t.InputSchema)
			name := toolName(sv.Name, t.Name, bound)
			bound[name] = boundTool{server: sv, tool: t}
			desc := t.Description
			if desc == "" {
				desc = t.Title
			}
			defs = append(defs, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: name, Description: fmt.Sprintf("[MCP server %s] %s", sv.Name, desc), Parameters: params,
			}})
		}
	}
	if left > 0 {
		warn("", fmt.Sprintf("%d MCP tools are left out: a turn offers at most %d tools", left, MaxTools))
	}
	b.mu.Lock()
	b.bound = bound
	b.mu.Unlock()
	return append(edits, defs...)
}

// fitTools cuts the lists of tools to room in all, from the end of the
// longest list first, so a server with a hundred tools does not crowd out
// the others. It returns how many it cut.
func fitTools(lists [][]mcpclient.Tool, room int) int {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	cut := 0
	for ; total > room; total-- {
		longest := 0
		for i := range lists {
			if len(lists[i]) > len(lists[longest]) {
				longest = i
			}
		}
		lists[longest] = lists[longest][:len(lists[longest])-1]
		cut++
	}
	return cut
}

// Describe says which server's tool a name is.
func (b *toolbox) Describe(name string) (string, string, chat.ToolInfo, bool) {
	if b.s.offersDiagnostics(name) { // the diagnostics tool (service/diagnostics.go): it only reads
		return "", name, chat.ToolInfo{ReadOnly: true}, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.edits && isEditTool(name) {
		return "", name, chat.ToolInfo{Destructive: true}, true
	}
	bt, ok := b.bound[name]
	return bt.server.Name, bt.tool.Name, chat.ToolInfo{Title: bt.tool.Title, ReadOnly: bt.tool.ReadOnly, Destructive: bt.tool.Destructive}, ok
}

// Call asks for permission, then calls the tool.
func (b *toolbox) Call(ctx context.Context, sessionID string, call chat.ToolCall, ev chat.Events) (string, bool, bool) {
	b.mu.Lock()
	bt, ok := b.bound[call.Name]
	edits := b.edits
	b.mu.Unlock()
	if ctx.Err() != nil {
		return "error: the turn was cancelled before this call ran", true, false
	}
	if edits && isEditTool(call.Name) {
		return b.edit(ctx, sessionID, call, ev)
	}
	if b.s.offersDiagnostics(call.Name) { // the diagnostics tool (service/diagnostics.go)
		return b.diagnostics(ctx, call, ev)
	}
	if !ok {
		return fmt.Sprintf("error: unknown tool %q", call.Name), true, false
	}
	args := json.RawMessage(strings.TrimSpace(call.Arguments))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return fmt.Sprintf("error: the arguments are not a JSON object: %v", err), true, false
	}
	if allowed, why := b.s.permitted(ctx, sessionID, call, bt); !allowed {
		return why, false, true
	}
	ev.Emit(chat.ToolAllowed{Call: call})
	begun := time.Now()
	res, err := b.s.mcp().Call(ctx, bt.server, bt.tool.Name, args, func(p mcpclient.Progress) {
		ev.Emit(chat.ToolProgress{Call: call, Message: progressText(p)})
	})
	b.s.log.Debug("mcp tool call", "server", bt.server.Name, "tool", bt.tool.Name, "ms", time.Since(begun).Milliseconds(), "err", err)
	switch {
	case err != nil && ctx.Err() != nil:
		return "error: the call was cancelled", true, false
	case err != nil:
		return "error: " + err.Error(), true, false
	case res.IsError:
		return "error: " + mcpclient.Text(res), true, false
	}
	return mcpclient.Text(res), false, false
}

// permitted decides whether a call may run: the session's standing
// decision, the read-only setting, else the user's answer. why is what the
// model is told when it may not.
func (s *Service) permitted(ctx context.Context, sessionID string, call chat.ToolCall, bt boundTool) (bool, string) {
	declined := fmt.Sprintf("The user declined this call of %s · %s; it did not run. Do not call it again unless the user asks.", call.Server, call.Tool)
	if sess, err := s.store.Get(ctx, sessionID); err == nil {
		switch sess.Meta.Tools[call.Name] {
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
		d = RejectOnce
	}
	switch d {
	case AllowAlways, RejectAlways:
		decision := session.ToolAllow
		if d == RejectAlways {
			decision = session.ToolDeny
		}
		if err := s.store.SetToolPermission(context.WithoutCancel(ctx), sessionID, call.Name, decision); err != nil {
			s.log.Warn("the tool decision was not stored", "tool", call.Name, "err", err)
		}
	}
	if d == AllowOnce || d == AllowAlways {
		return true, ""
	}
	return false, declined
}

// toolNotice tells the user about a server or tool once, until what there
// is to say changes ("" forgets what was said, so a server failing again
// is reported again). It reports whether it told.
func (s *Service) toolNotice(key, message string) bool {
	s.mu.Lock()
	if s.toolNotices == nil {
		s.toolNotices = map[string]string{}
	}
	same := s.toolNotices[key] == message
	s.toolNotices[key] = message
	s.mu.Unlock()
	if message != "" && !same {
		s.publish(Notice{Warning: true, Message: message})
		return true
	}
	return false
}

func progressText(p mcpclient.Progress) string {
	var b strings.Builder
	b.WriteString(p.Message)
	if p.Total > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(%g/%g)", p.Progress, p.Total)
	} else if b.Len() == 0 {
		fmt.Fprintf(&b, "%g", p.Progress)
	}
	return b.String()
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

// toolName is the name the model calls a server's tool by:
// mcp__SERVER__TOOL with characters other than letters, digits, _ and -
// made _, at most 64 characters (longer names end in a hash of the whole),
// distinct from the names taken.
func toolName(server, tool string, taken map[string]boundTool) string {
	name := "mcp__" + unsafeName().ReplaceAllString(server, "_") + "__" + unsafeName().ReplaceAllString(tool, "_")
	if _, clash := taken[name]; clash || len(name) > 64 {
		h := fnv.New32a()
		h.Write([]byte(server + "\x00" + tool))
		suffix := fmt.Sprintf("_%08x", h.Sum32())
		name = name[:min(len(name), 64-len(suffix))] + suffix
	}
	return name
}

// schema is a tool's input schema as the model gets it: a JSON object
// schema of type "object" (absent type is taken as object).
func schema(in any) (json.RawMessage, error) {
	if in == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be read: %v", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("its input schema is not a JSON object")
	}
	switch t := obj["type"].(type) {
	case nil:
		obj["type"] = "object"
	case string:
		if t != "object" {
			return nil, fmt.Errorf("its input schema is of type %q; a tool's arguments are an object", t)
		}
	default:
		return nil, errors.New("its input schema's type is not a string")
	}
	if len(raw) > 64<<10 || !utf8.Valid(raw) {
		return nil, fmt.Errorf("its input schema is %d bytes; the limit is 64 KiB", len(raw))
	}
	out, _ := json.Marshal(obj)
	// A schema the provider cannot read would fail every turn: it is
	// checked as a JSON Schema first.
	var js jsonschema.Schema
	if err := json.Unmarshal(out, &js); err != nil {
		return nil, fmt.Errorf("its input schema is not a valid JSON Schema: %v", err)
	}
	if _, err := js.Resolve(nil); err != nil {
		return nil, fmt.Errorf("its input schema is not a valid JSON Schema: %v", err)
	}
	return out, nil
}

// Lengths of a tool call's text on the wire (ctxls/toolCall) and in a
// permission question.
const (
	maxWireArguments = 2000
	maxWireOutput    = 8000
	maxAskArguments  = 300
)

// ToolCallUpdate is a turn's tool event as ctxls/toolCall's params; ok is
// false for other events.
func ToolCallUpdate(sessionID string, ev turn.Event) (p api.ToolCallParams, ok bool) {
	var c chat.ToolCall
	switch ev := ev.(type) {
	case turn.ToolStarted:
		c, p.Status = ev.Call, api.ToolRunning
		if ev.Pending {
			p.Status = api.ToolPending
		}
	case turn.ToolAllowed:
		c, p.Status = ev.Call, api.ToolRunning
	case turn.ToolProgress:
		c, p.Status, p.Progress = ev.Call, api.ToolRunning, ev.Message
	case turn.ToolFinished:
		c, p.Status, p.Output = ev.Call, api.ToolDone, session.Truncate(ev.Output, maxWireOutput)
		switch {
		case ev.Declined:
			p.Status = api.ToolDeclined
		case ev.Failed:
			p.Status = api.ToolFailed
		}
	default:
		return p, false
	}
	p.SessionID, p.ID, p.Name, p.Server, p.Tool = sessionID, c.ID, c.Name, c.Server, cmp.Or(c.Tool, c.Name)
	p.Arguments = session.Truncate(c.Arguments, maxWireArguments)
	return p, true
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
		if p.Progress != "" {
			return what + ": " + p.Progress
		}
		return "calling " + what
	case api.ToolFailed:
		return what + " failed: " + session.Truncate(strings.TrimPrefix(p.Output, "error: "), 200)
	case api.ToolDeclined:
		return what + ": declined"
	}
	return what + ": done"
}

// PermissionQuestion is the question a door asks the user, in one line:
// the server, the tool, what its server says of it, and its arguments
// (shortened).
func PermissionQuestion(r PermissionRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ctxls: the model wants to call %s · %s", r.Call.Server, r.Call.Tool)
	switch {
	case r.Call.ReadOnly:
		b.WriteString(" (read-only)")
	case r.Call.Destructive:
		b.WriteString(" (may change or delete things)")
	}
	args := strings.TrimSpace(r.Call.Arguments)
	if args != "" && args != "{}" {
		b.WriteString(" with " + session.Truncate(args, maxAskArguments))
	}
	b.WriteString(". Allow it?")
	return b.String()
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
