package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/lsp/command"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
	"github.com/ctxls/ctxls/turn"
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

// InitOptions are the initializationOptions ctxls understands.
type InitOptions struct {
	// DataDir overrides the data directory for this connection.
	DataDir string `json:"dataDir,omitempty"`
	// Session is the id of a session to resume at start.
	Session string `json:"session,omitempty"`
	// Provider configures the model (chat turns).
	Provider json.RawMessage `json:"provider,omitempty"`
	// StorageSoftLimitMB is the data directory's soft limit in MiB (0: the
	// command line's, else the default).
	StorageSoftLimitMB int `json:"storageSoftLimitMB,omitempty"`
	// EnvHint replaces the envHint ctxls records for the sessions this
	// connection uses.
	EnvHint string `json:"envHint,omitempty"`
	// ViewIdleMs is how long the view must rest before it is captured.
	ViewIdleMs json.RawMessage `json:"viewIdleMs,omitempty"`
	// CompactAt is when a turn summarises earlier turns: a percentage of
	// the window (1-100) or "off" (see chat.ParseCompactAt).
	CompactAt json.RawMessage `json:"compactAt,omitempty"`
}

func (s *Server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	// Requests and notifications that came after it wait until now.
	defer s.initOnce.Do(func() { close(s.initDone) })
	var p initializeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("initialize: %s", argError(err))
	}
	var opts InitOptions
	if len(raw) > 0 && len(p.InitializationOptions) > 0 && string(p.InitializationOptions) != "null" {
		if err := json.Unmarshal(p.InitializationOptions, &opts); err != nil {
			return nil, invalidParams("initializationOptions: %s", argError(err))
		}
	}

	viewIdle, err := parseViewIdle(opts.ViewIdleMs)
	if err != nil {
		return nil, invalidParams("initializationOptions.%s", err)
	}
	compactAt, err := chat.ParseCompactAt(opts.CompactAt)
	if err != nil {
		return nil, invalidParams("initializationOptions.%s", err)
	}

	enc := buffer.UTF16
	for _, e := range p.Capabilities.General.PositionEncodings {
		if e == string(protocol.PositionEncodingKindUTF8) {
			enc = buffer.UTF8
		}
	}

	dataDir := s.cfg.DataDir
	if opts.DataDir != "" {
		dataDir = opts.DataDir
	}
	if dataDir == "" {
		return nil, errors.New("no data directory: pass --data-dir, set CTXLS_DATA_DIR or initializationOptions.dataDir")
	}
	store, err := backend.Open(ctx, dataDir, s.cfg.Store)
	if err != nil {
		if s.cfg.Store != "" {
			which := "cannot open the PostgreSQL session store " + backend.RedactDSN(s.cfg.Store)
			if u := chat.StoreError(err); errors.Is(u, chat.ErrStoreUnreachable) {
				// Which store, and that it cannot be reached (not the driver's words).
				s.log.Warn("store unreachable", "store", backend.RedactDSN(s.cfg.Store), "err", err)
				return nil, jsonrpc2.NewError(RequestFailed, which+": "+u.Error())
			}
			return nil, fmt.Errorf("%s: %w", which, err)
		}
		return nil, fmt.Errorf("cannot open the session store in %s: %w", dataDir, err)
	}

	prov, err := chat.ParseProvider(opts.Provider)
	if err != nil {
		store.Close()
		return nil, invalidParams("initializationOptions.%s", err)
	}
	if opts.StorageSoftLimitMB < 0 {
		store.Close()
		return nil, invalidParams("initializationOptions.storageSoftLimitMB is %d; want a whole number of MiB, at least 1 (or 0 for the default)", opts.StorageSoftLimitMB)
	}
	var current string
	if opts.Session != "" {
		if _, err := store.Get(ctx, opts.Session); err != nil {
			s.log.Warn("initializationOptions.session not resumed", "session", opts.Session, "err", err)
		} else {
			current = opts.Session
		}
	}

	s.mu.Lock()
	s.enc = enc
	s.roots = rootsOf(p)
	s.store = store
	s.current = current
	s.resumeAtInit = current
	s.provider = s.cfg.Provider.Merge(prov)
	s.clientWorkDone = p.Capabilities.Window.WorkDoneProgress
	s.storageLimitMB = opts.StorageSoftLimitMB
	s.compactAt = compactAt
	s.clientInfo = clientInfoText(p.ClientInfo.Name, p.ClientInfo.Version)
	s.envOverride = session.CleanEnvHint(opts.EnvHint)
	s.engine = &chat.Engine{Store: store, Buffers: s.docs, Log: s.log}
	s.turns = &turn.Service{Engine: s.engine, Log: s.log}
	s.turns.Subscribe(s.lateEvent)
	if current != "" {
		s.resumed[current] = true
	}
	s.mu.Unlock()
	s.view.setIdle(viewIdle)
	s.startWatch(store)
	s.log.Info("initialized", "encoding", enc, "dataDir", dataDir, "roots", len(s.roots))

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
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: command.IDs()},
		},
		ServerInfo: protocol.ServerInfo{Name: "ctxls", Version: protocol.NewOptional(s.cfg.Version)},
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
func uriPath(u string) (string, bool) { return session.PathFromURI(u) }

func (s *Server) onInitialized(ctx context.Context) {
	s.mu.Lock()
	id := s.resumeAtInit
	s.resumeAtInit = ""
	store := s.store
	s.mu.Unlock()
	if id == "" || store == nil {
		return
	}
	s.recordEnv(ctx, store, id)
	r, err := s.resumeState(ctx, store, id)
	if err != nil {
		s.log.Warn("resume at start failed", "session", id, "err", err)
		return
	}
	s.notifyContext(ctx, id, "resume", r.Context, nil, nil, r.MissingFiles)
	s.enforceStorage(ctx, store)
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
	var added, removed []string
	s.mu.Lock()
	roots := s.roots[:0:0]
outer:
	for _, r := range s.roots {
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
	s.roots = roots
	s.mu.Unlock()
	s.noteWorkspaceChange(ctx, added, removed)
	return nil
}

// storeOrErr returns the store; requests are admitted only after initialize,
// but initialize may have failed to open it.
func (s *Server) storeOrErr() (session.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the session store is not open: initialize did not complete")
	}
	return s.store, nil
}
