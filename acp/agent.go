// Package acp is ctxls's second front door: an Agent Client Protocol (v1)
// agent over stdio for Zed, JetBrains IDEs, CodeCompanion, agent-shell and
// other ACP clients. It calls the same operations (package service) as the
// LSP door and the CLI: it only decodes ACP, adapts the service's turns and
// events to session/update notifications and maps errors (errors.go).
//
// The JSON-RPC plumbing and the protocol's types come from
// github.com/coder/acp-go-sdk (see docs/architecture.md for why); frames.go
// answers the malformed and oversized lines the SDK would drop or die on.
package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// ProtocolVersion is the ACP version the agent speaks.
const ProtocolVersion = 1

// Agent serves one ACP connection.
type Agent struct {
	cfg  service.Config
	log  *slog.Logger
	conn *sdk.AgentSideConnection
	out  *frameWriter
	svc  *service.Service

	mu   sync.Mutex
	caps sdk.ClientCapabilities
	open map[string]*openSession // sessions opened on this connection
	// shownCalls: a tool call's question waits until the prompt's loop
	// sent its tool_call.
	shownCalls service.ShownCalls
	// terminals: the tool calls whose command ran in the client's
	// terminal (terminal.go).
	terminals terminalCalls
	// models is the provider's models, for the model config option.
	models modelCache
}

// openSession is a session the client opened with session/new, load or
// resume.
type openSession struct {
	id    string
	cwd   string
	title string        // the title last sent (sendState, the service's events)
	turn  *service.Turn // the running turn, if any
	done  chan struct{} // closed when the running turn has ended
}

// Serve runs the agent on in/out until the client goes away or ctx ends,
// and returns the process exit code.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg service.Config) int {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The store opens on a goroutine of its own while the connection reads
	// and answers initialize; the first method that needs it waits for it.
	svc, err := service.Start(ctx, service.Config{DataDir: cfg.DataDir, Store: cfg.Store, Log: log, Provider: cfg.Provider, Getenv: cfg.Getenv, Version: cfg.Version, Opened: cfg.Opened,
		ProviderWhere: "Set them in the environment your editor starts the ctxls agent with (in Zed, the env of its agent_servers entry), or pass --base-url and --model in its arguments (--api anthropic for Anthropic)."})
	if err != nil {
		log.Error("cannot open the session store", "err", err)
		return 1
	}
	a := newAgent(cfg, log, svc, out)
	a.conn = sdk.NewAgentSideConnection(a, a.out, guard(in, a.out))
	a.conn.SetLogger(log)
	stopWatch := a.watch()
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	stopWatch()
	a.close()
	return 0
}

func newAgent(cfg service.Config, log *slog.Logger, svc *service.Service, out io.Writer) *Agent {
	a := &Agent{
		cfg: cfg, log: log, svc: svc,
		out:  &frameWriter{w: out},
		open: map[string]*openSession{},
	}
	svc.Subscribe(a.onEvent)
	svc.Tools().SetAsker(a.askPermission)
	svc.Tools().SetEditDoor(acpEdits{a})
	svc.Tools().SetTerminalDoor(acpTerminal{a})
	return a
}

// close cancels running turns, waits for them, and closes the store.
func (a *Agent) close() {
	a.mu.Lock()
	var running []*openSession
	for _, s := range a.open {
		if s.turn != nil {
			s.turn.Cancel()
			running = append(running, s)
		}
	}
	a.mu.Unlock()
	for _, s := range running {
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
	}
	if err := a.svc.Close(); err != nil {
		a.log.Error("closing the store", "err", err)
	}
}

// Initialize answers the capabilities. initialize's _meta may carry the
// provider settings: {"_meta": {"ctxls": {"provider": {...}}}}, the same
// object as the LSP door's initializationOptions.provider, and compactAt
// (as the LSP door's; else the environment's CTXLS_COMPACT_AT),
// allowReadOnlyTools and projectInstructions (booleans, as the LSP door's).
func (a *Agent) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	prov := a.cfg.Provider
	compactAt, err := api.ParseCompactAtText(a.getenv()("CTXLS_COMPACT_AT"))
	if err != nil {
		return sdk.InitializeResponse{}, invalid("CTXLS_COMPACT_AT: " + err.Error())
	}
	if m, ok := p.Meta["ctxls"].(map[string]any); ok {
		if m["provider"] != nil {
			raw, _ := json.Marshal(m["provider"])
			fromMeta, err := api.ParseProvider(raw)
			if err != nil {
				return sdk.InitializeResponse{}, invalid("_meta.ctxls." + err.Error())
			}
			prov = a.cfg.Provider.Merge(fromMeta)
		}
		if allow, ok := m["allowReadOnlyTools"].(bool); ok {
			a.svc.Tools().SetAllowReadOnly(allow)
		}
		if on, ok := m["projectInstructions"].(bool); ok {
			a.svc.SetProjectInstructions(on)
		}
		if m["compactAt"] != nil {
			raw, _ := json.Marshal(m["compactAt"])
			if compactAt, err = api.ParseCompactAt(raw); err != nil {
				return sdk.InitializeResponse{}, invalid("_meta.ctxls." + err.Error())
			}
		}
	}
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	a.svc.SetProvider(prov)
	a.svc.SetCompactAt(compactAt)
	if p.ClientInfo != nil {
		a.svc.SetClient(p.ClientInfo.Name+" "+p.ClientInfo.Version, "")
	}
	return sdk.InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    mcpCapabilities,
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
				Delete: &sdk.SessionDeleteCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "ctxls", Version: a.cfg.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate is not needed: the provider key comes from the environment.
func (a *Agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// Logout has nothing to forget.
func (a *Agent) Logout(context.Context, sdk.LogoutRequest) (sdk.LogoutResponse, error) {
	return sdk.LogoutResponse{}, nil
}

// SetSessionMode sets the session's review mode (the modes are how the
// model's edits are reviewed: ask, auto, off) and tells the client.
func (a *Agent) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.opened(ctx, p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	res, err := a.svc.SessionSetReviewMode(ctx, &api.SetReviewModeArgs{SessionID: s.id, Mode: api.ReviewMode(p.ModeId)})
	if err != nil {
		return sdk.SetSessionModeResponse{}, rpcError(err)
	}
	a.send(ctx, s.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{
		SessionUpdate: "current_mode_update", CurrentModeId: sdk.SessionModeId(reviewModeOf(res.Session))}})
	return sdk.SetSessionModeResponse{}, nil
}

// reviewModeOf is a session's review mode ("": ask).
func reviewModeOf(s *api.Session) api.ReviewMode {
	if s == nil || s.Meta.ReviewMode == "" {
		return api.ReviewAsk
	}
	return s.Meta.ReviewMode
}

// modes are the session's modes as ACP advertises them: how the model's
// edits to the user's files are reviewed.
func modes(s *api.Session) *sdk.SessionModeState {
	desc := func(s string) *string { return &s }
	return &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(reviewModeOf(s)), AvailableModes: []sdk.SessionMode{
		{Id: sdk.SessionModeId(api.ReviewAsk), Name: "Ask before edits", Description: desc("Each edit of your files is shown as a diff and applied only once you accept it")},
		{Id: sdk.SessionModeId(api.ReviewAuto), Name: "Edit automatically", Description: desc("Edits are applied at once; your editor's undo takes them back")},
		{Id: sdk.SessionModeId(api.ReviewOff), Name: "Chat only", Description: desc("The model is offered only tools that read: none to edit your files or run anything that changes things")},
	}}
}

// checkCwd refuses a cwd that is not an absolute path.
func checkCwd(cwd string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return invalid(fmt.Sprintf("cwd must be an absolute path, got %q", cwd))
	}
	return nil
}

// opened returns the session opened on this connection, or an error that
// says whether it exists at all.
func (a *Agent) opened(ctx context.Context, id sdk.SessionId) (*openSession, error) {
	a.mu.Lock()
	s := a.open[string(id)]
	a.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if _, err := a.svc.Session(ctx, string(id)); err != nil {
		return nil, a.unknown(err, string(id))
	}
	return nil, invalid(fmt.Sprintf("session %s is not open on this connection: open it with session/load or session/resume first", id))
}

// send sends one session/update; a failure (the client went away) is
// logged.
func (a *Agent) send(ctx context.Context, id string, u sdk.SessionUpdate) {
	if err := a.conn.SessionUpdate(context.WithoutCancel(ctx), sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u}); err != nil {
		a.log.Warn("session/update not sent", "session", id, "err", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (a *Agent) getenv() func(string) string {
	if a.cfg.Getenv != nil {
		return a.cfg.Getenv
	}
	return os.Getenv
}
