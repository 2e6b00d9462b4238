package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/service"
)

// initializeParams is the part of InitializeParams ctxls reads. It is decoded
// leniently: clients send many shapes of the rest.
type initializeParams struct {
	RootURI          string            `json:"rootUri"`
	RootPath         string            `json:"rootPath"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders"`
	Capabilities     struct {
		General struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges    bool     `json:"documentChanges"`
				ResourceOperations []string `json:"resourceOperations"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
	} `json:"capabilities"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	ClientInfo            struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// initialize answers without waiting for the store: openService starts
// opening it on a goroutine of its own (service.Start), and the first
// command that needs it waits for the rest of the open. Requests and
// notifications that come after initialize wait until initDone is closed:
// when initialize returns, or, when initializationOptions.session names a
// session to resume, once the store has said whether that session exists.
func (s *Server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	ready := func() { s.initOnce.Do(func() { close(s.initDone) }) }
	resuming := false
	defer func() {
		if !resuming {
			ready()
		}
	}()
	var p initializeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, api.Errorf(api.KindInvalidArgument, "initialize: %s", argError(err))
	}
	o, err := parseInitOptions(p.InitializationOptions)
	if err != nil {
		return nil, err
	}
	enc := buffer.UTF16
	for _, e := range p.Capabilities.General.PositionEncodings {
		if e == string(protocol.PositionEncodingKindUTF8) {
			enc = buffer.UTF8
		}
	}
	svc, err := s.openService(ctx, p, o)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.enc = enc
	s.svc = svc
	s.clientWorkDone = p.Capabilities.Window.WorkDoneProgress
	s.edits = editCaps{
		apply:    p.Capabilities.Workspace.ApplyEdit,
		versions: p.Capabilities.Workspace.WorkspaceEdit.DocumentChanges,
		create:   slices.Contains(p.Capabilities.Workspace.WorkspaceEdit.ResourceOperations, "create"),
		remove:   slices.Contains(p.Capabilities.Workspace.WorkspaceEdit.ResourceOperations, "delete"),
		review:   o.ReviewEdits,
	}
	s.diagnostics = o.Diagnostics
	s.asksInChat = o.Questions
	s.mu.Unlock()
	if p.Capabilities.Workspace.ApplyEdit {
		// Edits are offered only to an editor that can apply them.
		svc.Tools().SetEditDoor(lspEdits{s})
	}
	if o.Diagnostics {
		// The diagnostics tool only for a client that answers ctxls/diagnostics.
		svc.Tools().SetDiagnosticsDoor(lspDiagnostics{s})
	}
	s.view.setIdle(o.viewIdle)
	s.startWatch(svc)
	if o.Session != "" {
		resuming = true
		go func() {
			defer ready()
			s.resumeAtStart(context.WithoutCancel(ctx), svc, o.Session)
		}()
	}
	s.log.Info("initialized", "encoding", enc, "dataDir", svc.DataDir(), "roots", len(svc.Roots()))
	return initializeResult(enc, s.cfg.Version)
}

// resumeAtStart makes initializationOptions.session the current session if
// it exists; "initialized" then resumes it (onInitialized).
func (s *Server) resumeAtStart(ctx context.Context, svc *service.Service, id string) {
	if _, err := svc.Session(ctx, id); err != nil {
		s.log.Warn("initializationOptions.session not resumed", "session", id, "err", err)
		return
	}
	svc.SetCurrent(id, true)
	s.mu.Lock()
	s.resumeAtInit = id
	s.mu.Unlock()
}

// initOptions are the initializationOptions, checked.
type initOptions struct {
	api.InitializationOptions
	provider  api.Provider
	viewIdle  time.Duration
	compactAt int
}

// parseInitOptions decodes and checks initializationOptions (absent or
// null: none).
func parseInitOptions(raw json.RawMessage) (*initOptions, error) {
	o := &initOptions{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &o.InitializationOptions); err != nil {
			return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions: %s", argError(err))
		}
	}
	var err error
	if o.viewIdle, err = parseViewIdle(o.ViewIdleMs); err != nil {
		return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions.%s", err)
	}
	if o.compactAt, err = api.ParseCompactAt(o.CompactAt); err != nil {
		return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions.%s", err)
	}
	if o.provider, err = api.ParseProvider(o.Provider); err != nil {
		return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions.%s", err)
	}
	if o.StorageSoftLimitMB < 0 {
		return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions.storageSoftLimitMB is %d; want a whole number of MiB, at least 1 (or 0 for the default)", o.StorageSoftLimitMB)
	}
	return o, nil
}

// openService makes the connection's service, its store (the command line's
// data directory unless the options name another) opening in the
// background, with what the editor said: folders, client, settings.
func (s *Server) openService(ctx context.Context, p initializeParams, o *initOptions) (*service.Service, error) {
	dataDir := s.cfg.DataDir
	if o.DataDir != "" {
		dataDir = o.DataDir
	}
	svc, err := service.Start(ctx, service.Config{
		DataDir: dataDir, Store: s.cfg.Store, Log: s.log, Docs: s.docs,
		Provider: s.cfg.Provider.Merge(o.provider), StorageSoftLimitMB: s.cfg.StorageSoftLimitMB, Version: s.cfg.Version,
		Opened:        s.cfg.Opened,
		ProviderWhere: "Set the variables in the environment your editor starts ctxls in, or the server and model in the editor's ctxls.provider settings (baseURL, model; api: anthropic for Anthropic).",
	})
	if err != nil {
		return nil, err
	}
	svc.SetRoots(rootsOf(p))
	svc.SetClient(clientInfoText(p.ClientInfo.Name, p.ClientInfo.Version), o.EnvHint)
	svc.SetCompactAt(o.compactAt)
	if o.ProjectInstructions != nil {
		svc.SetProjectInstructions(*o.ProjectInstructions)
	}
	svc.SetStorageLimitMB(o.StorageSoftLimitMB)
	if err := svc.SetMCPServers(o.McpServers); err != nil {
		svc.Close()
		return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions.%s", err)
	}
	if err := svc.SetWorkspaceMCPServers(o.WorkspaceMcpServers); err != nil {
		svc.Close()
		return nil, api.Errorf(api.KindInvalidArgument, "initializationOptions.%s", err)
	}
	svc.Subscribe(s.onEvent)
	svc.Tools().SetAsker(s.askPermission)
	svc.Tools().SetWorkspaceMCP(true)
	s.setToolOptions(svc, &o.AllowReadOnlyTools, &o.ToolPermissionTimeoutSeconds)
	return svc, nil
}

// initializeResult is initialize's answer: the negotiated encoding,
// incremental sync, the commands.
func initializeResult(enc buffer.Encoding, version string) (any, error) {
	yes, no := true, false
	incremental := protocol.TextDocumentSyncKindIncremental
	result := protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKind(enc.String()),
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &yes,
				Change:    &incremental,
				Save:      &protocol.SaveOptions{IncludeText: &no},
			},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: api.IDs()},
		},
		ServerInfo: protocol.ServerInfo{Name: "ctxls", Version: protocol.NewOptional(version)},
	}
	b, err := protocol.Marshal(result)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// rootsOf returns the workspace folders as absolute paths, most specific
// source first: workspaceFolders, then rootUri, then rootPath.
func rootsOf(p initializeParams) []string {
	var roots []string
	for _, f := range p.WorkspaceFolders {
		if path, ok := uriPath(f.URI); ok {
			roots = append(roots, path)
		}
	}
	if len(roots) == 0 {
		if path, ok := uriPath(p.RootURI); ok {
			roots = append(roots, path)
		} else if p.RootPath != "" && filepath.IsAbs(p.RootPath) {
			roots = append(roots, filepath.Clean(p.RootPath))
		}
	}
	return roots
}

// uriPath turns a file:// URI into a path.
func uriPath(u string) (string, bool) { return service.PathFromURI(u) }

func (s *Server) onInitialized(ctx context.Context) {
	s.mu.Lock()
	id := s.resumeAtInit
	s.resumeAtInit = ""
	svc := s.svc
	s.mu.Unlock()
	if id == "" || svc == nil {
		return
	}
	svc.ResumeAtStart(ctx, id)
}

func (s *Server) shutdown(context.Context) (any, error) {
	s.mu.Lock()
	s.state = shutDown
	s.mu.Unlock()
	s.view.stop()
	s.stopWatch()
	s.log.Info("shutdown")
	return json.RawMessage("null"), nil
}

func (s *Server) didChangeWorkspaceFolders(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		Event struct {
			Added   []workspaceFolder `json:"added"`
			Removed []workspaceFolder `json:"removed"`
		} `json:"event"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	var added, removed []string
	roots := []string{}
outer:
	for _, r := range svc.Roots() {
		for _, f := range p.Event.Removed {
			if path, ok := uriPath(f.URI); ok && path == r {
				removed = append(removed, r)
				continue outer
			}
		}
		roots = append(roots, r)
	}
	for _, f := range p.Event.Added {
		if path, ok := uriPath(f.URI); ok {
			roots = append(roots, path)
			added = append(added, path)
		}
	}
	// On the read loop, bounded, so a turn sent after the change is read
	// after its message is stored and includes it.
	ctx, cancel := context.WithTimeout(ctx, workspaceChangeTimeout)
	defer cancel()
	svc.WorkspaceChanged(ctx, roots, added, removed)
	return nil
}

// workspaceChangeTimeout bounds the store writes of a workspace folder
// change, which run on the read loop (see didChangeWorkspaceFolders).
const workspaceChangeTimeout = 10 * time.Second

// service returns the connection's service; requests are admitted only
// after initialize, but initialize may have failed to open the store.
func (s *Server) service() (*service.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svc == nil {
		return nil, api.Errorf(api.KindStoreUnavailable, "the session store is not open: initialize did not complete")
	}
	return s.svc, nil
}

// clientInfoText is "<name> <version>" of initialize's clientInfo.
func clientInfoText(name, version string) string {
	return strings.TrimSpace(strings.TrimSpace(name) + " " + strings.TrimSpace(version))
}
