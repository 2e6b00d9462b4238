package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/mcpclient"
)

// The model's view of the user's MCP servers: each server's tools offered
// beside ctxls's own under a name of their own, mcp__SERVER__TOOL (the
// scheme Claude Code uses), each call run only with the user's permission.

// MaxTools is the most tools a turn offers (ctxls's own included): OpenAI's
// limit. Tools past it are left out, and the user told.
const MaxTools = 128

// boundTool is one server's tool as the model sees it.
type boundTool struct {
	server mcpclient.Server
	tool   mcpclient.Tool
}

// sessionServers are the MCP servers a session was opened with, and the
// errors of those it cannot use.
type sessionServers struct {
	servers []mcpclient.Server
	errs    []string
}

// Manager is the connection's MCP servers' manager, made on first need,
// offering the servers the workspace folders now as their roots.
func (b *Box) Manager() *mcpclient.Manager {
	b.mu.Lock()
	if b.manager == nil {
		b.manager = mcpclient.NewManager(b.cfg.Version, b.log)
		b.manager.KeyEnvs = b.cfg.KeyEnvs
	}
	m := b.manager
	b.mu.Unlock()
	m.SetRoots(b.cfg.Roots())
	return m
}

// RootsChanged offers the running MCP servers the workspace folders now
// as their roots (a manager not made yet offers them when it is).
func (b *Box) RootsChanged() {
	b.mu.Lock()
	m := b.manager
	b.mu.Unlock()
	if m != nil {
		m.SetRoots(b.cfg.Roots())
	}
}

// SetMCPServers sets the connection's own MCP servers: the "mcpServers"
// object of initializationOptions or settings (nil: none).
func (b *Box) SetMCPServers(servers map[string]json.RawMessage) {
	b.mu.Lock()
	b.mcpServers = servers
	b.mu.Unlock()
}

// SetSessionMCPServers sets the MCP servers a session was opened with (an
// ACP client's mcpServers, in the "mcpServers" format: an object of servers
// by name), over the connection's own for that session's turns. It
// returns an error for each server it cannot use; the others are kept.
func (b *Box) SetSessionMCPServers(sessionID string, servers map[string]json.RawMessage, source string) []error {
	list, errs := mcpclient.ParseServers(servers, source)
	b.mu.Lock()
	if b.sessionMCP == nil {
		b.sessionMCP = map[string]sessionServers{}
	}
	b.sessionMCP[sessionID] = sessionServers{list, messages(errs)}
	b.mu.Unlock()
	return errs
}

// turnServers are the MCP servers of a session's turn: the connection's,
// then the session's own over them; with the configuration's errors.
func (b *Box) turnServers(ctx context.Context, sessionID string, ask bool) ([]mcpclient.Server, []string) {
	servers, errs, _ := b.Servers(ctx, ask)
	b.mu.Lock()
	own := b.sessionMCP[sessionID]
	b.mu.Unlock()
	if len(own.servers) > 0 {
		servers, _ = mcpclient.Merge(servers, own.servers)
	}
	return servers, append(errs, own.errs...)
}

// Servers is the connection's MCP configuration: the user's file, the
// workspace's trusted .mcp.json files, then the connection's own servers
// over them; with the errors of the servers it cannot use and a note for
// each server named twice. With ask, a workspace's .mcp.json the user has
// not decided about is asked about first (a turn's need); else it is left
// out (a listing).
func (b *Box) Servers(ctx context.Context, ask bool) (servers []mcpclient.Server, errs, notes []string) {
	var fromFile []mcpclient.Server
	if path := mcpclient.UserConfig(b.cfg.Getenv); path != "" {
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, path+": "+err.Error())
		default:
			var perrs []error
			fromFile, perrs = mcpclient.Parse(data, path)
			errs = append(errs, messages(perrs)...)
		}
	}
	b.mu.Lock()
	own := b.mcpServers
	b.mu.Unlock()
	fromWorkspace, werrs := b.workspaceServers(ctx, ask)
	errs = append(errs, werrs...)
	fromSettings, perrs := mcpclient.ParseServers(own, "settings")
	errs = append(errs, messages(perrs)...)
	servers, notes = mcpclient.Merge(fromFile, fromWorkspace, fromSettings)
	return servers, errs, notes
}

func messages(errs []error) []string {
	out := make([]string, len(errs))
	for i, err := range errs {
		out[i] = err.Error()
	}
	return out
}

// mcpTools starts the servers not running (at once), lists their tools and
// binds them, at most room (readOnly: only those marked readOnlyHint); a
// server that cannot be used is reported to the user and left out.
func (t *TurnTools) mcpTools(ctx context.Context, ev chat.Events, room int, readOnly bool) []openai.Tool {
	b := t.box
	warn := func(key, message string) {
		if b.notice(key, message) && ev != nil {
			ev.Emit(chat.Activity{Message: message, Warning: true})
		}
	}
	servers, cfgErrs := b.turnServers(ctx, t.sessionID, t.ask)
	for _, e := range cfgErrs {
		warn("config:"+e, "MCP configuration: "+e)
	}
	if len(servers) == 0 {
		return nil
	}
	if len(servers) > mcpclient.MaxServers {
		// One warning for the lot, and no start or wait for them.
		warn("too many servers", fmt.Sprintf("%d MCP servers are configured; a turn uses at most %d: the ones from %q on are left out",
			len(servers), mcpclient.MaxServers, servers[mcpclient.MaxServers].Name))
		servers = servers[:mcpclient.MaxServers]
	}
	m := b.Manager()
	if ev != nil && m.Running() < len(servers) {
		ev.Emit(chat.Activity{Message: "starting MCP servers"})
	}
	lists := make([][]mcpclient.Tool, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, sv := range servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, mcpclient.StartTimeout+mcpclient.ListTimeout)
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
		b.notice(sv.Name, "")
		if left := m.LeftOut(sv); left.Count > 0 {
			warn(sv.Name+"/left out", leftOutText(sv.Name, left))
		}
		lists[i] = slices.DeleteFunc(slices.Clone(lists[i]), func(tl mcpclient.Tool) bool {
			if readOnly && !tl.ReadOnly {
				return true // the review mode off: only tools that read
			}
			_, err := schema(tl.InputSchema)
			if err != nil {
				warn(sv.Name+"/"+tl.Name, fmt.Sprintf("MCP server %q: tool %q is left out: %v", sv.Name, tl.Name, err))
			}
			return err != nil
		})
	}
	for i, sv := range servers {
		lists[i] = uniqueTools(sv.Name, lists[i], warn)
	}
	left := fitTools(lists, room)
	bound, defs := bindTools(servers, lists)
	if left > 0 {
		warn("", fmt.Sprintf("%d MCP tools are left out: a turn offers at most %d tools", left, MaxTools))
	}
	t.mu.Lock()
	t.bound = bound
	t.mu.Unlock()
	return defs
}

// leftOutText tells the user what a server's listing of tools left out:
// how many, and why the first was (ctxls mcp list shows the others).
func leftOutText(server string, left mcpclient.LeftOut) string {
	why := ""
	if len(left.Reasons) > 0 {
		why = ": " + left.Reasons[0]
		if left.Count > 1 {
			why += "; …"
		}
	}
	n := "1 of the tools it lists is"
	if left.Count > 1 {
		n = fmt.Sprintf("%d of the tools it lists are", left.Count)
	}
	return fmt.Sprintf("MCP server %q: %s left out, malformed%s", server, n, why)
}

// MaxDescription is the longest tool description the model is offered,
// in characters: a longer one is cut, with a note (a server's 2 MB
// description would fill the context window, every turn).
const MaxDescription = 2000

// uniqueTools is a server's list with each tool name once: the first of
// a name listed again is kept, and the user told once (a provider refuses
// a request naming a tool twice).
func uniqueTools(server string, list []mcpclient.Tool, warn func(key, message string)) []mcpclient.Tool {
	seen := map[string]int{}
	out := make([]mcpclient.Tool, 0, len(list))
	for _, tl := range list {
		if seen[tl.Name]++; seen[tl.Name] == 1 {
			out = append(out, tl)
		}
	}
	for _, tl := range out {
		if n := seen[tl.Name]; n > 1 {
			warn(server+"/"+tl.Name+"/listed", fmt.Sprintf("MCP server %q lists the tool %q %d times; the first is used", server, tl.Name, n))
		}
	}
	return out
}

// bindTools names the servers' tools as the model calls them, each name
// another tool's never, and makes their definitions: the description (or
// the title) after the server's name, cut at MaxDescription characters.
func bindTools(servers []mcpclient.Server, lists [][]mcpclient.Tool) (map[string]boundTool, []openai.Tool) {
	bound := map[string]boundTool{}
	var defs []openai.Tool
	for i, sv := range servers {
		for _, tl := range lists[i] {
			params, _ := schema(tl.InputSchema)
			name := toolName(sv.Name, tl.Name, bound)
			bound[name] = boundTool{server: sv, tool: tl}
			desc := tl.Description
			if desc == "" {
				desc = tl.Title
			}
			if n := utf8.RuneCountInString(desc); n > MaxDescription {
				desc = string([]rune(desc)[:MaxDescription]) + fmt.Sprintf("… (the description is cut here: %d more characters)", n-MaxDescription)
			}
			defs = append(defs, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: name, Description: fmt.Sprintf("[MCP server %s] %s", sv.Name, desc), Parameters: params,
			}})
		}
	}
	return bound, defs
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
	for ; total > max(room, 0); total-- {
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

// callMCP asks for permission, then calls an MCP tool.
func (t *TurnTools) callMCP(ctx context.Context, tt *chat.ToolTurn, call chat.ToolCall) (string, bool, bool) {
	ev := tt.Events
	b := t.box
	t.mu.Lock()
	bt, ok := t.bound[call.Name]
	t.mu.Unlock()
	if ctx.Err() != nil {
		return "error: the turn was cancelled before this call ran", true, false
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
	if allowed, why := t.permitted(ctx, tt.SessionID, call, bt); !allowed {
		return why, false, true
	}
	ev.Emit(chat.ToolAllowed{Call: call})
	begun := time.Now()
	res, err := b.Manager().Call(ctx, bt.server, bt.tool.Name, args, func(p mcpclient.Progress) {
		ev.Emit(chat.ToolProgress{Call: call, Message: progressText(p)})
	})
	b.log.Debug("mcp tool call", "server", bt.server.Name, "tool", bt.tool.Name, "ms", time.Since(begun).Milliseconds(), "err", err)
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

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

// NamePart is a server's or tool's name as a part of the name the model
// calls: characters other than letters, digits, _ and - made _.
func NamePart(s string) string { return unsafeName().ReplaceAllString(s, "_") }

// toolName is the name the model calls a server's tool by:
// mcp__SERVER__TOOL (parts made by NamePart), at most 64 characters,
// distinct from the names taken: a longer name, or one another server's
// tool took first (my.server's and my_server's are both mcp__my_server__…),
// ends in a hash of the server's and the tool's exact names, tried again
// with a counter until it is free. A name is never another tool's.
func toolName(server, tool string, taken map[string]boundTool) string {
	name := "mcp__" + NamePart(server) + "__" + NamePart(tool)
	if _, clash := taken[name]; !clash && len(name) <= 64 {
		return name
	}
	base := name
	for i := 0; ; i++ {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s\x00%s\x00%d", server, tool, i)
		suffix := fmt.Sprintf("_%08x", h.Sum32())
		name = base[:min(len(base), 64-len(suffix))] + suffix
		if _, clash := taken[name]; !clash {
			return name
		}
	}
}

// identity is what "always" remembers of a server's tool: the server as it
// runs (its type, command, arguments, environment and URL, and its
// headers' names: their values are credentials, which may be renewed
// without the server changing) and the tool's exact name. A server
// renamed, or run otherwise, is another server: its tools are asked about
// again.
func (bt boundTool) identity() string {
	sv := bt.server
	headers := slices.Sorted(maps.Keys(sv.Headers))
	b, _ := json.Marshal([]any{sv.Name, sv.Type, sv.Command, sv.Args, sv.Env, sv.URL, headers, bt.tool.Name})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
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
