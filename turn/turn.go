// Package turn is the one turn service under both front doors: the LSP
// server (package lsp) and the Agent Client Protocol agent (package acp)
// start turns here and only decode their wire, adapt the events to it and
// map errors. The service checks a turn's arguments, picks or makes its
// session, resolves the provider (which may dial a local Ollama), runs the
// turn on chat.Engine and hands back a stream of typed events that ends with
// exactly one final event: Done, Cancelled or Failed.
package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Service starts turns. It is safe for concurrent use.
type Service struct {
	Engine *chat.Engine
	Log    *slog.Logger
	// Getenv reads the provider's environment (default os.Getenv).
	Getenv func(string) string
	// Probe reports whether a local Ollama answers (default
	// chat.ProbeOllama); tests replace it.
	Probe func() bool

	mu   sync.Mutex
	subs map[int]func(Event)
	next int
}

// Request is one turn as a front door asks for it.
type Request struct {
	// SessionID names the session; "" makes a new one (Turn.Created).
	SessionID string
	Message   string
	// Files are this turn's files as the front door got them: absolute
	// paths, file:// URIs, or paths relative to the first of Roots.
	Files []string
	// Model is the model for this turn, recorded as the session's model
	// from now on ("": the session's model, else the provider's).
	Model string
	// Provider is the front door's provider configuration; empty fields
	// come from the environment.
	Provider   chat.Provider
	Roots      []string // workspace folders; the first is the session's workspace
	Candidates []string // open and recently edited files, most recent first
	Resumed    bool     // the first turn after a resume: the reminder goes in
	// Env is the session's environment line (client, folders, branch);
	// "" keeps the stored one.
	Env string
	// Buffers gives the editor's text of files for this turn (nil: the
	// engine's, the LSP client's open documents).
	Buffers chat.Buffers
	// WriteFile writes the model's output files for this turn (nil: the
	// store writes them to the disk).
	WriteFile func(ctx context.Context, path, content string) error
	// CompactAt is when the turn summarises earlier turns, in percent of
	// the window (see chat.Turn.CompactAt; 0 is the default).
	CompactAt int
	// Session is SessionID's session as the front door read it just now,
	// to spare the service a read of its own (nil: the service reads it).
	Session *session.Session
}

// ProviderError: no usable provider (nothing configured, or a setting
// wrong). Nothing was stored.
type ProviderError struct{ Err error }

func (e *ProviderError) Error() string { return e.Err.Error() }
func (e *ProviderError) Unwrap() error { return e.Err }

// Turn is a running turn.
type Turn struct {
	SessionID string
	Created   bool // the session was made for this turn
	Provider  chat.Resolved

	events chan Event
	cancel context.CancelFunc
}

// Events is the turn's stream. Read it until it is closed: the turn waits
// for each event to be taken (an editor slow to read slows the turn rather
// than filling memory), and the last event is Done, Cancelled or Failed.
func (t *Turn) Events() <-chan Event { return t.events }

// Cancel stops the turn: the stream from the provider ends, the partial
// answer is kept as interrupted, and the final event is Cancelled.
func (t *Turn) Cancel() { t.cancel() }

// Abandon cancels the turn and reads the rest of its stream on a goroutine
// of its own. A front door defers it, so a handler that returns early (a
// panic, a dead connection) never leaves the turn blocked on its stream
// with the session held busy. After the stream was read to its end it does
// nothing.
func (t *Turn) Abandon() {
	t.cancel()
	go func() {
		for range t.events {
		}
	}()
}

// Wait reads the stream to its end and returns the final event.
func (t *Turn) Wait() Event {
	var last Event
	for ev := range t.events {
		last = ev
	}
	return last
}

func (s *Service) getenv() func(string) string {
	if s.Getenv != nil {
		return s.Getenv
	}
	return os.Getenv
}

// Start checks the request, resolves its session and provider, and starts
// the turn. Errors before the turn starts are returned here, with nothing
// stored: session.ErrInvalid (bad arguments), session.ErrNotFound (no such
// session), *ProviderError. Everything after, including a busy session
// (chat.ErrBusy), arrives as the final event.
func (s *Service) Start(ctx context.Context, r Request) (*Turn, error) {
	if strings.TrimSpace(r.Message) == "" {
		return nil, fmt.Errorf("%w: message is required", session.ErrInvalid)
	}
	files := make([]string, 0, len(r.Files))
	for _, f := range r.Files {
		p, err := session.NormalizeFileItem(f, r.Roots)
		if err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	store := s.Engine.Store
	prov := r.Provider
	if r.Model != "" {
		prov.Model = r.Model
	}
	var sess *session.Session
	if r.SessionID != "" {
		var err error
		if sess = r.Session; sess == nil || sess.ID != r.SessionID {
			if sess, err = store.Get(ctx, r.SessionID); err != nil {
				return nil, err
			}
		}
		if prov.Model == "" {
			// A session with a model of its own needs none from the
			// provider (the engine prefers the session's model anyway;
			// the title model stays the provider's).
			prov.Model = sess.Meta.Model
		}
	}
	probe := s.Probe
	if probe == nil {
		probe = chat.ProbeOllama
	}
	resolved, err := chat.Resolve(prov, s.getenv(), probe)
	if err != nil {
		return nil, &ProviderError{err}
	}
	t := &Turn{SessionID: r.SessionID, Provider: resolved, events: make(chan Event)}
	if t.SessionID == "" {
		if sess, err = store.Create(ctx, ""); err != nil {
			return nil, err
		}
		t.SessionID, t.Created = sess.ID, true
	}
	if r.Model != "" {
		if sess, err = store.SetModel(ctx, t.SessionID, r.Model); err != nil {
			return nil, err
		}
	}
	s.record(ctx, t.SessionID, r, sess)
	ctx, t.cancel = context.WithCancel(ctx)
	ct := chat.Turn{
		SessionID: t.SessionID, Message: r.Message, Files: files, Resumed: r.Resumed,
		Candidates: r.Candidates, Roots: r.Roots, Provider: resolved, Buffers: r.Buffers, WriteFile: r.WriteFile,
		CompactAt: r.CompactAt, Env: r.Env, Session: sess,
	}
	st := &stream{s: s, sessID: t.SessionID, ch: t.events}
	go func() {
		defer t.cancel()
		var pc panics.Catcher
		var final Event
		pc.Try(func() { final = s.run(ctx, ct, st) })
		if r := pc.Recovered(); r != nil {
			s.Log.Error("turn panicked", "session", ct.SessionID, "panic", r.Value)
			final = Failed{Err: fmt.Errorf("internal error: %v", r.Value)}
		}
		st.end(final)
	}()
	return t, nil
}

// record stores where and from what the session is used; a failure is
// logged, the hints are advisory.
//
// sess is the session as read before (nil: unknown); what it holds
// already is not written again, so a turn in a session used where it was
// used before writes nothing here.
func (s *Service) record(ctx context.Context, id string, r Request, sess *session.Session) {
	store := s.Engine.Store
	if r.Env != "" && (sess == nil || sess.Meta.EnvHint != r.Env) {
		if _, err := store.SetEnvHint(ctx, id, r.Env); err != nil {
			s.Log.Info("envHint not recorded", "session", id, "err", err)
		}
	}
	if len(r.Roots) > 0 && (sess == nil || sess.Meta.Workspace != filepath.Clean(r.Roots[0])) {
		if err := store.SetWorkspace(ctx, id, r.Roots[0]); err != nil {
			s.Log.Info("workspace not recorded", "session", id, "err", err)
		}
	}
}

// run runs the turn and returns its final event.
func (s *Service) run(ctx context.Context, t chat.Turn, st *stream) Event {
	res, err := s.Engine.Run(ctx, t, st)
	if res != nil && (res.Usage.PromptTokens > 0 || res.Usage.CompletionTokens > 0) {
		st.send(Usage{Usage: res.Usage, Window: t.Provider.ContextWindow})
	}
	switch {
	case err == nil:
		return Done{Result: res}
	case errors.Is(err, context.Canceled) && res != nil:
		return Cancelled{Result: res}
	default:
		return Failed{Result: res, Err: err}
	}
}

// Subscribe calls f with the events that belong to no running turn: a
// title the model suggested after its turn ended. It returns the function
// that ends the subscription.
func (s *Service) Subscribe(f func(Event)) (unsubscribe func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = map[int]func(Event){}
	}
	id := s.next
	s.next++
	s.subs[id] = f
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

// Publish hands ev to the subscribers (front doors publish renames they
// make, so every adapter sees one stream of title changes).
func (s *Service) Publish(ev Event) {
	s.mu.Lock()
	subs := make([]func(Event), 0, len(s.subs))
	for _, f := range s.subs {
		subs = append(subs, f)
	}
	s.mu.Unlock()
	for _, f := range subs {
		f(ev)
	}
}
