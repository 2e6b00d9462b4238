// Package turn runs one chat turn for the service (package service): it
// makes the turn's session when it has none, records where it is used,
// runs the turn on chat.Engine and hands back a stream of typed events that
// ends with exactly one final event: Done, Cancelled or Failed. The service
// checks the turn's arguments and resolves its provider before, and sees
// every event on its way (Request.Observe): the stream is the one relay
// from the engine to a door, which reads it through the service's names
// (service.Turn, service.TextDelta, ...), never this package's.
package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// Runner starts turns. It is safe for concurrent use.
type Runner struct {
	Engine *chat.Engine
	Log    *slog.Logger
}

// Request is one turn as the service asks for it: the engine's turn, its
// provider resolved and its files absolute. SessionID "" makes a new
// session (Turn.Created); Session, when set, is SessionID's session as just
// read, to spare a read.
type Request struct {
	chat.TurnSpec
	// Model is the model for this turn, recorded as the session's model
	// from now on ("": the session's, else the provider's).
	Model string
	// Observe, if set, sees every event before the stream does, on the
	// turn's goroutine and in order (the final event too): it returns the
	// event the stream carries (changed or not) and whether the stream
	// carries it at all. What the turn changed in the session (a title,
	// the context, a file) is the service's to publish, not the door's to
	// read. A title the model suggests after the stream ended comes here
	// too, on a goroutine of its own, and goes nowhere else.
	Observe func(sessionID string, ev Event) (Event, bool)
	// Ended, if set, is called once the final event was taken.
	Ended func(final Event)
}

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
// answer is kept as cancelled, and the final event is Cancelled.
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

// Start checks the request, makes its session when it has none, and
// starts the turn. Errors before the turn starts are returned here, with
// nothing stored: session.ErrInvalid (bad arguments), session.ErrNotFound
// (no such session). Everything after, including a busy session
// (chat.ErrBusy), arrives as the final event.
func (s *Runner) Start(ctx context.Context, r Request) (*Turn, error) {
	if strings.TrimSpace(r.Message) == "" {
		return nil, fmt.Errorf("%w: message is required", session.ErrInvalid)
	}
	store := s.Engine.Store
	sess := r.Session
	if r.SessionID != "" && (sess == nil || sess.ID != r.SessionID) {
		var err error
		if sess, err = store.Get(ctx, r.SessionID); err != nil {
			return nil, err
		}
	}
	t := &Turn{SessionID: r.SessionID, Provider: r.Provider, events: make(chan Event)}
	if t.SessionID == "" {
		var err error
		if sess, err = store.Create(ctx, ""); err != nil {
			return nil, err
		}
		t.SessionID, t.Created = sess.ID, true
	}
	if r.Model != "" {
		var err error
		if sess, err = store.SetModel(ctx, t.SessionID, r.Model); err != nil {
			return nil, err
		}
	}
	s.record(ctx, t.SessionID, r, sess)
	ctx, t.cancel = context.WithCancel(ctx)
	ct := r.TurnSpec
	ct.SessionID, ct.Session = t.SessionID, sess
	st := &stream{id: t.SessionID, observe: r.Observe, ch: t.events}
	go func() {
		defer t.cancel()
		var pc panics.Catcher
		var final Event
		pc.Try(func() { final = s.run(ctx, ct, st) })
		if r := pc.Recovered(); r != nil {
			s.Log.Error("turn panicked", "session", ct.SessionID, "panic", r.Value)
			final = Failed{Err: fmt.Errorf("internal error: %v", r.Value)}
		}
		final = st.end(final)
		if r.Ended != nil {
			r.Ended(final)
		}
	}()
	return t, nil
}

// record stores where and from what the session is used; a failure is
// logged, the hints are advisory.
//
// sess is the session as read before (nil: unknown); what it holds
// already is not written again, so a turn in a session used where it was
// used before writes nothing here.
func (s *Runner) record(ctx context.Context, id string, r Request, sess *session.Session) {
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
func (s *Runner) run(ctx context.Context, t chat.TurnSpec, st *stream) Event {
	res, err := s.Engine.Run(ctx, t, st)
	if res != nil && (res.Usage.PromptTokens > 0 || res.Usage.CompletionTokens > 0) {
		st.send(TokenUsage{Usage: res.Usage, Window: t.Provider.ContextWindow})
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
