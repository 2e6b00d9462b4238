package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/mcpclient"
	"github.com/ctxls/ctxls/session"
)

// Store is what the tools read and write of the sessions.
type Store interface {
	DataDir() string
	Get(ctx context.Context, id string) (*session.Session, error)
	SetToolPermission(ctx context.Context, id, tool, decision string) error
	SetPlan(ctx context.Context, id string, items []session.PlanItem) ([]session.PlanItem, error)
	TurnState(ctx context.Context, id string, user *session.Message, mark *session.HistoryMark) (*session.TurnState, error)
	Context(ctx context.Context, sessionID string) (session.Context, error)
	UpdateContext(ctx context.Context, sessionID, setName string, items []string, mode session.Mode, by string, roots []string) (*session.ContextChange, error)
	ListFiles(ctx context.Context, sessionID, sub string) ([]string, error)
	WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*session.Written, error)
	OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *session.Written, error)
	OutputWritten(ctx context.Context, sessionID, path string, content []byte) error
}

// BoxConfig is what a connection's box is made with.
type BoxConfig struct {
	// Store is the session store (nil: a dry run's, which has none).
	Store Store
	Log   *slog.Logger
	// Getenv reads the daemon's environment (the user's MCP file's place).
	Getenv func(string) string
	// Version is ctxls's version, as told to MCP servers.
	Version string
	// Roots are the connection's workspace folders now (their .mcp.json
	// files).
	Roots func() []string
	// Notify tells the user something about their tools (a server that
	// cannot be used), as a warning.
	Notify func(message string)
	// KeyEnvs names the variables of the connection's provider's key
	// beyond the default ones (its apiKeyEnv): no MCP server's env expands
	// to them (mcpclient.Manager.KeyEnvs). Nil: none.
	KeyEnvs func() []string
}

// Box is one connection's tools: what they need of the door (set by the
// door: SetAsker, SetEditDoor, …) and of the store. It is safe for
// concurrent use; Turn makes one turn's toolbox.
type Box struct {
	cfg BoxConfig
	log *slog.Logger

	// mu guards the door's settings below; held only to read or swap
	// them, never across I/O.
	mu            sync.Mutex
	asker         Asker                      // how to ask the user; nil: nothing not allowed always runs
	allowReadOnly bool                       // MCP tools marked read-only run without asking
	editDoor      EditDoor                   // how edits are reviewed and applied; nil: no edit tools
	diagnostics   DiagnosticsDoor            // the editor's diagnostics; nil: no diagnostics tool
	terminal      TerminalDoor               // run_command in the client's terminal; nil: ctxls runs it
	workspaceMCP  bool                       // use the workspace folders' trusted .mcp.json files
	mcpServers    map[string]json.RawMessage // the connection's own MCP servers (settings), by name
	wsSettingsMCP map[string]json.RawMessage // MCP servers of the workspace's settings (used once trusted), by name
	sessionMCP    map[string]sessionServers  // MCP servers a session was opened with (ACP), by session
	notices       map[string]string          // what the user was last told about a server or tool
	manager       *mcpclient.Manager         // the running MCP servers; made on first need
}

// New makes a connection's box.
func New(cfg BoxConfig) *Box {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Roots == nil {
		cfg.Roots = func() []string { return nil }
	}
	if cfg.Notify == nil {
		cfg.Notify = func(string) {}
	}
	return &Box{cfg: cfg, log: cfg.Log}
}

// Close stops the MCP servers the box started.
func (b *Box) Close() {
	b.mu.Lock()
	m := b.manager
	b.mu.Unlock()
	if m != nil {
		m.Close()
	}
}

// SetAsker sets how the connection asks the user for permission. Without
// one, a tool call the user has not allowed always is declined.
func (b *Box) SetAsker(a Asker) {
	b.mu.Lock()
	b.asker = a
	b.mu.Unlock()
}

// SetAllowReadOnly lets the model call tools whose server says they change
// nothing (readOnlyHint) without asking (the setting allowReadOnlyTools).
func (b *Box) SetAllowReadOnly(allow bool) {
	b.mu.Lock()
	b.allowReadOnly = allow
	b.mu.Unlock()
}

// SetEditDoor sets how the connection shows and applies the model's edits;
// without one no edit tools are offered.
func (b *Box) SetEditDoor(d EditDoor) {
	b.mu.Lock()
	b.editDoor = d
	b.mu.Unlock()
}

// SetTerminalDoor has run_command's commands run in the client's own
// terminal (ACP terminal/*) when it offers one.
func (b *Box) SetTerminalDoor(d TerminalDoor) {
	b.mu.Lock()
	b.terminal = d
	b.mu.Unlock()
}

func (b *Box) terminalDoor() TerminalDoor {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.terminal
}

func (b *Box) door() EditDoor {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.editDoor
}

// TurnTools is one turn's toolbox (chat.Toolbox): the built-in tools the turn
// offers and the MCP tools bound to the names the model calls them by.
type TurnTools struct {
	box       *Box
	sessionID string // "" for a session the turn makes (it has no servers of its own)
	// ask: an undecided workspace .mcp.json is asked about (a turn's); a
	// preview asks nothing and offers what is trusted.
	ask bool

	mu        sync.Mutex
	offered   map[string]*Tool     // the built-in tools offered, by name
	bound     map[string]boundTool // the MCP tools offered, by the name the model calls
	acceptAll bool                 // the user accepted the rest of the turn's edits
	edited    []string             // the files the turn's edits changed
}

var _ chat.Toolbox = (*TurnTools)(nil)

// Turn makes a turn's toolbox for a session ("" for one the turn makes).
// With ask, a workspace .mcp.json the user has not decided about is asked
// about (a turn's); a preview asks nothing.
func (b *Box) Turn(sessionID string, ask bool) *TurnTools {
	return &TurnTools{box: b, sessionID: sessionID, ask: ask}
}

// store is the session store.
func (t *TurnTools) store() Store { return t.box.cfg.Store }

// session is the turn's session as stored now (nil when it cannot be read).
func (t *TurnTools) session(ctx context.Context) *session.Session {
	if t.sessionID == "" || t.store() == nil {
		return nil
	}
	sess, err := t.store().Get(ctx, t.sessionID)
	if err != nil {
		return nil
	}
	return sess
}

// Tools offers the built-in tools the turn offers, then the MCP servers'
// (starting those not running). In the review mode off ("chat only") only
// tools that read are offered: the built-in ReadOnly ones (and the Harmless
// ones, which change only the session's plan) and the MCP tools their
// server marks readOnlyHint.
func (t *TurnTools) Tools(ctx context.Context, tt *chat.ToolTurn) []openai.Tool {
	readOnly := ReviewMode(t.session(ctx)) == session.ReviewOff
	offered := map[string]*Tool{}
	var defs []openai.Tool
	for _, bt := range builtins {
		if (bt.Offered != nil && !bt.Offered(ctx, t)) || (readOnly && !bt.ReadOnly && !bt.Harmless) {
			continue
		}
		offered[bt.Name] = bt
		defs = append(defs, bt.def())
	}
	t.mu.Lock()
	t.offered = offered
	t.mu.Unlock()
	var ev chat.Events
	if tt != nil {
		ev = tt.Events
	}
	return append(defs, t.mcpTools(ctx, ev, MaxTools-len(defs), readOnly)...)
}

// Describe says what a name the turn offered is.
func (t *TurnTools) Describe(name string) (string, string, chat.ToolInfo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if bt, ok := t.offered[name]; ok {
		return "", name, chat.ToolInfo{ReadOnly: bt.ReadOnly, Destructive: bt.Asks, Asks: bt.Asks}, true
	}
	m, ok := t.bound[name]
	return m.server.Name, m.tool.Name, chat.ToolInfo{Title: m.tool.Title, ReadOnly: m.tool.ReadOnly, Destructive: m.tool.Destructive, Asks: ok}, ok
}

// Call runs one call: a built-in tool's, or an MCP tool's once the user
// allowed it.
func (t *TurnTools) Call(ctx context.Context, tt *chat.ToolTurn, call chat.ToolCall) chat.ToolResult {
	t.mu.Lock()
	bt := t.offered[call.Name]
	t.mu.Unlock()
	if bt == nil {
		out, failed, declined := t.callMCP(ctx, tt, call)
		return chat.ToolResult{Output: out, Failed: failed, Declined: declined}
	}
	if ctx.Err() != nil {
		return chat.ToolResult{Output: "error: the turn was cancelled before this call ran", Failed: true}
	}
	c := &Call{TurnTools: t, TT: tt, Call: call}
	out, err := bt.run(ctx, c, call.Arguments)
	switch e := err.(type) {
	case nil:
		return chat.ToolResult{Output: out, Summary: c.summary}
	case Declined:
		return chat.ToolResult{Output: string(e), Declined: true}
	case Refused:
		return chat.ToolResult{Output: string(e), Failed: true}
	}
	return chat.ToolResult{Output: "error: " + err.Error(), Failed: true}
}

// Stored is what is stored of a call's arguments.
func (t *TurnTools) Stored(name, args string) string {
	if bt := builtin(name); bt != nil && bt.stored != nil {
		return bt.stored(args)
	}
	return args
}

// Edited are the files the turn's edits changed.
func (t *TurnTools) Edited() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.edited)
}

func (t *TurnTools) acceptsAll() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acceptAll
}

func (t *TurnTools) setAcceptAll() {
	t.mu.Lock()
	t.acceptAll = true
	t.mu.Unlock()
}

// changed records a file an edit changed.
func (t *TurnTools) changed(path string) {
	t.mu.Lock()
	if !slices.Contains(t.edited, path) {
		t.edited = append(t.edited, path)
	}
	t.mu.Unlock()
}

// notice tells the user about a server or tool once, until what there is
// to say changes ("" forgets what was said, so a server failing again is
// reported again). It reports whether it told.
func (b *Box) notice(key, message string) bool {
	b.mu.Lock()
	if b.notices == nil {
		b.notices = map[string]string{}
	}
	same := b.notices[key] == message
	b.notices[key] = message
	b.mu.Unlock()
	if message != "" && !same {
		b.cfg.Notify(message)
		return true
	}
	return false
}

// progressText is an MCP progress notification in one line.
func progressText(p mcpclient.Progress) string {
	var s strings.Builder
	s.WriteString(p.Message)
	if p.Total > 0 {
		if s.Len() > 0 {
			s.WriteString(" ")
		}
		fmt.Fprintf(&s, "(%g/%g)", p.Progress, p.Total)
	} else if s.Len() == 0 {
		fmt.Fprintf(&s, "%g", p.Progress)
	}
	return s.String()
}
