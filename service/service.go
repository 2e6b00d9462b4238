// Package service is every operation ctxls offers, implemented once below
// the doors. Package api declares the operations (api.Interface, generated
// from api.Commands) with their wire types; a Service implements them over
// the session store, the turn engine and the editor's documents. The LSP door
// routes workspace/executeCommand to it through api.Dispatch, the ACP door's
// methods and slash commands and the CLI's subcommands call the same
// methods, so provider resolution, the session-model fallback, the delete
// order, the title rules and the error kinds exist once.
//
// A Service is one connection's (an editor's, an ACP client's, one CLI
// run's): it holds that connection's provider settings, workspace folders,
// current session and the sessions it resumed. Every error it returns is an
// *api.Error with its kind. It is all a door imports of the domain: a
// turn's events, the tools' door contract and the store's administration
// are re-exported here (turnevents.go, doors.go, storeadmin.go).
package service

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/search"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
	"github.com/ctxls/ctxls/tool"
	"github.com/ctxls/ctxls/turn"
)

// Config is what a door opens a Service with.
type Config struct {
	// DataDir is the data directory (the SQLite store, the session
	// folders or their mirror).
	DataDir string
	// Store is the session store's PostgreSQL URL; "" for SQLite in
	// DataDir.
	Store string
	Log   *slog.Logger
	// Docs are the editor's open documents (the LSP door's); nil for a
	// door without them.
	Docs *buffer.Set
	// Provider is the door's model configuration; empty fields come from
	// the environment when a provider is needed.
	Provider api.Provider
	// StorageSoftLimitMB is the command line's soft limit of the data
	// directory (0: session.DefaultSoftLimitMB); SetStorageLimitMB
	// overrides it.
	StorageSoftLimitMB int
	// Getenv reads the provider's environment (default os.Getenv); Probe
	// reports whether a local Ollama answers (default chat.ProbeOllama).
	// Tests replace them.
	Getenv func(string) string
	Probe  func() bool
	// NoEnvHint: record no environment line in the sessions used (the CLI,
	// which leaves the editor's in place).
	NoEnvHint bool
	// ProviderWhere is the door's sentence of the no-provider and
	// no-model errors: where its user sets the variables those name (the
	// environment the editor or agent starts ctxls in, the editor's
	// settings, the command line's flags), in the user's words; "" adds
	// none.
	ProviderWhere string
	// Version is ctxls's version, as told to MCP servers.
	Version string
	// Opened, if set, is called once when Start's store open ends (and
	// the empty sessions' clean-up that follows it), with the open's
	// error, on a goroutine of its own. The daemon's command hands back
	// its start-up pages then (procmem.ReleaseImage).
	Opened func(error)
}

// Service implements api.Interface for one connection. It is safe for
// clientHint is what a client says of itself for a session's envHint.
type clientHint struct {
	name     string // "<name> <version>"
	override string // an envHint the client gave verbatim
}

// connSettings are the settings a client gives its connection (guarded
// by Service.mu).
type connSettings struct {
	compactAt      int  // 0: the default
	noInstructions bool // projectInstructions off
	editorMB       int  // the client's storage soft limit in MiB; 0: the command line's
}

// tidyJobs are the background clean-ups of a Service (tidy.go).
type tidyJobs struct {
	wg     sync.WaitGroup
	closed bool
}

// concurrent use.
type Service struct {
	questions questionCache // listed sessions' questions (questionsOf)

	store   session.Store
	opening *backend.Pending // the store while Start opens it; nil after Open or New
	engine  *chat.Engine
	turns   *turn.Runner
	docs    *buffer.Set
	log     *slog.Logger
	getenv  func(string) string
	probe   func() bool
	cliMB   int
	noEnv   bool
	box     *tool.Box // the model's tools: the door's asker and edit door, the MCP servers

	// mu guards the connection's state below; held only to read or swap
	// it, never across I/O.
	mu            sync.Mutex
	provider      api.Provider
	providerWhere string          // Config.ProviderWhere
	roots         []string        // workspace folders, absolute; the first is the session's workspace
	client        clientHint      // the client, for envHint
	current       string          // the current session ("" if none): what an empty sessionId means
	lostCurrent   bool            // the current session was deleted; say so when the next is made
	resumed       map[string]bool // sessions resumed since their last turn
	held          map[string]bool // sessions this connection made, resumed or used: never pruned as empty
	conn          connSettings    // what the client set for this connection
	pendingView   []string        // the editor's view captured before any session existed

	// currentMu serialises "make a session on first need", so two
	// concurrent operations do not make two. Taken before mu.
	currentMu sync.Mutex
	// storage is when the data directory was last measured (storage.go).
	storage storageCheck

	// tidying counts the removals of empty sessions under way (tidy.go);
	// Close waits for them, and none starts once tidyClosed (guarded by
	// mu) is set.
	tidy tidyJobs // the background clean-ups (tidy.go)

	names search.NameCache // the workspace's files for ctxls.workspace.files (mentions.go)

	subs subscribers // the doors' event handlers (events.go)

	// titles orders the announcements of a session's title (events.go):
	// one that reads the store holds it from the read to the publish, so a
	// title stored meanwhile is announced after, never before, the stale one.
	titles sync.Mutex
}

var _ api.Interface = (*Service)(nil)

// Open opens the store cfg names and returns the connection's service.
func Open(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.DataDir == "" {
		return nil, errNoDataDir()
	}
	store, err := backend.Open(ctx, cfg.DataDir, cfg.Store)
	if err != nil {
		return nil, openError(cfg, err)
	}
	s := New(store, cfg)
	s.tidyEmpty(ctx)
	return s, nil
}

// Start returns the connection's service at once, with its store opening
// on a goroutine of its own (backend.Start): a door answers its client's
// initialize without waiting for the store, and the first operation that
// needs the store waits for the rest of the open instead. If the open
// fails, every such operation fails with the error Open would have
// returned; WaitStore reports it.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.DataDir == "" {
		return nil, errNoDataDir()
	}
	p := backend.Start(ctx, cfg.DataDir, cfg.Store, func(err error) error { return openError(cfg, err) })
	s := New(p, cfg)
	s.opening = p
	tidied := s.tidyLater()
	if cfg.Opened != nil {
		go func() {
			_, err := p.Wait(context.Background())
			<-tidied // start-up's clean-up too: its pages are start-up's
			cfg.Opened(err)
		}()
	}
	return s, nil
}

// WaitStore waits until the store is open (see Start) and returns the
// open's error, or ctx's if it ends first.
func (s *Service) WaitStore(ctx context.Context) error {
	if s.opening == nil {
		return nil
	}
	_, err := s.opening.Wait(ctx)
	return err
}

func errNoDataDir() error {
	return api.Errorf(api.KindInvalidArgument, "no data directory: pass --data-dir, set CTXLS_DATA_DIR or initializationOptions.dataDir")
}

// openError is the error of a store that cannot be opened: which store,
// and, for a PostgreSQL store that cannot be reached, that (not the
// driver's words).
func openError(cfg Config, err error) error {
	if cfg.Store == "" {
		return api.Errorf(api.KindStoreUnavailable, "cannot open the session store in %s: %w", cfg.DataDir, err)
	}
	which := "cannot open the PostgreSQL session store " + backend.RedactDSN(cfg.Store)
	if u := storeError(err); errors.Is(u, chat.ErrStoreUnreachable) {
		if cfg.Log != nil {
			cfg.Log.Warn("store unreachable", "store", backend.RedactDSN(cfg.Store), "err", err)
		}
		return api.Errorf(api.KindStoreUnavailable, "%s: %s", which, u.Error())
	}
	return api.Errorf(api.KindStoreUnavailable, "%s: %w", which, err)
}

// New returns the service of a store already open; Close closes it. A nil
// store serves ChatPreview of a new session alone (the CLI's dry run, which
// opens no store).
func New(store session.Store, cfg Config) *Service {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	docs := cfg.Docs
	if docs == nil {
		docs = buffer.NewSet(0)
	}
	s := &Service{
		store: store, docs: docs, log: log, getenv: cfg.Getenv, probe: cfg.Probe, cliMB: cfg.StorageSoftLimitMB, noEnv: cfg.NoEnvHint,
		provider: cfg.Provider, providerWhere: cfg.ProviderWhere, resumed: map[string]bool{},
		held: map[string]bool{},
	}
	if s.getenv == nil {
		s.getenv = os.Getenv
	}
	if s.probe == nil {
		s.probe = chat.ProbeOllama
	}
	var toolStore tool.Store
	if store != nil {
		toolStore = store
	}
	s.box = tool.New(tool.BoxConfig{Store: toolStore, Log: log, Getenv: s.getenv, Version: cfg.Version, Roots: s.Roots,
		Notify:  func(m string) { s.publish(Notice{Warning: true, Message: m}) },
		KeyEnvs: s.keyEnvs})
	s.engine = &chat.Engine{Store: store, Buffers: docs, Log: log, Unavailable: backend.IsUnavailable}
	s.turns = &turn.Runner{Engine: s.engine, Log: log}
	return s
}

// Close stops the background work (model titles) and closes the store.
func (s *Service) Close() error {
	s.mu.Lock()
	s.tidy.closed = true
	s.mu.Unlock()
	s.tidy.wg.Wait()
	s.engine.Close()
	s.box.Close()
	if s.store == nil {
		return nil
	}
	return s.store.Close()
}

// Tools is what the door plugs into the connection's tools.
func (s *Service) Tools() ToolPlugs { return s.box }

// DataDir is the store's data directory.
func (s *Service) DataDir() string { return s.store.DataDir() }

// WaitBackground waits up to timeout for the background jobs started so
// far (model titles); it reports whether they finished.
func (s *Service) WaitBackground(ctx context.Context, timeout time.Duration) bool {
	return s.engine.WaitBackground(ctx, timeout)
}

// SetProvider sets the connection's provider configuration.
func (s *Service) SetProvider(p api.Provider) {
	s.mu.Lock()
	s.provider = p
	s.mu.Unlock()
}

// keyEnvs is the connection's provider's own key variable (its apiKeyEnv),
// kept from its MCP servers as the default ones are.
func (s *Service) keyEnvs() []string {
	if k := s.currentProvider().APIKeyEnv; k != "" {
		return []string{k}
	}
	return nil
}

// currentProvider is the connection's provider configuration, unresolved.
func (s *Service) currentProvider() api.Provider {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provider
}

// SetRoots sets the workspace folders (absolute paths); the MCP servers
// running are told their roots changed.
func (s *Service) SetRoots(roots []string) {
	s.mu.Lock()
	s.roots = roots
	s.mu.Unlock()
	if s.box != nil {
		s.box.RootsChanged()
	}
}

// Roots returns the workspace folders.
func (s *Service) Roots() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roots
}

// SetClient records the client's name and version for envHint, and an
// envHint it gives verbatim ("" for none).
func (s *Service) SetClient(nameVersion, envOverride string) {
	s.mu.Lock()
	s.client.name, s.client.override = session.CleanEnvHint(nameVersion), session.CleanEnvHint(envOverride)
	s.mu.Unlock()
}

// SetCompactAt sets when turns compact, in percent of the window (0: the
// default).
func (s *Service) SetCompactAt(at int) {
	s.mu.Lock()
	s.conn.compactAt = at
	s.mu.Unlock()
}

// SetProjectInstructions turns on or off giving the model the project's
// instructions files (AGENTS.md and the like; on by default), from the
// next turn.
func (s *Service) SetProjectInstructions(on bool) {
	s.mu.Lock()
	s.conn.noInstructions = !on
	s.mu.Unlock()
}

// instructionsOff reports whether the project's instructions are off.
func (s *Service) instructionsOff() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.noInstructions
}

// SetStorageLimitMB sets the client's soft limit of the data directory in
// MiB (0: the command line's, else the default).
func (s *Service) SetStorageLimitMB(mb int) {
	s.mu.Lock()
	s.conn.editorMB = mb
	s.mu.Unlock()
}

// envHint is the connection's environment line for sessions used in roots
// (nil: the workspace folders): the client's override verbatim, else the
// client, the folders and the git branch; "" with Config.NoEnvHint.
func (s *Service) envHint(roots []string) string {
	if s.noEnv {
		return ""
	}
	s.mu.Lock()
	override, client := s.client.override, s.client.name
	if roots == nil {
		roots = s.roots
	}
	s.mu.Unlock()
	if override != "" {
		return override
	}
	return session.EnvHint(client, roots)
}

// recordEnv stores the connection's envHint in a session it uses; the
// store writes only when it changed. A failure is logged: it is advisory.
func (s *Service) recordEnv(ctx context.Context, id string, roots []string) {
	if id == "" || s.noEnv {
		return
	}
	if _, err := s.store.SetEnvHint(ctx, id, s.envHint(roots)); err != nil {
		s.log.Info("envHint not recorded", "session", id, "err", err)
	}
}

// Use records that a session is used in the folder cwd (ACP's session/new,
// load, resume): its workspace and envHint. resumed marks its next turn as
// the first after a resume (the reminder goes in).
func (s *Service) Use(ctx context.Context, id, cwd string, resumed bool) error {
	if _, err := s.store.Get(ctx, id); err != nil {
		return fail(err)
	}
	if err := s.store.SetWorkspace(ctx, id, filepath.Clean(cwd)); err != nil {
		s.log.Info("workspace not recorded", "session", id, "err", err)
	}
	s.recordEnv(ctx, id, []string{cwd})
	s.mu.Lock()
	s.held[id] = true
	if resumed {
		s.resumed[id] = true
	} else {
		delete(s.resumed, id)
	}
	s.mu.Unlock()
	return nil
}

// Current is the connection's current session id ("" if none).
func (s *Service) Current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// SetCurrent makes id the current session and, with resumed, marks its
// next turn as the first after a resume (initializationOptions.session).
func (s *Service) SetCurrent(id string, resumed bool) {
	s.mu.Lock()
	s.current = id
	if id != "" {
		s.held[id] = true
	}
	if resumed && id != "" {
		s.resumed[id] = true
	}
	s.mu.Unlock()
}

// isResumed reports whether id was resumed since its last turn.
func (s *Service) isResumed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id != "" && s.resumed[id]
}

// takeResumed clears id's resumed mark.
func (s *Service) takeResumed(id string) {
	s.mu.Lock()
	delete(s.resumed, id)
	s.mu.Unlock()
}

// sessionOf resolves the session an operation works on: the id given,
// else the current session. With create set, a connection without one gets
// a new session ("made on first need"); without it, nil is returned.
func (s *Service) sessionOf(ctx context.Context, id string, create bool) (*session.Session, error) {
	if id != "" {
		return s.store.Get(ctx, id)
	}
	s.currentMu.Lock()
	defer s.currentMu.Unlock()
	if cur := s.Current(); cur != "" {
		sess, err := s.store.Get(ctx, cur)
		if err == nil {
			return sess, nil
		}
		if !errors.Is(err, session.ErrNotFound) {
			return nil, err
		}
		// Deleted by another process: forget it.
		s.log.Info("current session no longer exists", "session", cur)
		s.forgetCurrent(cur)
	}
	if !create {
		return nil, nil
	}
	sess, err := s.store.Create(ctx, "")
	if err != nil {
		return nil, err
	}
	s.adoptNew(sess.ID)
	return s.madeWithDefaults(ctx, sess), nil
}

// existing is sessionOf for operations that need a session and never make
// one: no id and no current session is an invalid argument naming what.
func (s *Service) existing(ctx context.Context, id, what string) (*session.Session, error) {
	sess, err := s.sessionOf(ctx, id, false)
	if err == nil && sess == nil {
		err = api.Errorf(api.KindInvalidArgument, "%s: no sessionId given and no current session", what)
	}
	return sess, err
}

// adoptNew makes a session made on first need (here or by a turn) the
// current one, and says so when the last one was deleted.
func (s *Service) adoptNew(id string) {
	s.log.Info("session created on first need", "session", id)
	s.mu.Lock()
	s.current = id
	s.held[id] = true
	announce := s.lostCurrent
	s.lostCurrent = false
	s.mu.Unlock()
	if announce {
		s.publish(Notice{Message: "the current session was deleted; this starts a new session"})
	}
}

// forgetCurrent clears the current session if it is id, because id was
// deleted: the next session made on first need says it is a new one.
func (s *Service) forgetCurrent(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == id {
		s.current = ""
		s.lostCurrent = true
	}
}

// Forget drops what the connection and the engine keep about a session
// deleted elsewhere (the live updates of another daemon's delete): a turn
// running in it ends.
func (s *Service) Forget(id string) {
	s.engine.Abort(id)
	s.forgetCurrent(id)
	s.takeResumed(id)
}

// required is the error of a missing required argument.
func required(what, field string) error {
	return api.Errorf(api.KindInvalidArgument, "%s: %s is required", what, field)
}
